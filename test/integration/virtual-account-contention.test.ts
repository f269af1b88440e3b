import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditMerchant } from '#shared/ledger/audit.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import type { PaymentReceived, QueuedEvent } from '#shared/partners/partner.ts';
import { receivePayments } from '#shared/payments/credit.ts';
import { createVirtualAccount } from '#shared/payments/virtual-account-opening.ts';
import { getVirtualAccount, paymentsOf } from '#shared/payments/virtual-accounts.ts';
import { queuedFromSandbox } from '#test/support/events.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { nipSessionId, paymentEvent } from '#test/support/payments.ts';

/**
 * Many payments into one virtual account at once, as a burst reaches the payment consumer: several
 * batches in flight together (the local runtime's pollers, Lambda's concurrent invocations). Each
 * is credited on its first delivery: none fails for the account's total moving under it (a failed
 * message waits out the queue's 180 s visibility timeout before it is tried again).
 */
describe('payments into one virtual account in concurrent batches', () => {
  it('credits every one on its first delivery, the account total and the balance exact', async () => {
    const { merchant } = await aMerchant();
    const { account } = await createVirtualAccount(merchant.merchant_id, merchant.name, {
      amount: 1_000_000,
      reference: `va-${randomUUID()}`,
      expires_in_minutes: 30,
    });
    const batches = Array.from({ length: 8 }, () =>
      Array.from(
        { length: 10 },
        () =>
          queuedFromSandbox(
            paymentEvent({
              account_number: account.account_number,
              amount: 1_000,
              session_id: nipSessionId(),
            }),
          ) as QueuedEvent & PaymentReceived,
      ),
    );
    const outcomes = (await Promise.all(batches.map((batch) => receivePayments(batch)))).flat();
    const failures = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [String((outcome.reason as Error)?.message ?? outcome.reason)] : [],
    );
    expect(failures).toEqual([]);
    expect(outcomes.map((outcome) => outcome.status === 'fulfilled' && outcome.value)).toEqual(
      outcomes.map(() => 'credited'),
    );
    const after = await getVirtualAccount(merchant.merchant_id, account.reference);
    expect(after).toMatchObject({ amount_received: 80_000, payment_count: 80 });
    expect((await paymentsOf(merchant.merchant_id, account.reference)).payments).toHaveLength(80);
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(80_000);
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });
});
