import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { lockFileOf } from '#infra/local/data-lock.ts';
import { recordService } from '#infra/local/service-record.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queuePair } from '#shared/aws/dead-letters.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { PAYMENT_EVENTS_QUEUE } from '#shared/definitions/queues.ts';
import { DEFAULT_TABLE_PREFIX } from '#shared/definitions/tables.ts';
import { auditMerchant, entriesOf } from '#shared/ledger/audit.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import type { PaymentReceived, QueuedEvent } from '#shared/partners/partner.ts';
import { paymentEntryId, receivePayment } from '#shared/payments/credit.ts';
import { keepUnmatched, statusOf, unmatchedOf } from '#shared/payments/unmatched.ts';
import { getTransaction, toApiTransaction } from '#shared/transactions/store.ts';
import { runCli } from '#test/support/cli.ts';
import { queuedFromSandbox } from '#test/support/events.ts';
import { aMerchant, anAccount, aPendingTransfer, fund } from '#test/support/merchants.ts';
import { anUnusableDelivery, nipSessionId, paymentEvent } from '#test/support/payments.ts';

/** Runs `npm run ops -- …` as an operator would (the test environment points it at the test stack). */
const ops = (...args: string[]) => runCli('ops', args);
const balanceOf = async (merchantId: string) => (await getMerchant(merchantId))?.balance;

/** A payment into an account nobody owns, kept for operators by the consumer's own code. */
async function anUnmatchedPayment(amount: number) {
  const event = queuedFromSandbox(
    paymentEvent({ account_number: anAccount('101', '7'), amount }),
  ) as QueuedEvent & PaymentReceived;
  expect(await receivePayment(event)).toBe('unmatched');
  const [record] = await unmatchedOf('sandbox', event.payment_id);
  if (!record) throw new Error('not kept');
  return { event, id: `${record.payment_key}#${record.variant}` };
}

interface ListedMessage {
  messageId: string;
  receiveCount: number;
  summary: string;
}
const listDlq = async () => {
  const listed = await ops('dlq', 'list', '--queue', 'payment-events', '--json');
  expect(listed.code).toBe(0);
  return JSON.parse(listed.stdout) as ListedMessage[];
};

