import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { PAGE_READS } from '#shared/aws/query.ts';
import { ValidationError } from '#shared/errors.ts';
import { listEvents } from '#shared/events/events.ts';
import { listVirtualAccounts } from '#shared/payments/virtual-accounts.ts';
import { listTransactions } from '#shared/transactions/store.ts';
import { recordDynamo } from '#test/support/faults.ts';

/**
 * A filtered list over a long history (API.md §1 lists, `shared/aws/query.ts`): a filter that
 * matches little reads the history in growing requests, and a page stops reading after
 * `PAGE_READS.maxReads` of them, shorter than asked (even empty) with a cursor that continues where
 * it got to, so that no request reads a merchant's whole history. Paging on finds every match once.
 */
const defaults = { ...PAGE_READS };
afterEach(() => Object.assign(PAGE_READS, defaults));

/** `count` transactions of a new merchant, a millisecond apart; `debitAt` are debits, the rest credits. */
async function history(count: number, debitAt: readonly number[]) {
  const merchantId = `mer_pages_${randomUUID().slice(0, 8)}`;
  const start = Date.parse('2026-11-20T10:00:00.000Z');
  const items = Array.from({ length: count }, (_, i) => ({
    merchant_id: merchantId,
    reference: `t-${String(i).padStart(4, '0')}`,
    created_at: new Date(start + i).toISOString(),
    type: debitAt.includes(i) ? 'debit' : 'credit',
    status: 'success',
  }));
  for (let i = 0; i < items.length; i += 25) {
    const chunk = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    await dynamo.send(new BatchWriteCommand({ RequestItems: { [tableName('transactions')]: chunk } }));
  }
  return merchantId;
}

/** Every page of a filtered list, following its cursors. */
async function allPages(merchantId: string, limit: number) {
  const pages: { references: string[]; cursor: string | null }[] = [];
  let cursor: string | undefined;
  do {
    const page = await listTransactions(merchantId, { type: 'debit', limit, cursor });
    pages.push({ references: page.items.map((t) => t.reference), cursor: page.nextCursor });
    cursor = page.nextCursor ?? undefined;
  } while (cursor && pages.length < 100);
  return pages;
}

describe('a filtered list over a long history', () => {
  it('reads in growing requests: a filter matching little costs a few requests, not one per page of items', async () => {
    const merchantId = await history(400, [3]);
    const recorder = recordDynamo();
    try {
      const page = await listTransactions(merchantId, { type: 'debit', limit: 20 });
      expect(page).toEqual({ items: [expect.objectContaining({ reference: 't-0003' })], nextCursor: null });
    } finally {
      recorder.remove();
    }
    // 21, 42, 84, 168, then the last 85 (it read 21 at a time before: 20 requests).
    expect(recorder.calls.filter((call) => call.command === 'QueryCommand')).toHaveLength(5);
  });

  it('ends a page short, even empty, once it made its requests, and its cursor finds every match once', async () => {
    const merchantId = await history(200, [3, 100, 101, 150]);
    Object.assign(PAGE_READS, { maxReads: 2, maxReadSize: 20 });
    const pages = await allPages(merchantId, 3);
    expect(pages.flatMap((page) => page.references)).toEqual(['t-0150', 't-0101', 't-0100', 't-0003']);
    // Pages cut short say so with a cursor; some had no match at all.
    expect(pages.some((page) => page.references.length === 0 && page.cursor !== null)).toBe(true);
    expect(pages.at(-1)?.cursor).toBeNull();
    // Without the bound, the same list is one page.
    Object.assign(PAGE_READS, defaults);
    expect(await allPages(merchantId, 3)).toEqual([
      { references: ['t-0150', 't-0101', 't-0100'], cursor: expect.any(String) },
      { references: ['t-0003'], cursor: null },
    ]);
  });

  it('never cuts an unfiltered page short: it is full after its first request', async () => {
    const merchantId = await history(60, []);
    Object.assign(PAGE_READS, { maxReads: 1 });
    const page = await listTransactions(merchantId, { limit: 50 });
    expect(page.items).toHaveLength(50);
    expect(page.nextCursor).toEqual(expect.any(String));
    // Events read the same way (their cursor is the event id of the last one read).
    expect(await listEvents(merchantId, { type: 'transfer.failed', limit: 5 })).toEqual({
      items: [],
      nextCursor: null,
    });
  });

  it("refuses a list's cursor given to another list of the same shape (400), never reading it as a place there", async () => {
    const merchantId = await history(3, []);
    const { nextCursor } = await listTransactions(merchantId, { limit: 1 });
    if (!nextCursor) throw new Error('no cursor');
    expect((await listTransactions(merchantId, { limit: 1, cursor: nextCursor })).items).toHaveLength(1);
    await expect(listVirtualAccounts(merchantId, { limit: 1, cursor: nextCursor })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});
