import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { config } from '#shared/config.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { returnUnmatched } from '#shared/payments/operator.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';

const run = promisify(execFile);

/**
 * `npm run sandbox -- …` against the test run's sandbox, which delivers to the test run's service
 * (or against the sandbox at `port`).
 */
/** `npm run sandbox -- pay` of `amount` kobo into `account` under the session id of an earlier payment. */
const payUnder = (sessionId: string, account: string, amount: string) =>
  sandbox('pay', '--account', account, '--amount', amount, '--session-id', sessionId);

async function sandbox(...args: string[]) {
  return sandboxAt(new URL(config.partner.baseUrl).port, args);
}

async function sandboxAt(port: string, args: string[], extraEnv: Record<string, string> = {}) {
  const env = { ...process.env, SANDBOX_PORT: port, ...extraEnv };
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'infra/local/sandbox-cli.ts', ...args],
      { cwd: PROJECT_ROOT, env },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Runs `use` against a stand-in sandbox whose `_simulate/payment` gives `answer`, then stops it. */
async function withSandboxAnswering<T>(
  answer: Record<string, unknown>,
  use: (port: string) => Promise<T>,
): Promise<T> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await use(String((server.address() as AddressInfo).port));
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('npm run sandbox -- pay', { timeout: 60_000 }, () => {
  it('makes the sandbox sign and send payment.received, and returns once the service has credited it, once', async () => {
    const { merchant } = await aMerchant();
    const paid = await sandbox('pay', '--account', merchant.account_number, '--amount', '125000');
    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain('webhook:     200 {"status":"success","message":"Accepted"}');
    const sessionId = /session_id: +(\d+)/.exec(paid.stdout)?.[1] ?? '';
    // Credited by the time the command returns: what is pasted next (GET /balance) sees it.
    expect(paid.stdout).toContain(
      `credited:    125000 kobo to ${merchant.merchant_id}, balance after 125000 (ledger entry payment:sandbox:${sessionId})`,
    );
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(125_000);

    const replay = await payUnder(sessionId, merchant.account_number, '125000');
    expect(replay.code).toBe(0);
    expect(replay.stdout).not.toContain('Paid');
    expect(replay.stdout).toContain(`Delivered payment ${sessionId} into ${merchant.account_number} again`);
    expect(replay.stdout).toContain('the redelivery credits nothing again');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(125_000);
    // Another amount under its id is another payment, not a redelivery: said so, and kept.
    const reused = await payUnder(sessionId, merchant.account_number, '100');
    expect(reused.stdout).toContain(
      `under the id of payment ${sessionId} (credited with 125000 kobo): another payment`,
    );
    expect(reused.stdout).not.toContain('again, as a partner');
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(125_000);
  });

  it('says when a payment is kept for operators, and what its redeliveries come to: credited, still kept, or returned', async () => {
    const kept = await sandbox('pay', '--account', '0000014579', '--amount', '100');
    expect(kept.code).toBe(0);
    expect(kept.stdout).toMatch(/not credited: kept for operators \(.+\): npm run ops -- unmatched list/);
    const sessionId = /session_id: +(\d+)/.exec(kept.stdout)?.[1] ?? '';
    // The same payment again: nothing new to see, said within a few seconds.
    const again = await payUnder(sessionId, '0000014579', '100');
    expect(again.stdout).toContain(`Delivered payment ${sessionId} into 0000014579 again`);
    expect(again.stdout).toMatch(/not credited: still kept for operators \(.+\)/);
    expect(again.code).toBe(0);
    // Redelivered into a merchant's wallet, it is credited, and pay waits for it.
    const { merchant } = await aMerchant();
    const credited = await payUnder(sessionId, merchant.account_number, '100');
    expect(credited.stdout).toContain(`credited:    100 kobo to ${merchant.merchant_id}, balance after 100`);
    expect(credited.code).toBe(0);
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(100);

    // One an operator returned to its payer: its redelivery credits nothing, and pay says why.
    const other = await sandbox('pay', '--account', '0000014579', '--amount', '200');
    const otherId = /session_id: +(\d+)/.exec(other.stdout)?.[1] ?? '';
    await returnUnmatched(`sandbox:${otherId}`, { reason: 'sent back', by: 'test' });
    const afterReturn = await payUnder(otherId, merchant.account_number, '200');
    expect(afterReturn.stdout).toContain('not credited: returned to its payer by an operator');
    expect(afterReturn.code).toBe(0);
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(100);
  });

  it('pays, and says it could not check the credit, when the tables are not where it looks', async () => {
    const { merchant } = await aMerchant();
    const paid = await sandboxAt(
      new URL(config.partner.baseUrl).port,
      ['pay', '--account', merchant.account_number, '--amount', '100'],
      { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' },
    );
    // Paid, but unconfirmed: a script must not take it for a credit.
    expect(paid.code).toBe(3);
    expect(paid.stdout).toContain(
      "not checked: the service's tables in DynamoDB Local at http://127.0.0.1:9 could not be read",
    );
    await expect
      .poll(async () => (await getMerchant(merchant.merchant_id))?.balance, { timeout: 15_000 })
      .toBe(100);
  });

  it('exits 1 and says nothing is credited when the service refuses the webhook', async () => {
    // A sandbox whose webhook the service answered 401 (as one with PARTNER=paystack does).
    const paid = await withSandboxAnswering(
      {
        session_id: '100000',
        webhook_status: 401,
        webhook_response: '{"status":"error","message":"Invalid webhook signature"}',
      },
      (port) => sandboxAt(port, ['pay', '--account', '0000014579', '--amount', '100']),
    );
    expect(paid.code).toBe(1);
    expect(paid.stdout).not.toContain('Paid');
    expect(paid.stderr).toContain('the service answered 401');
    expect(paid.stderr).toContain('nothing is credited');
  });

  it('exits 3 when the service took the webhook but the credit is not seen within 15 s', async () => {
    // A sandbox that says the service answered 200 for a payment it never sent: nothing is ever
    // credited under this id, so pay waits its whole 15 s and must not call it credited.
    const sessionId = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const started = Date.now();
    const paid = await withSandboxAnswering(
      { session_id: sessionId, webhook_status: 200, webhook_response: '{"status":"success"}' },
      (port) => sandboxAt(port, ['pay', '--account', '0000014579', '--amount', '100']),
    );
    expect(paid.code).toBe(3);
    expect(paid.stdout).toContain(`session_id:  ${sessionId}`);
    expect(paid.stdout).toContain('not credited within 15 s');
    expect(paid.stdout).not.toContain('credited:');
    expect(Date.now() - started).toBeGreaterThanOrEqual(15_000);
  });

  it('refuses bad arguments with exit code 2', async () => {
    expect((await sandbox('pay', '--account', '123', '--amount', '100')).code).toBe(2);
    expect((await sandbox('pay', '--account', '0000014579', '--amount', '1.5')).code).toBe(2);
    // The sandbox itself takes any safe integer: these are refused here, before anything is sent.
    for (const amount of ['0', '00', '1000000000000000']) {
      const refused = await sandbox('pay', '--account', '0000014579', '--amount', amount);
      expect([refused.code, refused.stderr], amount).toEqual([
        2,
        expect.stringContaining('--amount must be a positive whole number of kobo'),
      ]);
    }
    expect((await sandbox('refund')).code).toBe(2);
    // A session id the sandbox would not deliver under (it would be kept under the body's hash).
    expect(
      (await sandbox('pay', '--account', '0000014579', '--amount', '100', '--session-id', '')).code,
    ).toBe(2);
    expect(
      (await sandbox('pay', '--account', '0000014579', '--amount', '100', '--session-id', 'x'.repeat(93)))
        .code,
    ).toBe(2);
    // Nor one the service would keep for operators: its reference payment:<id> must stay readable.
    for (const id of ['a/b', 'S\u202Eevil', 'S\u001b[2J'])
      expect(
        (await sandbox('pay', '--account', '0000014579', '--amount', '100', '--session-id', id)).code,
      ).toBe(2);
  });
});
