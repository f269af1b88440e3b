import { launchChromium } from '#test/browser/harness.ts';
import { median } from './stats.ts';

export interface DashboardLoad {
  /** Bytes of every response of a first load (empty cache). */
  bytes: number;
  /** Navigation start until the sign-in form can be used, median of the runs. */
  interactiveMs: number;
  runs: number;
}

/**
 * The dashboard's first load in Chromium: each run a fresh context (nothing cached), from the
 * navigation until the "Sign in" button is visible and enabled, and what was downloaded.
 */
export async function measureDashboardLoad(url: string, runs: number): Promise<DashboardLoad> {
  const browser = await launchChromium();
  const times: number[] = [];
  let bytes = 0;
  try {
    for (let run = 0; run < runs; run++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const sizes: Promise<number>[] = [];
      page.on('response', (response) =>
        sizes.push(
          response.body().then(
            (body) => body.length,
            () => 0,
          ),
        ),
      );
      const started = performance.now();
      await page.goto(url);
      const button = page.getByRole('button', { name: 'Sign in' });
      await button.waitFor({ state: 'visible' });
      if (!(await button.isEnabled())) throw new Error('the Sign in button is disabled');
      times.push(performance.now() - started);
      bytes = (await Promise.all(sizes)).reduce((sum, size) => sum + size, 0);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  return { bytes, interactiveMs: median(times), runs };
}
