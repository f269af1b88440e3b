import { type Browser, chromium, type Page } from 'playwright-core';
import type { RunningService } from '#test/support/npm-start.ts';

/**
 * What the browser tests share: Debian's Chromium (headless, nothing of its own on the network),
 * named checks printed as they run, and a watch over a page's requests and console.
 */
export const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
      '--disable-extensions',
    ],
  });
}

/** Named checks: each printed as it runs; `summary()` prints the count and gives the exit code. */
export function checks() {
  const results: { name: string; ok: boolean }[] = [];
  return {
    check(name: string, ok: boolean, detail?: string) {
      results.push({ name, ok });
      console.log(`${ok ? '✓' : '✗'} ${name}${ok || !detail ? '' : `: ${detail}`}`);
      return ok;
    },
    summary(): number {
      const failed = results.filter((result) => !result.ok).length;
      console.log(`${results.length - failed} passed, ${failed} failed`);
      return failed === 0 && results.length > 0 ? 0 : 1;
    },
  };
}

/**
 * Stops the `npm start` a browser test ran, checking it ended as the e2e tests expect: exit 0 on
 * SIGTERM, and no error logged meanwhile (a server error no page check happened to see).
 */
export async function stopChecked(
  service: RunningService,
  check: (name: string, ok: boolean, detail?: string) => boolean,
): Promise<void> {
  const code = await service.stop();
  check('npm start stops cleanly on SIGTERM (exit 0)', code === 0, `exit ${code}`);
  const errors = service
    .output()
    .split('\n')
    .filter((line) => line.includes('"level":"ERROR"'));
  check('npm start logged no error meanwhile', errors.length === 0, errors.slice(0, 5).join('\n'));
}

/** Every request a page makes, the ones that failed (or answered ≥ 400), and its console errors. */
export function watch(page: Page) {
  const requested: string[] = [];
  const failed: string[] = [];
  const consoleErrors: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('response', (answer) => {
    if (answer.status() >= 400) failed.push(`${answer.status()} ${answer.url()}`);
  });
  page.on('requestfailed', (request) =>
    failed.push(`${request.failure()?.errorText ?? 'failed'} ${request.url()}`),
  );
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));
  return {
    requested,
    failed,
    consoleErrors,
    /** Requests to any host but this machine's loopback (data:, blob: and about: are local). */
    outside: () =>
      requested.filter((url) => {
        const { protocol, hostname } = new URL(url);
        return (
          !['data:', 'blob:', 'about:'].includes(protocol) &&
          !['127.0.0.1', 'localhost', '[::1]'].includes(hostname)
        );
      }),
  };
}

/** Runs a browser test's `main` and exits with its code; an exception is one failed check. */
export function runBrowserTest(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      // Not a count: the checks before it were printed as they ran, those after it never ran.
      console.log('stopped by the error above, before its last checks: failed');
      process.exit(1);
    },
  );
}
