import { randomUUID } from 'node:crypto';
import type { Context, SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handler } from '#functions/process-payment-events.ts';
import { auditMerchant, entriesOf } from '#shared/ledger/audit.ts';
import { credit, debit, InsufficientFunds, type Posting, reverse } from '#shared/ledger/ledger.ts';
import { queuedFromSandbox } from '#test/support/events.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { paymentEvent } from '#test/support/payments.ts';

/**
 * Random sequences of partner payments (through the real consumer, redelivered and reordered),
 * credits, debits, duplicate postings and reversals, for several merchants at once and several
 * operations per merchant at once, against DynamoDB Local. After every run: each
 * balance equals the sum of its entries, nothing ever went below zero, every balance_after chain is
 * consistent, and no business id was applied twice. Reproduce a failure with FC_SEED=<seed>.
 */
type Op =
  | { kind: 'payment'; amount: number }
  | { kind: 'redeliver'; of: number }
  | { kind: 'credit'; amount: number }
  | { kind: 'debit'; amount: number }
  | { kind: 'duplicate'; of: number }
  | { kind: 'reverse'; of: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('payment' as const), amount: fc.integer({ min: 1, max: 50_000 }) }),
  fc.record({ kind: fc.constant('redeliver' as const), of: fc.nat() }),
  fc.record({ kind: fc.constant('credit' as const), amount: fc.integer({ min: 1, max: 50_000 }) }),
  fc.record({ kind: fc.constant('debit' as const), amount: fc.integer({ min: 1, max: 60_000 }) }),
  fc.record({ kind: fc.constant('duplicate' as const), of: fc.nat() }),
  fc.record({ kind: fc.constant('reverse' as const), of: fc.nat() }),
);

/** A merchant's operations, in waves that run concurrently (each wave's operations at once). */
const merchantScript = fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 });

/** Delivers partner events to the consumer as one SQS batch, as the queue would. */
async function consume(events: ReturnType<typeof paymentEvent>[]): Promise<void> {
  const Records = events.map(
    (event, i) =>
      ({
        messageId: `m${i}-${randomUUID()}`,
        body: JSON.stringify(queuedFromSandbox(event)),
      }) as SQSRecord,
  );
  const result = await handler({ Records }, {} as Context);
  expect(result.batchItemFailures).toEqual([]);
}

async function runScript(
  merchant: { merchant_id: string; account_number: string },
  waves: Op[][],
): Promise<void> {
  const merchantId = merchant.merchant_id;
  const postings: Posting[] = [];
  const debits: string[] = [];
  const payments: ReturnType<typeof paymentEvent>[] = [];
  const apply = async (step: Op) => {
    try {
      if (step.kind === 'payment') {
        const event = paymentEvent({
          account_number: merchant.account_number,
          amount: step.amount,
          session_id: randomUUID(),
        });
        payments.push(event);
        await consume([event]);
      } else if (step.kind === 'redeliver' && payments.length > 0) {
        const event = payments[step.of % payments.length] as ReturnType<typeof paymentEvent>;
        await consume([event, event]);
      } else if (step.kind === 'credit' || step.kind === 'debit') {
        const posting: Posting = {
          entryId: `${step.kind === 'credit' ? 'payment' : 'transfer'}:${randomUUID()}`,
          merchantId,
          amount: step.amount,
          category: step.kind === 'credit' ? 'payment' : 'transfer',
          reference: randomUUID(),
        };
        postings.push(posting);
        if (step.kind === 'debit') debits.push(posting.entryId);
        await (step.kind === 'credit' ? credit(posting) : debit(posting));
      } else if (step.kind === 'duplicate' && postings.length > 0) {
        const original = postings[step.of % postings.length] as Posting;
        await (original.category === 'payment' ? credit(original) : debit(original));
      } else if (step.kind === 'reverse' && debits.length > 0) {
        await reverse(debits[step.of % debits.length] as string, { reference: randomUUID() });
      }
    } catch (error) {
      // Refused debits, and reversals of debits that were refused, are expected outcomes.
      if (error instanceof InsufficientFunds || /no debit .* to reverse/.test(String(error))) return;
      throw error;
    }
  };
  for (const wave of waves) await Promise.all(wave.map(apply));
}

describe('ledger properties', () => {
  it('hold under random concurrent payments, redeliveries, credits, debits, duplicates and reversals', async () => {
    const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() % 2 ** 31;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(merchantScript, { minLength: 2, maxLength: 3 }), async (scripts) => {
          const merchants = await Promise.all(scripts.map(() => aMerchant()));
          await Promise.all(merchants.map(({ merchant }, i) => runScript(merchant, scripts[i] ?? [])));
          for (const { merchant } of merchants) {
            const report = await auditMerchant(merchant.merchant_id);
            expect(report.problems).toEqual([]);
            const entries = await entriesOf(merchant.merchant_id);
            expect(new Set(entries.map((e) => e.entry_id)).size).toBe(entries.length);
            const reversed = entries.filter((e) => e.category === 'reversal').map((e) => e.entry_id);
            expect(new Set(reversed).size).toBe(reversed.length);
            // Every payment session credited at most once, with its own amount.
            const credited = entries.filter((e) => e.category === 'payment');
            expect(new Set(credited.map((e) => e.entry_id)).size).toBe(credited.length);
          }
        }),
        { numRuns: 25, seed, endOnFailure: true },
      );
    } catch (error) {
      console.error(`ledger property failed: reproduce with FC_SEED=${seed}`);
      throw error;
    }
  }, 120_000);
});
