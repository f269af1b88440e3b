import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { auditMerchant } from '#shared/ledger/audit.ts';
import type * as Ledger from '#shared/ledger/ledger.ts';
import { MAX_ENTRY_TIME_LEAD_MS, nextEntryTime } from '#shared/ledger/ledger.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import {
  listTransactions,
  putTransactionItem,
  type TransactionRecord,
  transactionRecord,
} from '#shared/transactions/store.ts';
import { aMerchant } from '#test/support/merchants.ts';

const id = (kind: string) => `${kind}:${randomUUID()}`;

/** The ledger module as a separate container loads it: its own remembered balances. */
async function aContainer(): Promise<typeof Ledger> {
  vi.resetModules();
  return import('#shared/ledger/ledger.ts');
}

/** A credit that writes its transaction record, as payments do. */
function aCredit(reference: string, amount: number) {
  return {
    entryId: id('payment'),
    amount,
    category: 'payment' as const,
    reference,
    companions: (entry: Ledger.LedgerEntry) => [
      putTransactionItem(
        transactionRecord(entry, {
          reference,
          amount,
          fee: 0,
          status: 'success',
          narration: null,
          counterparty: { account_name: '', account_number: '', bank_code: '' },
        }),
      ),
    ],
  };
}

/** Every transaction of a merchant, newest first, walked page by page as a client does. */
async function allTransactions(merchantId: string): Promise<TransactionRecord[]> {
  const all: TransactionRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await listTransactions(merchantId, { limit: 2, cursor });
    all.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return all;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('entry times follow seq, so lists by time agree with balance_after', () => {
  it('the next entry time is now, or 1 ms after the last entry when the clock has not passed it', () => {
    const last = '2026-11-23T10:00:00.500Z';
    expect(nextEntryTime(undefined, Date.parse('2026-11-23T09:00:00.000Z'))).toBe(
      Date.parse('2026-11-23T09:00:00.000Z'),
    );
    expect(nextEntryTime(last, Date.parse('2026-11-23T10:00:01.000Z'))).toBe(
      Date.parse('2026-11-23T10:00:01.000Z'),
    );
    expect(nextEntryTime(last, Date.parse(last))).toBe(Date.parse('2026-11-23T10:00:00.501Z'));
    expect(nextEntryTime(last, Date.parse('2026-11-23T10:00:00.000Z'))).toBe(
      Date.parse('2026-11-23T10:00:00.501Z'),
    );
    // A last entry further ahead than a busy merchant's times ever run came from a wrong clock.
    const now = Date.parse(last) + 1 - MAX_ENTRY_TIME_LEAD_MS - 1;
    expect(nextEntryTime(last, now)).toBe(now);
    expect(nextEntryTime(last, now + 1)).toBe(Date.parse(last) + 1);
  });

  it('gives the credits of one grouped transaction consecutive times: the list pages in seq order', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const ledger = await aContainer();
    await ledger.credit({ ...aCredit('first', 1_000), merchantId: m });
    // Five credits in one transaction, the way the consumer posts a hot merchant's batch.
    const group = ['g1', 'g2', 'g3', 'g4', 'g5'].map((reference, i) => aCredit(reference, 100 * (i + 1)));
    const entries = await ledger.postAll(m, group);
    const after = await ledger.credit({ ...aCredit('last', 7), merchantId: m });

    const times = [...entries.map((entry) => entry.created_at), after.entry.created_at];
    expect(new Set(times).size).toBe(times.length);
    expect([...times].sort()).toEqual(times);
    const listed = await allTransactions(m);
    expect(listed.map((t) => t.reference)).toEqual(['last', 'g5', 'g4', 'g3', 'g2', 'g1', 'first']);
    expect(listed.map((t) => t.balance_after)).toEqual([2_507, 2_500, 2_000, 1_600, 1_300, 1_100, 1_000]);
    expect((await getMerchant(m))?.last_entry_at).toBe(after.entry.created_at);
    expect((await auditMerchant(m)).problems).toEqual([]);
  });

  it('dates an entry after the one before it even when its container’s clock is behind', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const ahead = await aContainer();
    const behind = await aContainer();
    const first = await ahead.credit({ ...aCredit('from a clock ahead', 500), merchantId: m });

    // A container whose clock is 4 s behind: the one that remembers the balance, and one that
    // reads it afresh (the version condition makes both see the last entry's time).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - MAX_ENTRY_TIME_LEAD_MS + 1_000 });
    const second = await ahead.credit({ ...aCredit('remembered', 10), merchantId: m });
    const third = await behind.credit({ ...aCredit('read afresh', 20), merchantId: m });
    const fourth = await behind.postAll(m, [aCredit('grouped', 30)]);
    vi.useRealTimers();

    const times = [first, second, third].map((posted) => posted.entry.created_at);
    times.push(fourth[0]?.created_at ?? '');
    expect([...new Set(times)].sort()).toEqual(times);
    const listed = await allTransactions(m);
    expect(listed.map((t) => t.reference)).toEqual([
      'grouped',
      'read afresh',
      'remembered',
      'from a clock ahead',
    ]);
    expect(listed.map((t) => t.balance_after)).toEqual([560, 530, 510, 500]);
    expect((await auditMerchant(m)).problems).toEqual([]);
  });

  it('dates the next entry of a wallet written before last_entry_at after its latest entry', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const before = await (await aContainer()).credit({ ...aCredit('before the field', 500), merchantId: m });
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName('merchants'),
        Key: { merchant_id: m },
        UpdateExpression: 'REMOVE last_entry_at',
      }),
    );
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 2_000 });
    const after = await (await aContainer()).credit({ ...aCredit('after', 5), merchantId: m });
    vi.useRealTimers();
    expect(after.entry.created_at > before.entry.created_at).toBe(true);
    expect((await getMerchant(m))?.last_entry_at).toBe(after.entry.created_at);
    expect((await auditMerchant(m)).problems).toEqual([]);
  });

  it('does not follow a last entry dated far ahead by a wrong clock: the clock wins', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3_600_000 });
    const ahead = await (await aContainer()).credit({ ...aCredit('an hour ahead', 500), merchantId: m });
    vi.useRealTimers();
    const started = Date.now();
    const next = await (await aContainer()).credit({ ...aCredit('now', 5), merchantId: m });
    expect(Date.parse(next.entry.created_at)).toBeGreaterThanOrEqual(started);
    expect(Date.parse(next.entry.created_at)).toBeLessThan(Date.parse(ahead.entry.created_at) - 3_000_000);
    // The wrong clock's entry now sorts out of order, and the audit says so.
    expect((await auditMerchant(m)).problems).toEqual([
      expect.stringContaining(`(seq 2) has created_at ${next.entry.created_at}, not after seq 1's`),
    ]);
  });
});
