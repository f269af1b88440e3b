import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { localCredentials } from '#infra/local/process.ts';
import { deliverWebhook, nipSessionId, paymentEvent } from '#infra/local/sandbox-partner.ts';
import { TABLES } from '#shared/definitions/tables.ts';
import { groupAlive, type RunningService, startNpmStart } from '#test/support/npm-start.ts';

/**
 * API.md §11: a 200 from the partner webhook means durably queued, locally too. A burst of signed
 * payments, the whole `npm start` process group SIGKILLed mid-burst, a restart on the same data
 * folder: every acknowledged payment is credited, exactly once.
 */
const TABLE_PREFIX = 'crash-test-';
const BURST = 240;
const SENDERS = 8;
const KILL_AFTER_ACKNOWLEDGED = 120;
const env = {
  TABLE_PREFIX,
  PARTNER_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
};

const dataDir = mkdtempSync(path.join(tmpdir(), 'naira-crash-'));
const running: RunningService[] = [];
afterAll(async () => {
  for (const service of running) await service.crash();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Payment {
  session: string;
  amount: number;
}

/**
 * Sends the payments with a few concurrent senders until the burst is done or the service is gone;
 * calls `onAcknowledged` after each 200. Resolves with the payments answered 200.
 */
async function burst(
  target: { url: string; wallet: string; secret: string },
  payments: Payment[],
  onAcknowledged: (n: number) => void,
) {
  const acknowledged: Payment[] = [];
  let next = 0;
  let gone = false;
  const sender = async () => {
    while (!gone && next < payments.length) {
      const payment = payments[next++] as Payment;
      const event = paymentEvent({
        account_number: target.wallet,
        amount: payment.amount,
        session_id: payment.session,
      });
      try {
        const { status } = await deliverWebhook(`${target.url}/webhooks/payments`, target.secret, event);
        if (status === 200) {
          acknowledged.push(payment);
          onAcknowledged(acknowledged.length);
        }
      } catch {
        // Connection refused or reset: the service is down, and this payment was not acknowledged.
        gone = true;
      }
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
  return acknowledged;
}

describe('npm start killed mid-burst', () => {
  it('credits every acknowledged payment exactly once after the restart', async () => {
    const first = await startNpmStart(env, { dataDir });
    running.push(first);
    const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo-merchant.json'), 'utf8')) as {
      merchant_id: string;
      account_number: string;
      api_key: string;
      api_secret: string;
    };
    // Distinct amounts: a credit of the wrong payment, or a double credit, shows in the sum.
    const payments = Array.from({ length: BURST }, (_, i) => ({
      session: nipSessionId(),
      amount: 10_000 + i,
    }));

    let killed: Promise<void> | undefined;
    const target = { url: first.url, wallet: demo.account_number, secret: env.PARTNER_WEBHOOK_SECRET };
    const acknowledged = await burst(target, payments, (n) => {
      if (n >= KILL_AFTER_ACKNOWLEDGED) killed ??= first.crash();
    });
    await killed;
    expect(killed, 'the burst ended before the kill').toBeDefined();
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER_ACKNOWLEDGED);

    const second = await startNpmStart(env, { dataDir });
    running.push(second);
    const dynamo = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: `http://127.0.0.1:${second.ports.dynamodb}`,
        region: 'us-east-1',
        credentials: localCredentials,
      }),
    );
    const entries = async () => {
      const found: { reference: string; amount: number }[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await dynamo.send(
          new QueryCommand({
            TableName: TABLE_PREFIX + TABLES.ledgerEntries.name,
            IndexName: 'by-merchant',
            KeyConditionExpression: 'merchant_id = :m',
            ExpressionAttributeValues: { ':m': demo.merchant_id },
            ExclusiveStartKey: start,
          }),
        );
        found.push(...((page.Items ?? []) as { reference: string; amount: number }[]));
        start = page.LastEvaluatedKey;
      } while (start);
      return found;
    };
    const credited = (list: { reference: string }[]) =>
      new Set(list.map((entry) => entry.reference.replace(/^payment:/, '')));

    // Processed within 60 seconds of the restart (API.md §11).
    const missing = async () => {
      const done = credited(await entries());
      return acknowledged.filter((payment) => !done.has(payment.session)).length;
    };
    await expect.poll(missing, { timeout: 60_000, interval: 500 }).toBe(0);

    const ledger = await entries();
    const sent = new Map(payments.map((payment) => [payment.session, payment.amount]));
    // Exactly once: one entry per payment, each with its own amount; nothing that was not sent.
    expect(credited(ledger).size).toBe(ledger.length);
    for (const entry of ledger) expect(entry.amount).toBe(sent.get(entry.reference.replace(/^payment:/, '')));
    // The balance is the sum of the entries. Payments sent but never acknowledged (the kill cut
    // their answer) may still be credited meanwhile: compare a ledger read between two equal
    // balance reads, so both describe the same moment.
    const balanceNow = async () => {
      const answer = await fetch(`${second.url}/balance`, {
        headers: { 'X-API-Key': demo.api_key, 'X-API-Secret': demo.api_secret },
      });
      return ((await answer.json()) as { data: { balance: number } }).data.balance;
    };
    const unexplained = async () => {
      const before = await balanceNow();
      const sum = (await entries()).reduce((total, entry) => total + entry.amount, 0);
      return before === (await balanceNow()) ? before - sum : 'still moving';
    };
    await expect.poll(unexplained, { timeout: 30_000, interval: 500 }).toBe(0);
    dynamo.destroy();

    expect(await second.stop()).toBe(0);
  }, 120_000);

  it('stops when DynamoDB Local dies under it, rather than acknowledge webhooks it cannot process', async () => {
    const service = await startNpmStart(env);
    running.push(service);
    const java = childrenOf(service.child.pid ?? 0).find((child) => /java/.test(child.command));
    if (!java)
      throw new Error(`no Java child of npm start: ${JSON.stringify(childrenOf(service.child.pid ?? 0))}`);
    process.kill(java.pid, 'SIGKILL');
    // It stops by itself, with an error status.
    await expect.poll(() => service.child.exitCode, { timeout: 20_000, interval: 200 }).toBe(1);
    expect(service.output()).toMatch(
      /DynamoDB Local exited \(SIGKILL\): the service cannot go on without it/,
    );
  }, 90_000);

  it('leaves nothing running when only its own process is killed: its children end with it', async () => {
    const service = await startNpmStart(env);
    running.push(service);
    const pid = service.child.pid ?? 0;
    const children = childrenOf(pid);
    expect(children.map((child) => child.command).join('\n')).toMatch(/java/);
    expect(children.map((child) => child.command).join('\n')).toMatch(/cognito-child/);
    process.kill(pid, 'SIGKILL');
    // DynamoDB Local and the local Cognito see their input close and end: no orphan keeps the
    // ports or the data folder from the next start.
    await expect.poll(() => groupAlive(pid), { timeout: 20_000, interval: 200 }).toBe(false);
  }, 90_000);
});

/** The processes `pid` started, with their command lines (Linux: `ps`). */
function childrenOf(pid: number): { pid: number; command: string }[] {
  const listed = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  return listed.stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .flatMap((match) => (match ? [{ pid: Number(match[1]), command: match[2] ?? '' }] : []));
}
