import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { config } from '#shared/config.ts';
import { auditMerchant } from '#shared/ledger/audit.ts';
import type * as Ledger from '#shared/ledger/ledger.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { listingCalls } from '#test/support/sdk-calls.ts';

const id = (kind: string) => `${kind}:${randomUUID()}`;

/** The ledger module as a separate container loads it: its own remembered balances. */
async function aContainer(): Promise<typeof Ledger> {
  vi.resetModules();
  return import('#shared/ledger/ledger.ts');
}

describe('balances remembered between postings (one container never trusts them)', () => {
  it('posts exactly from a stale remembered balance: re-reads on conflict, refuses only on a fresh read', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const a = await aContainer();
    const b = await aContainer();
    const post = (ledger: typeof Ledger, amount: number) =>
      (amount > 0 ? ledger.credit : ledger.debit)({
        entryId: id(amount > 0 ? 'payment' : 'transfer'),
        merchantId: m,
        amount: Math.abs(amount),
        category: amount > 0 ? 'payment' : 'transfer',
        reference: 'ref',
      });

    await post(a, 100); // a remembers 100 at version 1
    await post(b, 1_000); // b reads 100 and writes 1,100 at version 2: a's memory is stale
    // a's memory says 100 does not cover 500: that is never the answer without a fresh read.
    const debited = await post(a, -500);
    expect(debited.entry).toMatchObject({ balance_after: 600, seq: 3 });
    // b remembers 1,100 at version 2: its write is refused by the version check, then re-read.
    const credited = await post(b, 1);
    expect(credited.entry).toMatchObject({ balance_after: 601, seq: 4 });
    // A debit the fresh balance does not cover is still refused, writing nothing.
    await expect(post(a, -10_000)).rejects.toBeInstanceOf(a.InsufficientFunds);
    expect(await getMerchant(m)).toMatchObject({ balance: 601, version: 4 });
    expect((await auditMerchant(m)).problems).toEqual([]);
  });

  it('holds a payment past MAX_BALANCE only on a fresh read, never on a stale remembered one', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const max = config.limits.maxBalance;
    const a = await aContainer();
    const b = await aContainer();
    const payment = (ledger: typeof Ledger, amount: number) =>
      ledger.credit({ entryId: id('payment'), merchantId: m, amount, category: 'payment', reference: 'r' });
    await payment(a, max - 10); // a remembers max - 10
    await b.debit({
      entryId: id('transfer'),
      merchantId: m,
      amount: 100,
      category: 'transfer',
      reference: 't',
    });
    // a's memory says max - 10 + 50 is past the ceiling; the fresh balance (max - 110) is not.
    const group = await a.postAll(m, [
      { entryId: id('payment'), amount: 50, category: 'payment', reference: 'g' },
    ]);
    expect(group[0]).toMatchObject({ balance_after: max - 60, seq: 3 });
    await expect(payment(b, 61)).rejects.toBeInstanceOf(b.BalanceCeiling);
    expect((await auditMerchant(m)).problems).toEqual([]);
  });

  it("posts several merchants' groups in one transaction, re-reading only the balance that moved", async () => {
    const [one, two] = await Promise.all([aMerchant(), aMerchant()]);
    const m1 = one?.merchant.merchant_id ?? '';
    const m2 = two?.merchant.merchant_id ?? '';
    const b = await aContainer();
    const a = await aContainer(); // loaded last: the client imported below is a's
    const credit = (ledger: typeof Ledger, merchantId: string, amount: number) =>
      ledger.credit({ entryId: id('payment'), merchantId, amount, category: 'payment', reference: 'r' });
    await credit(a, m1, 100);
    await credit(a, m2, 200); // a remembers both
    await credit(b, m2, 5); // a's memory of m2 is stale now
    const { dynamo } = await import('#shared/aws/clients.ts');
    const group = (amount: number) => [
      { entryId: id('payment'), amount, category: 'payment' as const, reference: 'g' },
    ];
    const { result: outcomes, calls } = await listingCalls(dynamo, () =>
      a.postGroups([
        { merchantId: m1, postings: group(10) },
        { merchantId: m2, postings: [...group(20), ...group(30)] },
      ]),
    );
    // Refused once for m2's version, m2 alone re-read, then both in one transaction.
    expect(calls).toEqual(['TransactWriteItemsCommand', 'GetItemCommand', 'TransactWriteItemsCommand']);
    expect(
      outcomes.map((outcome) =>
        'entries' in outcome ? outcome.entries.map((e) => [e.seq, e.balance_after]) : outcome,
      ),
    ).toEqual([
      [[2, 110]],
      [
        [3, 225],
        [4, 255],
      ],
    ]);
    expect(await getMerchant(m1)).toMatchObject({ balance: 110, version: 2 });
    expect(await getMerchant(m2)).toMatchObject({ balance: 255, version: 4 });
    for (const m of [m1, m2]) expect((await auditMerchant(m)).problems).toEqual([]);
  });

  it('leaves out a group whose entry exists, writing nothing of it, and applies the others', async () => {
    const [one, two] = await Promise.all([aMerchant(), aMerchant()]);
    const m1 = one?.merchant.merchant_id ?? '';
    const m2 = two?.merchant.merchant_id ?? '';
    const ledger = await aContainer();
    const early = id('payment');
    await ledger.credit({ entryId: early, merchantId: m2, amount: 50, category: 'payment', reference: 'r' });
    const outcomes = await ledger.postGroups([
      {
        merchantId: m1,
        postings: [{ entryId: id('payment'), amount: 10, category: 'payment', reference: 'g' }],
      },
      {
        merchantId: m2,
        postings: [
          { entryId: id('payment'), amount: 20, category: 'payment', reference: 'g' },
          { entryId: early, amount: 50, category: 'payment', reference: 'g' },
        ],
      },
    ]);
    expect(outcomes[0]).toMatchObject({ entries: [{ balance_after: 10, seq: 1 }] });
    expect(outcomes[1]).toEqual({ notApplied: expect.objectContaining({ reason: 'already_applied' }) });
    expect(await getMerchant(m1)).toMatchObject({ balance: 10, version: 1 });
    expect(await getMerchant(m2)).toMatchObject({ balance: 50, version: 1 });
    for (const m of [m1, m2]) expect((await auditMerchant(m)).problems).toEqual([]);
  });

  it('loses nothing when containers race on one merchant: every posting counted once, debits only as covered', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    // Four containers, as on AWS: each takes its own turns, but they race each other on the balance.
    const containers = [await aContainer(), await aContainer(), await aContainer(), await aContainer()];
    await containers[0]?.credit({
      entryId: id('payment'),
      merchantId: m,
      amount: 3_000,
      category: 'payment',
      reference: 'f',
    });
    const outcomes = await Promise.allSettled(
      containers.flatMap((ledger, c) => [
        ...Array.from({ length: 4 }, (_, i) => [
          ledger.credit({
            entryId: id('payment'),
            merchantId: m,
            amount: 10 ** c + i,
            category: 'payment',
            reference: 'r',
          }),
          ledger.postAll(m, [
            { entryId: id('payment'), amount: 7, category: 'payment', reference: 'g' },
            { entryId: id('payment'), amount: 9, category: 'payment', reference: 'g' },
          ]),
        ]).flat(),
        ...Array.from({ length: 2 }, () =>
          ledger.debit({
            entryId: id('transfer'),
            merchantId: m,
            amount: 1_000,
            category: 'transfer',
            reference: 't',
          }),
        ),
      ]),
    );
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    // The first 3,000 covers three debits of 1,000 in any order; all the credits, at most seven.
    expect(refused.every((reason) => containers.some((l) => reason instanceof l.InsufficientFunds))).toBe(
      true,
    );
    const debited = 8 - refused.length;
    expect(debited).toBeGreaterThanOrEqual(3);
    const credited = 3_000 + 4 * 1_111 + 4 * 6 + 16 * 16;
    expect(await getMerchant(m)).toMatchObject({
      balance: credited - debited * 1_000,
      version: 1 + 16 + 32 + debited,
    });
    expect((await auditMerchant(m)).problems).toEqual([]);
  });

  it('takes turns within a container: concurrent postings of one merchant never conflict with each other', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const ledger = await aContainer();
    // The same container's client (the module graph the ledger was just loaded with).
    const { dynamo } = await import('#shared/aws/clients.ts');
    let transactions = 0;
    dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        if (/TransactWrite/.test(context.commandName ?? '')) transactions++;
        return next(args);
      },
      { step: 'initialize', name: 'countTransactions' },
    );
    try {
      const credits = Array.from({ length: 12 }, (_, i) =>
        ledger.credit({
          entryId: id('payment'),
          merchantId: m,
          amount: 100 + i,
          category: 'payment',
          reference: 'r',
        }),
      );
      const group = ledger.postAll(m, [
        { entryId: id('payment'), amount: 7, category: 'payment', reference: 'g' },
        { entryId: id('payment'), amount: 8, category: 'payment', reference: 'g' },
      ]);
      const posted = await Promise.all(credits);
      await group;
      // One transaction per posting: none lost to a conflict with a posting of the same container.
      expect(transactions).toBe(13);
      expect(posted.every(({ applied }) => applied)).toBe(true);
    } finally {
      dynamo.middlewareStack.remove('countTransactions');
    }
    expect(await getMerchant(m)).toMatchObject({ balance: 12 * 100 + 66 + 15, version: 14 });
    expect((await auditMerchant(m)).problems).toEqual([]);
  });
});