/** A merchant funded with 20,000 kobo, and a transfer of 5,000 (fee 1,000) pending, handed over just now. */
async function aFundedPendingTransfer(prefix: string) {
  const m = (await aMerchant()).merchant.merchant_id;
  await fund(m, 20_000);
  const reference = `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
  await aPendingTransfer(m, reference, 5_000);
  return { m, reference };
}

/**
 * Moves a transfer's send an hour back (not waited for), past the time a send may still be on its
 * way; with `partner`, as sent through that partner.
 */
async function sentAnHourAgo(m: string, reference: string, partner?: string) {
  const hourAgo = Date.now() - 3600_000;
  await dynamo.send(
    new UpdateCommand({
      TableName: tableName('transactions'),
      Key: { merchant_id: m, reference },
      UpdateExpression: `SET created_at = :at, dispatched_at = :ms${partner ? ', #partner = :partner' : ''}`,
      ...(partner ? { ExpressionAttributeNames: { '#partner': 'partner' } } : {}),
      ExpressionAttributeValues: {
        ':at': new Date(hourAgo).toISOString(),
        ':ms': hourAgo,
        ...(partner ? { ':partner': partner } : {}),
      },
    }),
  );
}

describe('npm run ops', { timeout: 120_000 }, () => {
  it('credits an unmatched payment to a merchant once: the second run is refused and moves nothing', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const { event, id } = await anUnmatchedPayment(25_000);

    const listed = await ops('unmatched', 'list', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toContainEqual(
      expect.objectContaining({ id, status: 'open', amount: 25_000, kind: 'payment' }),
    );

    const credited = await ops(
      'unmatched',
      'credit',
      id,
      '--merchant',
      m,
      '--reason',
      'ticket 7: wrong account',
      '--by',
      'ada',
    );
    expect(credited.code).toBe(0);
    expect(credited.stdout).toContain(`Credited 25000 kobo to ${m}`);
    expect(await balanceOf(m)).toBe(25_000);
    expect(await entriesOf(m)).toEqual([
      expect.objectContaining({ entry_id: paymentEntryId(event), amount: 25_000 }),
    ]);
    expect(await getTransaction(m, `payment:${event.payment_id}`)).toMatchObject({
      status: 'success',
      amount: 25_000,
    });

    const again = await ops('unmatched', 'credit', id, '--merchant', m, '--reason', 'again');
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('credited already');
    expect(again.stderr).toContain('ticket 7: wrong account');
    expect(await balanceOf(m)).toBe(25_000);
    expect((await auditMerchant(m)).problems).toEqual([]);

    const resolved = JSON.parse((await ops('unmatched', 'list', '--status', 'credited', '--json')).stdout);
    expect(resolved).toContainEqual(
      expect.objectContaining({
        id,
        status: 'credited',
        merchant_id: m,
        resolved_by: 'ada',
        resolution_reason: 'ticket 7: wrong account',
      }),
    );
  });

  it("names the owner of a held payment's account, and credits another merchant only when told it is meant", async () => {
    const owner = (await aMerchant()).merchant;
    const other = (await aMerchant()).merchant.merchant_id;
    // Above MAX_PAYMENT_AMOUNT, into the owner's wallet: held for an operator.
    const event = queuedFromSandbox(
      paymentEvent({ account_number: owner.account_number, amount: 10_000_000_001 }),
    ) as QueuedEvent & PaymentReceived;
    expect(await receivePayment(event)).toBe('held');
    const [record] = await unmatchedOf('sandbox', event.payment_id);
    const id = `${record?.payment_key}#${record?.variant}`;
    expect((await ops('unmatched', 'list')).stdout).toContain(
      `10000000001 kobo  to ${owner.account_number} of ${owner.merchant_id} (wallet)`,
    );
    expect(JSON.parse((await ops('unmatched', 'list', '--json')).stdout)).toContainEqual(
      expect.objectContaining({
        id,
        account_owner: { merchant_id: owner.merchant_id, kind: 'wallet', virtual_account_reference: null },
      }),
    );
    const slip = await ops('unmatched', 'credit', id, '--merchant', other, '--reason', 'ticket 11');
    expect(slip.code).toBe(3);
    expect(slip.stderr).toContain(
      `was paid into an account of ${owner.merchant_id} (wallet), not of ${other}`,
    );
    expect(slip.stderr).toContain('--not-the-owner');
    expect(await balanceOf(other)).toBe(0);
    const meant = await ops(
      'unmatched',
      'credit',
      id,
      '--merchant',
      other,
      '--reason',
      'ticket 11: the payer meant them',
      '--not-the-owner',
    );
    expect(meant.code).toBe(0);
    expect(await balanceOf(other)).toBe(10_000_000_001);
  });

  it('lists an unreadable delivery with its body for the operator, and never credits it as it stands', async () => {
    const { merchant } = await aMerchant();
    const sessionId = nipSessionId();
    await keepUnmatched(
      anUnusableDelivery(sessionId, 'duplicate key: data.amount'),
      'duplicate key: data.amount',
    );
    const [record] = await unmatchedOf('sandbox', sessionId);
    const id = `${record?.payment_key}#${record?.variant}`;
    const listed = await ops('unmatched', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(
      `${id}  open      unusable delivery (payment.received, 2 bytes; body in --json)  `,
    );
    const [view] = (
      JSON.parse((await ops('unmatched', 'list', '--json')).stdout) as { id: string; delivery: unknown }[]
    ).filter((listedView) => listedView.id === id);
    expect(view).toMatchObject({
      kind: 'unusable_delivery',
      amount: null,
      delivery: {
        partner_event: 'payment.received',
        body: '{}',
        body_bytes: 2,
        body_sha256: record?.event.type === 'DeliveryUnusable' ? record.event.body_sha256 : 'not kept',
      },
    });
    const refused = await ops('unmatched', 'credit', id, '--merchant', merchant.merchant_id, '--reason', 'x');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('who must deliver it again, or mark it returned');
    expect(await balanceOf(merchant.merchant_id)).toBe(0);
  });

  it('marks an unmatched payment returned without moving money', async () => {
    const { merchant } = await aMerchant();
    const { id } = await anUnmatchedPayment(9_000);
    const returned = await ops('unmatched', 'return', id, '--reason', 'refunded by the bank, ticket 8');
    expect(returned.code).toBe(0);
    expect(returned.stdout).toContain('Marked returned');
    expect(
      (await ops('unmatched', 'credit', id, '--merchant', merchant.merchant_id, '--reason', 'x')).code,
    ).toBe(3);
    expect(await balanceOf(merchant.merchant_id)).toBe(0);
    const open = JSON.parse((await ops('unmatched', 'list', '--json')).stdout) as { id: string }[];
    expect(open.map((view) => view.id)).not.toContain(id);
  });

  it('refuses bad command lines, unknown ids and merchants with usage and exit code 2', async () => {
    const { event, id } = await anUnmatchedPayment(100);
    const bare = await ops();
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Usage:');
    expect((await ops('frobnicate')).code).toBe(2);
    expect((await ops('dlq', 'list', '--queue', 'nope')).code).toBe(2);
    expect((await ops('unmatched', 'list', '--status', 'lost')).code).toBe(2);
    // --region is for a stage's AWS calls: locally it would be dropped, so it is refused.
    const region = await ops('ledger', 'audit', '--region', 'eu-west-1');
    expect([region.code, region.stderr]).toEqual([2, expect.stringContaining('--region goes with --stage')]);
    // An argument no command reads (`unmatched list open`, for --status open) is refused, not dropped.
    const stray = await ops('unmatched', 'list', 'credited');
    expect([stray.code, stray.stderr]).toEqual([2, expect.stringContaining('unexpected credited')]);
    // Options the parser itself refuses: unknown, or missing their value.
    for (const line of [
      ['dlq', 'list', '--bogus'],
      ['unmatched', 'list', '--status'],
    ]) {
      const refused = await ops(...line);
      expect(refused.code, line.join(' ')).toBe(2);
      expect(refused.stderr).toContain('Usage:');
    }
    // An option given twice is refused, not taken as its last value: nothing is credited.
    const { merchant } = await aMerchant();
    const twice = await ops(
      'unmatched',
      'credit',
      id,
      '--merchant',
      'mer_missing',
      '--merchant',
      merchant.merchant_id,
      '--reason',
      'r',
    );
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--merchant is given more than once');
    expect(await balanceOf(merchant.merchant_id)).toBe(merchant.balance);
    // An option the command does not read is refused, never dropped: `return` given a merchant (the
    // operator meant `credit`) leaves the payment open.
    const notTaken = await ops(
      'unmatched',
      'return',
      id,
      '--merchant',
      merchant.merchant_id,
      '--reason',
      'r',
    );
    expect([notTaken.code, notTaken.stderr]).toEqual([
      2,
      expect.stringContaining('--merchant does not go with unmatched return'),
    ]);
    const [kept] = await unmatchedOf('sandbox', event.payment_id);
    expect(kept && statusOf(kept)).toBe('open');
    for (const line of [
      ['ledger', 'audit', '--reason', 'r'],
      ['dlq', 'list', '--message', 'm'],
      ['given-up', 'list', '--from', '2026-01-01T00:00:00Z'],
      ['transfers', 'fail', 'ref', '--merchant', 'm', '--reason', 'r', '--allow-over-max-balance'],
    ]) {
      const refused = await ops(...line);
      expect([refused.code, refused.stderr], line.join(' ')).toEqual([
        2,
        expect.stringContaining('does not go with'),
      ]);
    }
    const noReason = await ops('unmatched', 'credit', id, '--merchant', 'mer_x');
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('--reason');
    expect((await ops('unmatched', 'credit', id, '--reason', 'r')).code).toBe(2);
    const unknownMerchant = await ops(
      'unmatched',
      'credit',
      id,
      '--merchant',
      'mer_missing',
      '--reason',
      'r',
    );
    expect(unknownMerchant.code).toBe(2);
    expect(unknownMerchant.stderr).toContain('no merchant mer_missing');
    const unknownId = await ops('unmatched', 'return', 'sandbox:nothing', '--reason', 'r');
    expect(unknownId.code).toBe(2);
    expect(unknownId.stderr).toContain('no unmatched payment sandbox:nothing');
    expect((await ops('dlq', 'redrive', '--message', 'no-such-message')).code).toBe(2);
    // A blank value or argument (an unset shell variable) is a usage error, never DynamoDB's (exit 1).
    for (const line of [
      ['unmatched', 'credit', id, '--merchant', '', '--reason', 'r'],
      ['ledger', 'audit', '--merchant', ''],
      ['transfers', 'fail', 'ref', '--merchant', ' ', '--reason', 'r'],
      ['unmatched', 'return', '', '--reason', 'r'],
    ]) {
      const blank = await ops(...line);
      expect([blank.code, blank.stderr], line.join(' ')).toEqual([2, expect.stringContaining('Usage:')]);
    }
    // A day that does not exist is no time (Date.parse reads 2026-02-30 as 2 March).
    const noSuchDay = await ops(
      'events',
      'fan-out',
      '--from',
      '2026-02-30T00:00:00Z',
      '--to',
      '2026-03-09T00:00:00Z',
    );
    expect([noSuchDay.code, noSuchDay.stderr]).toEqual([
      2,
      expect.stringContaining('--from: not a real ISO 8601 time'),
    ]);
  });

  it('lists a dead-lettered payment and leaves it there; redrive moves it back and the consumer credits it', async () => {
    const { merchant } = await aMerchant();
    const event = queuedFromSandbox(paymentEvent({ account_number: merchant.account_number, amount: 4_200 }));
    const { deadLetters } = await queuePair(PAYMENT_EVENTS_QUEUE);
    const sent = await sqs.send(
      new SendMessageCommand({ QueueUrl: deadLetters, MessageBody: JSON.stringify(event) }),
    );
    const messageId = sent.MessageId ?? '';

    const first = (await listDlq()).find((message) => message.messageId === messageId);
    expect(first?.summary).toContain(`payment_id=${(event as PaymentReceived).payment_id}`);
    expect(first?.summary).toContain('amount=4200');
    // Listing took nothing away: it is listed again, and nobody credited it.
    expect((await listDlq()).map((message) => message.messageId)).toContain(messageId);
    expect(await balanceOf(merchant.merchant_id)).toBe(0);

    const redriven = await ops('dlq', 'redrive', '--queue', 'payment-events', '--message', messageId);
    expect(redriven.code).toBe(0);
    expect(redriven.stdout).toContain(messageId);
    await expect.poll(() => balanceOf(merchant.merchant_id), { timeout: 30_000 }).toBe(4_200);
    expect((await listDlq()).map((message) => message.messageId)).not.toContain(messageId);
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });

  it("checks a credit against the running service's MAX_BALANCE, not the shell's; only that service's", async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    await fund(m, 10_000);
    const { id } = await anUnmatchedPayment(25_000);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ops-service-'));
    try {
      // No npm start holds the folder: the shell's values decide, and the command says so.
      const unheld = await runCli(
        'ops',
        ['unmatched', 'credit', id, '--merchant', m, '--reason', 'ticket 9'],
        {
          DATA_DIR: dataDir,
          MAX_BALANCE: '30000',
        },
      );
      expect(unheld.code).toBe(3);
      expect(unheld.stderr).toContain(
        `No running npm start holds ${dataDir}: this command checks with this shell's`,
      );
      expect(unheld.stderr).toContain("this shell's MAX_BALANCE (30000)");
      // As `npm start` holds its folder and records what it runs with: a MAX_BALANCE of 30,000 kobo.
      writeFileSync(path.join(dataDir, lockFileOf(process.pid)), `${process.pid}\n`);
      const record = (dynamodbEndpoint: string) =>
        recordService(dataDir, {
          pid: process.pid,
          dynamodbEndpoint,
          tablePrefix: process.env.TABLE_PREFIX ?? DEFAULT_TABLE_PREFIX,
          partner: 'sandbox',
          settings: { MAX_BALANCE: '30000' },
        });
      const credit = () =>
        runCli('ops', ['unmatched', 'credit', id, '--merchant', m, '--reason', 'ticket 9'], {
          DATA_DIR: dataDir,
          MAX_BALANCE: '1000000000',
        });
      record(process.env.DYNAMODB_ENDPOINT ?? '');
      const refused = await credit();
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain(
        "Using the running service's MAX_BALANCE (30000), not this shell's 1000000000.",
      );
      expect(refused.stderr).toContain('past MAX_BALANCE (30000)');
      expect(await balanceOf(m)).toBe(10_000);

      // A record of another service (other tables) decides nothing here: the shell's value counts.
      record('http://127.0.0.1:1');
      const credited = await credit();
      expect(credited.code).toBe(0);
      expect(credited.stderr).not.toContain('Using the running service');
      expect(credited.stderr).toContain('serves the tables at http://127.0.0.1:1');
      expect(credited.stderr).not.toContain('No running npm start');
      expect(await balanceOf(m)).toBe(35_000);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('says which address refused it when the local service is not running', async () => {
    const { stderr, code } = await runCli('ops', ['unmatched', 'list'], {
      DYNAMODB_ENDPOINT: undefined,
      SQS_ENDPOINT: undefined,
      DYNAMODB_PORT: '1',
      SQS_PORT: '2',
    });
    expect(code).toBe(1);
    // `unmatched list` reads DynamoDB: the address that refused, not every one it might have tried.
    expect(stderr).toContain('Could not reach the service at http://127.0.0.1:1:');
    expect(stderr).not.toContain('http://127.0.0.1:2');
    expect(stderr).toContain('npm start');
  });

  it('audits the ledgers, one merchant or all, and fails when one does not add up', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const payment = queuedFromSandbox(
      paymentEvent({ account_number: merchant.account_number, amount: 7_500 }),
    ) as QueuedEvent & PaymentReceived;
    expect(await receivePayment(payment)).toBe('credited');
    const sound = await ops('ledger', 'audit', '--merchant', m, '--json');
    expect(sound.code).toBe(0);
    expect(JSON.parse(sound.stdout)).toEqual([
      { merchantId: m, balance: 7_500, entries: 1, sumOfEntries: 7_500, postedSince: 0, problems: [] },
    ]);
    expect((await ops('ledger', 'audit', '--merchant', 'mer_nobody')).code).toBe(2);

    // A balance moved outside the ledger (nothing of the service does this): the audit says so.
    const setBalance = (balance: number) =>
      dynamo.send(
        new UpdateCommand({
          TableName: tableName('merchants'),
          Key: { merchant_id: m },
          UpdateExpression: 'SET balance = :b',
          ExpressionAttributeValues: { ':b': balance },
        }),
      );
    await setBalance(7_501);
    try {
      const one = await ops('ledger', 'audit', '--merchant', m);
      expect(one.code).toBe(1);
      expect(one.stdout).toContain(`${m}  balance 7501  1 entries summing to 7500  1 PROBLEM(S)`);
      expect(one.stdout).toContain('balance 7501 != sum of its 1 entries 7500');
      expect(one.stdout).toContain('1 merchant(s) audited, 1 with problems');
      // Every merchant of the table, this one among them.
      const all = await ops('ledger', 'audit', '--json');
      expect(all.code).toBe(1);
      const reports = JSON.parse(all.stdout) as { merchantId: string; problems: string[] }[];
      expect(reports.length).toBeGreaterThan(1);
      expect(reports.find((report) => report.merchantId === m)?.problems).toEqual([
        'balance 7501 != sum of its 1 entries 7500',
      ]);
    } finally {
      await setBalance(7_500);
    }
  });

  it('shows a transfer and its hand-overs, reading only: the partner is not asked, nothing is held', async () => {
    const { m, reference } = await aFundedPendingTransfer('ops-show');
    const before = await getTransaction(m, reference);
    const shownText = await ops('transfers', 'show', reference, '--merchant', m);
    expect(shownText.code).toBe(0);
    expect(shownText.stdout).toContain(
      `Transfer ${reference} of ${m}: pending, 5000 kobo + 1000 fee to 0000014579 (011)`,
    );
    expect(shownText.stdout).toContain('handed over 1 time(s)');
    const json = JSON.parse((await ops('transfers', 'show', reference, '--merchant', m, '--json')).stdout);
    expect(json).toMatchObject({
      reference,
      status: 'pending',
      amount: 5_000,
      dispatches: 1,
      kept_refusal: null,
      failed_by: null,
    });
    // The partner's answer held its resends for an hour (as `aPendingTransfer` records it).
    expect(Date.parse(json.resends_held_until) - Date.now()).toBeGreaterThan(3_000_000);
    // Nothing written: the record is as it was (no hold, no count).
    expect(await getTransaction(m, reference)).toEqual(before);
    expect((await ops('transfers', 'show', 'nope', '--merchant', m)).code).toBe(2);
    expect((await ops('transfers', 'show', reference)).code).toBe(2);
  });

  it('fails a pending transfer the partner never made, once, and gives its money back, keeping who failed it from the merchant; never one sent lately', async () => {
    const { m, reference } = await aFundedPendingTransfer('ops-fail');
    const reason = 'Paystack has no record of it (ticket 12)';
    const fail = (...more: string[]) =>
      ops('transfers', 'fail', reference, '--merchant', m, '--reason', reason, '--by', 'ada', ...more);

    // Handed to the partner a moment ago: a send may still be on its way.
    const early = await fail();
    expect(early.code).toBe(3);
    expect(early.stderr).toContain('a send may still be on its way');
    // The refusal holds the transfer's resends: it and `transfers show` say until when alike, the
    // later of the operator's hold and the partner's (an hour, `aPendingTransfer`'s).
    const holdSaid = /no resend until ([0-9TZ:.-]+)\)/.exec(early.stderr)?.[1];
    const held = JSON.parse((await ops('transfers', 'show', reference, '--merchant', m, '--json')).stdout);
    expect(holdSaid).toBeDefined();
    expect(held.resends_held_until).toBe(holdSaid);
    expect(await balanceOf(m)).toBe(14_000);
    expect((await ops('transfers', 'fail', 'nope', '--merchant', m, '--reason', reason)).code).toBe(2);
    expect((await ops('transfers', 'fail', reference, '--merchant', m)).code).toBe(2);

    // An hour later (moved here, not waited for): failed, amount + fee back through the ledger.
    await sentAnHourAgo(m, reference);
    const failed = await fail('--json');
    expect(failed.code).toBe(0);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      reference,
      status: 'failed',
      reason,
      failed_by: 'ada',
      // Asked first: the sandbox has no such transfer (it was never sent).
      partner_asked: expect.stringMatching(/^sandbox has no transfer /),
    });
    // The transfer keeps who failed it; the merchant's view of it does not show them.
    const kept = await getTransaction(m, reference);
    expect(kept).toMatchObject({ status: 'failed', failure_reason: reason, failed_by: 'ada' });
    expect(kept && toApiTransaction(kept)).not.toHaveProperty('failed_by');
    expect(await balanceOf(m)).toBe(20_000);
    expect((await entriesOf(m)).map((entry) => entry.category)).toEqual(['payment', 'transfer', 'reversal']);
    expect((await auditMerchant(m)).problems).toEqual([]);
    // Once: a second run is refused and moves nothing.
    const again = await fail();
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('only a pending transfer can be failed');
    expect(await balanceOf(m)).toBe(20_000);
  });

  it('fails a transfer sent through a partner it cannot ask only when told the operator checked there', async () => {
    const { m, reference } = await aFundedPendingTransfer('ops-other');
    // Sent an hour ago through Paystack, which this shell's sandbox partner cannot ask about.
    await sentAnHourAgo(m, reference, 'paystack');
    const fail = (...more: string[]) =>
      ops(
        'transfers',
        'fail',
        reference,
        '--merchant',
        m,
        '--reason',
        'not at Paystack (ticket 13)',
        ...more,
      );
    const unasked = await fail();
    expect([unasked.code, unasked.stderr]).toEqual([3, expect.stringContaining('add --partner-checked')]);
    expect(await balanceOf(m)).toBe(14_000);
    const checked = await fail('--partner-checked', '--json');
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({
      status: 'failed',
      partner_asked: expect.stringContaining('checked by the operator'),
    });
    expect(await balanceOf(m)).toBe(20_000);
  });
});
