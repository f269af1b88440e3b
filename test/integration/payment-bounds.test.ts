import { describe, expect, it } from 'vitest';
import { config } from '#shared/config.ts';
import { auditMerchant } from '#shared/ledger/audit.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import type { PaymentReceived, QueuedEvent } from '#shared/partners/partner.ts';
import { receivePayment, receivePayments } from '#shared/payments/credit.ts';
import { unmatchedOf } from '#shared/payments/unmatched.ts';
import { getTransaction } from '#shared/transactions/store.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';
import { queuedFromSandbox } from '#test/support/events.ts';
import { aMerchant, aPendingTransfer, fund } from '#test/support/merchants.ts';
import { nipSessionId, paymentEvent } from '#test/support/payments.ts';

/** API.md §11: amounts and balances have bounds (inclusive); what passes them is held, never in the way. */
const payment = (accountNumber: string, amount: number, sessionId = nipSessionId()) =>
  queuedFromSandbox(
    paymentEvent({ account_number: accountNumber, amount, session_id: sessionId }),
  ) as QueuedEvent & PaymentReceived;
const balanceOf = async (merchantId: string) => (await getMerchant(merchantId))?.balance;

describe('payment bounds and reused partner ids (API.md §11)', () => {
  it('credits exactly MAX_PAYMENT_AMOUNT, holds one kobo more for operators, and credits what comes after', async () => {
    const { merchant } = await aMerchant();
    const max = config.limits.maxPaymentAmount;
    expect(await receivePayment(payment(merchant.account_number, max))).toBe('credited');
    const over = payment(merchant.account_number, max + 1);
    expect(await receivePayment(over)).toBe('held');
    expect(await receivePayment(over)).toBe('held');
    const kept = await unmatchedOf('sandbox', over.payment_id);
    expect(kept).toEqual([expect.objectContaining({ reason: 'held: amount above MAX_PAYMENT_AMOUNT' })]);
    const [results] = [
      await receivePayments([
        payment(merchant.account_number, 500),
        payment(merchant.account_number, max + 2),
      ]),
    ];
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual([
      'credited',
      'held',
    ]);
    expect(await balanceOf(merchant.merchant_id)).toBe(max + 500);
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });

  it('lets a credit reach MAX_BALANCE exactly, and holds one that would pass it', async () => {
    const { merchant } = await aMerchant();
    const max = config.limits.maxBalance;
    await fund(merchant.merchant_id, max - 1_000);
    expect(await receivePayment(payment(merchant.account_number, 1_000))).toBe('credited');
    const past = payment(merchant.account_number, 1);
    expect(await receivePayment(past)).toBe('held');
    expect(await balanceOf(merchant.merchant_id)).toBe(max);
    expect(await unmatchedOf('sandbox', past.payment_id)).toEqual([
      expect.objectContaining({ reason: 'held: the balance would pass MAX_BALANCE' }),
    ]);
  });

  it('never caps a reversal: the money of a failed transfer comes back even past MAX_BALANCE', async () => {
    const { merchant } = await aMerchant();
    const max = config.limits.maxBalance;
    await fund(merchant.merchant_id, 10_000);
    const reference = `cap-${nipSessionId().slice(0, 10)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    await fund(merchant.merchant_id, max - 4_000);
    const transfer = await getTransaction(merchant.merchant_id, reference);
    if (!transfer) throw new Error('no pending transfer');
    const settled = await settleTransfer(transfer, { status: 'failed', reason: 'Account closed' });
    expect(settled.status).toBe('failed');
    expect(await balanceOf(merchant.merchant_id)).toBe(max + 6_000);
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });

  it('keeps every different payment that reuses a partner id, each once, and credits only the first', async () => {
    const { merchant } = await aMerchant();
    const sessionId = nipSessionId();
    expect(await receivePayment(payment(merchant.account_number, 1_000, sessionId))).toBe('credited');
    expect(await receivePayment(payment(merchant.account_number, 2_000, sessionId))).toBe('unmatched');
    expect(await receivePayment(payment(merchant.account_number, 3_000, sessionId))).toBe('unmatched');
    expect(await receivePayment(payment(merchant.account_number, 2_000, sessionId))).toBe('unmatched');
    const kept = await unmatchedOf('sandbox', sessionId);
    expect(kept.map((item) => (item.event as { amount: number }).amount).sort()).toEqual([2_000, 3_000]);
    expect(await balanceOf(merchant.merchant_id)).toBe(1_000);
  });
});
