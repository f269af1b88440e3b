import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type RunningService, spawnInGroup, startNpmStart, startPorts } from '#test/support/npm-start.ts';
import { type PaystackStandIn, startPaystackStandIn } from '#test/support/paystack-stand-in.ts';

/**
 * `PARTNER=paystack PAYSTACK_BASE_URL=… PAYSTACK_SECRET_KEY=… npm start` runs the whole service
 * against that Paystack (API.md §9): the demo merchant's wallet is a Paystack dedicated account,
 * and Paystack's signed webhook at /webhooks/paystack credits it.
 */
let standIn: PaystackStandIn;
let service: RunningService;
beforeAll(async () => {
  standIn = await startPaystackStandIn();
  service = await startNpmStart({
    PARTNER: 'paystack',
    PAYSTACK_BASE_URL: standIn.url,
    PAYSTACK_SECRET_KEY: standIn.secretKey,
  });
  standIn.setWebhookUrl(`${service.url}/webhooks/paystack`);
}, 90_000);
afterAll(async () => {
  await service?.stop();
  await standIn?.close();
});

describe('npm start with PARTNER=paystack', () => {
  it('issues the demo wallet at Paystack and credits a dedicated-account payment from its webhook', async () => {
    const output = service.output();
    expect(output).toContain(`Paystack at ${standIn.url}`);
    expect(output).toContain(`${service.url}/webhooks/paystack`);
    // Its "Try" steps are Paystack's: no sandbox payment, which the service would refuse, and no
    // sandbox webhook secret.
    expect(output).not.toContain('npm run sandbox -- pay');
    expect(output).not.toContain('PARTNER_WEBHOOK_SECRET');
    expect(output).toContain('Paystack sends charge.success');
    // On its own data folder and ports, with Paystack, the sandbox CLI it suggests is told all of
    // them: it reads the Paystack demo merchant's keys from that folder.
    expect(output).toMatch(
      new RegExp(
        `DATA_DIR=\\S+ PARTNER=paystack PORT=${service.ports.gateway} SANDBOX_PORT=\\d+ DYNAMODB_PORT=\\d+ (TABLE_PREFIX=\\S+ )?npm run sandbox -- listen`,
      ),
    );
    const wallet = /Demo merchant \S+ \(wallet (\d{10})\)/.exec(output)?.[1];
    const key = /X-API-Key:\s+(\S+)/.exec(output)?.[1] ?? '';
    const secret = /X-API-Secret:\s+(\S+)/.exec(output)?.[1] ?? '';
    expect(wallet && standIn.dedicatedAccounts.has(wallet)).toBe(true);
    expect(standIn.requests.filter((r) => r.problems.length > 0)).toEqual([]);

    await standIn.payDedicatedAccount(wallet ?? '', 75_000);
    const balance = async () => {
      const response = await fetch(`${service.url}/balance`, {
        headers: { 'X-API-Key': key, 'X-API-Secret': secret },
      });
      return ((await response.json()) as { data: { balance: number } }).data.balance;
    };
    await expect.poll(balance, { timeout: 20_000, interval: 250 }).toBe(75_000);
  });
});

describe('npm start with PARTNER=paystack and no PAYSTACK_SECRET_KEY', () => {
  it('stops at once, naming the missing key, before it starts or writes anything', async () => {
    const dataDir = path.join(tmpdir(), `naira-start-nokey-${process.pid}`);
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const { output, exited } = spawnInGroup(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], {
      ...(await startPorts()),
      DATA_DIR: dataDir,
      PARTNER: 'paystack',
      PAYSTACK_SECRET_KEY: '',
    });
    expect(await exited).toBe(1);
    expect(output()).toContain('Could not start: PARTNER=paystack needs PAYSTACK_SECRET_KEY');
    // Not the partner call's failure, after the local services had started.
    expect(output()).not.toContain('banking partner is unavailable');
    expect(existsSync(dataDir)).toBe(false);
  });
});
