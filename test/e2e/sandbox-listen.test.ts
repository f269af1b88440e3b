import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/process.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { deliver, nipSessionId, paymentEvent } from '#test/support/payments.ts';

/** The test run's gateway (global setup): the one whose queue poller delivers merchant events. */
const gatewayUrl = () => process.env.WEBHOOK_GATEWAY_URL ?? '';

interface Run {
  child: ChildProcessByStdio<null, Readable, Readable>;
  exited: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
}

const running: Run[] = [];
afterEach(() => {
  // A listener a failed test left behind would keep its endpoint and the worker alive.
  for (const run of running.splice(0)) if (run.child.exitCode === null) run.child.kill('SIGKILL');
});

/** `npm run sandbox -- …` as a child process, its output collected as it arrives. */
function sandbox(...args: string[]): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/sandbox-cli.ts', ...args], {
    cwd: PROJECT_ROOT,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const run = { child, exited, stdout: () => stdout, stderr: () => stderr };
  running.push(run);
  return run;
}

/** Waits for a line of the listener's stdout, failing early (with its stderr) if it exits first. */
async function lineOf(run: Run, pattern: RegExp, timeout = 15_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const match = pattern.exec(run.stdout());
    if (match) return match;
    if (run.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(
        `no line matching ${pattern} (exit ${run.child.exitCode})\nstdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type Merchant = Awaited<ReturnType<typeof aMerchant>>;

/** A listener for a fresh merchant, once it says it is ready: its endpoint id and receiver URL. */
async function listening(merchant: Merchant) {
  const run = sandbox(
    'listen',
    '--key',
    merchant.apiKey,
    '--secret',
    merchant.apiSecret,
    '--base-url',
    gatewayUrl(),
  );
  const [, url] = await lineOf(run, /^Ready: forwarding events for \S+ to (\S+)$/m);
  const [, endpointId] = await lineOf(run, /^Webhook endpoint (we_\w+)/m);
  return { run, url: url ?? '', endpointId: endpointId ?? '' };
}

async function endpointIds(merchant: Merchant): Promise<string[]> {
  const response = await fetch(`${gatewayUrl()}/webhook-endpoints`, { headers: merchant.headers });
  const { data } = (await response.json()) as { data: { id: string }[] };
  return data.map((endpoint) => endpoint.id);
}

describe('npm run sandbox -- listen', { timeout: 60_000 }, () => {
  it('registers a receiver, prints each verified event, and deletes its endpoint on SIGTERM', async () => {
    const merchant = await aMerchant();
    const { run, endpointId } = await listening(merchant);
    expect(await endpointIds(merchant)).toEqual([endpointId]);

    await deliver(
      gatewayUrl(),
      paymentEvent({
        account_number: merchant.merchant.account_number,
        amount: 12_300,
        session_id: nipSessionId(),
      }),
    );
    const [line] = await lineOf(run, /^\S+ {2}\S+ {2}payment\.received {2}.*$/m);
    expect(line).toMatch(
      /^\d{4}-\d\d-\d\dT[\d:.]+Z {2}evt_\w+ {2}payment\.received {2}\S+ {2}12300 kobo {2}success$/,
    );

    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toContain(`deleting webhook endpoint ${endpointId}`);
    expect(await endpointIds(merchant)).toEqual([]);
  });

  it('answers 400 and prints why to a delivery whose signature does not verify', async () => {
    const { run, url } = await listening(await aMerchant());
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'evt_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
      },
      body: JSON.stringify({ id: 'evt_forged', type: 'payment.received', created_at: '', data: {} }),
    });
    expect(response.status).toBe(400);
    await lineOf(run, /rejected: signature mismatch$/m);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('exits 1 with the API message when the credentials are wrong', async () => {
    const run = sandbox('listen', '--key', 'pk_nope', '--secret', 'sk_nope', '--base-url', gatewayUrl());
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain('Could not register the receiver: Invalid API credentials (HTTP 401');
  });

  it('exits 1 naming the URL it tried when nothing answers there', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const run = sandbox('listen', '--key', 'pk_nope', '--secret', 'sk_nope', '--base-url', nowhere);
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain(`could not reach the API at ${nowhere}`);
    expect(run.stderr()).toContain('npm start');
  });

  it('refuses an unknown event type with the usage and exit 2, before it registers anything', async () => {
    const run = sandbox(
      'listen',
      '--key',
      'pk_nope',
      '--secret',
      'sk_nope',
      '--events',
      'payment.received,nope',
    );
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toContain('unknown: nope');
    expect(run.stderr()).toContain('npm run sandbox -- listen');
    expect(run.stdout()).not.toContain('Receiver listening');
    const empty = sandbox('listen', '--key', 'pk_nope', '--secret', 'sk_nope', '--events', '');
    expect(await empty.exited).toBe(2);
    expect(empty.stderr()).toContain('unknown: (none given)');
  });

  it('refuses a --port that is not a port number with the usage and exit 2, before it listens', async () => {
    for (const port of ['abc', '70000', '-1', '1.5', '0x10', '']) {
      const run = sandbox('listen', `--port=${port}`, '--key', 'pk_nope', '--secret', 'sk_nope');
      expect(await run.exited, port).toBe(2);
      expect(run.stderr(), port).toContain('--port must be a port number');
      expect(run.stdout(), port).not.toContain('Receiver listening');
    }
  });

  it('prints the usage of both commands and exits 2 without a command', async () => {
    const run = sandbox();
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toContain('npm run sandbox -- pay');
    expect(run.stderr()).toContain('npm run sandbox -- listen');
  });
});
