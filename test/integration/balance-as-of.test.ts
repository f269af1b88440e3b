import { describe, expect, it, vi } from 'vitest';
import { getMerchant } from '#shared/merchants/store.ts';
import type { PaymentReceived, QueuedEvent } from '#shared/partners/partner.ts';
import { receivePayments } from '#shared/payments/credit.ts';
import { queuedFromSandbox } from '#test/support/events.ts';
import { call, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, aPendingTransfer, fund } from '#test/support/merchants.ts';
import { nipSessionId, paymentEvent } from '#test/support/payments.ts';

/**
 * A finance team's check: the balance as of its `updated_at` is the history up to that time. The
 * balance's time is its last entry's, not a clock read before the entries were dated.
 */
describe("GET /balance's updated_at", () => {
  it('is the time of the last transaction in it, for one posting and for a batch credited together', async () => {
    const gateway = await startTestGateway();
    try {
      const { merchant, headers } = await aMerchant();
      await fund(merchant.merchant_id, 10_000);
      const payment = () =>
        queuedFromSandbox(
          paymentEvent({
            account_number: merchant.account_number,
            amount: 1_000,
            session_id: nipSessionId(),
          }),
        ) as QueuedEvent & PaymentReceived;
      const outcomes = await receivePayments([payment(), payment(), payment()]);
      expect(outcomes.map((outcome) => outcome.status === 'fulfilled' && outcome.value)).toEqual([
        'credited',
        'credited',
        'credited',
      ]);
      const balance = (await call(gateway, 'GET', '/balance', { headers })).body?.data as {
        balance: number;
        updated_at: string;
      };
      expect(balance.balance).toBe(13_000);
      const newest = (await call(gateway, 'GET', '/transactions?limit=1', { headers })).body?.data as {
        created_at: string;
        balance_after: number;
      }[];
      expect(balance.updated_at).toBe(newest[0]?.created_at);
      // The history up to updated_at, inclusive, ends at the balance.
      const upTo = (
        await call(gateway, 'GET', `/transactions?limit=1&to=${encodeURIComponent(balance.updated_at)}`, {
          headers,
        })
      ).body?.data as { balance_after: number }[];
      expect(upTo[0]?.balance_after).toBe(balance.balance);
      expect((await getMerchant(merchant.merchant_id))?.updated_at).toBe(balance.updated_at);

      // One posting (a transfer's debit, a reversal, an operator's credit) dated ahead of the clock,
      // as a burst dates entries (each a millisecond after the last): its updated_at is the entry's
      // time still, not the clock's. The ledger dates entries by Date.now(); the clock stays behind.
      const ahead = new Date(Date.now() + 2_000).toISOString();
      vi.spyOn(Date, 'now').mockReturnValue(Date.parse(ahead));
      await aPendingTransfer(merchant.merchant_id, `as-of-${nipSessionId()}`, 500, { handedOver: false });
      vi.restoreAllMocks();
      const single = (await call(gateway, 'GET', '/balance', { headers })).body?.data as {
        balance: number;
        updated_at: string;
      };
      const latest = (await call(gateway, 'GET', '/transactions?limit=1', { headers })).body?.data as
        | { created_at: string }[]
        | undefined;
      // 13,000 less the transfer's 500 and its fee of 1,000.
      expect([single.balance, single.updated_at]).toEqual([11_500, latest?.[0]?.created_at]);
      expect(Date.parse(single.updated_at)).toBeGreaterThanOrEqual(Date.parse(ahead));
    } finally {
      await gateway.close();
    }
  });
});
