import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockFileOf } from '#infra/local/data-lock.ts';
import { freePort } from '#infra/local/process.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';
import { startReceiver } from '#test/support/receiver.ts';

/**
 * `npm run paystack:stand-in`, which the README's "Paystack (`PARTNER=paystack`)" section offers for running
 * `npm start` against Paystack with no Paystack account: the stand-in on its port, its events signed
 * to the gateway's /webhooks/paystack, and payments typed on its standard input.
 */
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let child: ChildProcessWithoutNullStreams;
let output = '';
let url = '';
let secretKey = '';

beforeAll(async () => {
  receiver = await startReceiver();
  const port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', 'test/support/paystack-stand-in-cli.ts'], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      PAYSTACK_STAND_IN_PORT: String(port),
      PORT: new URL(receiver.url).port,
      // Given to run beside another npm start: the command it prints repeats them.
      DYNAMODB_PORT: '8801',
      COGNITO_PORT: '9230',
    },
  });
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const deadline = Date.now() + 30_000;
  while (!output.includes('Commands') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (!output.includes('Commands')) throw new Error(`the stand-in did not start: ${output}`);
  url = /Paystack stand-in at (\S+)/.exec(output)?.[1] ?? '';
  secretKey = /PAYSTACK_SECRET_KEY=(\S+)/.exec(output)?.[1] ?? '';
}, 60_000);

afterAll(async () => {
  child.kill();
  await receiver.close();
});

const paystack = async (path: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${secretKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await response.json()) as { data: Record<string, unknown> };
};
const type = async (line: string, expected: string) => {
  const before = output.length;
  child.stdin.write(`${line}\n`);
  await expect.poll(() => output.slice(before), { timeout: 15_000 }).toContain(expected);
};

describe('npm run paystack:stand-in', { timeout: 60_000 }, () => {
  it('prints how to start the service against it, and sends a typed payment signed to the gateway', async () => {
    expect(output).toContain(
      `DATA_DIR=.data-paystack PORT=${new URL(receiver.url).port} DYNAMODB_PORT=8801 COGNITO_PORT=9230 PARTNER=paystack PAYSTACK_BASE_URL=${url}`,
    );
    expect(secretKey).toMatch(/^sk_test_/);
    // A wallet, as the service opens one: a customer, then a dedicated account.
    const customer = await paystack('/customer', { email: 'cli@example.ng' });
    const account = await paystack('/dedicated_account', {
      customer: customer.data.customer_code,
      preferred_bank: 'wema-bank',
    });
    const accountNumber = String(account.data.account_number);

    await type(`pay ${accountNumber} 75000`, 'charge.success sent: the service answered 200');
    const [event] = receiver.received;
    expect(event?.headers['x-paystack-signature']).toBe(
      createHmac('sha512', secretKey)
        .update(event?.body ?? '')
        .digest('hex'),
    );
    expect(JSON.parse(event?.body ?? '{}')).toMatchObject({
      event: 'charge.success',
      data: { amount: 75000, channel: 'dedicated_nuban', currency: 'NGN' },
    });

    // A Pay with Transfer charge takes only its amount: another is refused, as Paystack does.
    const charge = await paystack('/charge', {
      email: 'payer@example.ng',
      amount: 20_000,
      bank_transfer: { account_expires_at: new Date(Date.now() + 3_600_000).toISOString() },
    });
    const chargeAccount = String(charge.data.account_number);
    await type(`pay ${chargeAccount} 15000`, 'bank.transfer.rejected sent: the service answered 200');
    await type(`pay ${chargeAccount} 20000`, 'charge.success sent: the service answered 200');
    expect(receiver.received.map((request) => JSON.parse(request.body).event)).toEqual([
      'charge.success',
      'bank.transfer.rejected',
      'charge.success',
    ]);

    await type('pay 0000000000 100', 'Refused: no wallet or virtual account 0000000000');
    await type('pay 12 100', 'Commands');
    await type('problems', 'none');
    child.stdin.write('quit\n');
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(receiver.received).toHaveLength(3);
  });

  it("warns when the DATA_DIR it would give the service is a running npm start's (a sandbox's, exported)", async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'naira-stand-in-'));
    // This test's process stands for the running npm start that holds the folder.
    writeFileSync(path.join(folder, lockFileOf(process.pid)), '');
    const held = spawn(process.execPath, ['--import', 'tsx', 'test/support/paystack-stand-in-cli.ts'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, PAYSTACK_STAND_IN_PORT: String(await freePort()), DATA_DIR: folder },
    });
    let printed = '';
    held.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8');
    });
    try {
      await expect.poll(() => printed, { timeout: 30_000 }).toContain('Commands');
      expect(printed).toContain(`${folder} is in use by a running npm start, process ${process.pid}`);
      expect(printed).not.toContain('a data folder of its own');
    } finally {
      held.kill();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
