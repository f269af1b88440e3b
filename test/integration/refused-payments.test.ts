import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openWithIssuedAccount } from '#shared/accounts/issue.ts';
import { tableName } from '#shared/aws/clients.ts';
import type { PaymentRejected, QueuedEvent } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';
import { receiveRejectedPayment } from '#shared/payments/credit.ts';
import { toOperatorView } from '#shared/payments/operator.ts';
import { unmatchedOf } from '#shared/payments/unmatched.ts';
import { paymentsOf, type VirtualAccount } from '#shared/payments/virtual-accounts.ts';
import { aMerchant, anAccount } from '#test/support/merchants.ts';

/**
 * A refused payment whose partner names only the customer's email (Paystack's bank.transfer.rejected)
 * is listed on the one virtual account that carried the email when it was refused, never on
 * another merchant's. Accounts here are opened as the service opens them, with a partner that
 * issues them under an alias, at the times each case needs.
 */

const HOUR = 3600 * 1000;
/** When the refusals of this file happened. */
const refusedAt = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();
const unique = () => randomBytes(6).toString('hex');

/** A virtual account of `merchantId` carrying `email`, open from `opened` to `closes` (epoch ms). */
async function anAccountOf(merchantId: string, email: string, opened: number, closes: number) {
  const reference = `va-${unique()}`;
  await openWithIssuedAccount(
    'virtual_account',
    async () => ({
      account_number: anAccount('058', '3'),
      account_name: 'Ada Obi',
      bank_code: '058',
      account_ids: [`charge:${unique()}`],
      alias_ids: [`email:${email}`],
      expires_at: iso(closes),
    }),
    (issued) => {
      const account: VirtualAccount = {
        merchant_id: merchantId,
        reference,
        partner: partner().name,
        account_number: issued.account_number,
        account_name: issued.account_name,
        bank_code: issued.bank_code,
        amount: 50_000,
        amount_received: 0,
        payment_count: 0,
        customer: { name: 'Ada Obi', email },
        expires_at: iso(closes),
        created_at: iso(opened),
        fingerprint: 'test',
      };
      return {
        owner: { merchant_id: merchantId, reference, created_at: account.created_at },
        item: { Put: { TableName: tableName('virtualAccounts'), Item: account } },
        result: account,
      };
    },
  );
  return { merchantId, reference };
}

/** The partner refuses a payment to the customer of `email` at `refusedAt`. */
async function refuse(email: string): Promise<string> {
  const event: QueuedEvent & PaymentRejected = {
    type: 'PaymentRejected',
    partner: partner().name,
    attempt_id: unique(),
    account_ids: [],
    alias_ids: [`email:${email}`],
    amount: 12_345,
    reason: 'incorrect amount sent',
    rejected_at: iso(refusedAt),
    delivery_id: `msg_${unique()}`,
    received_at: iso(refusedAt + 5_000),
  };
  await receiveRejectedPayment(event);
  return `rejected:${event.attempt_id}`;
}

const refusalsOn = async (account: { merchantId: string; reference: string }) =>
  (await paymentsOf(account.merchantId, account.reference)).rejected;
const keptReason = async (id: string) => (await unmatchedOf(partner().name, id))[0]?.reason;

describe('a refused payment named by its customer email only', () => {
  it('is listed on the one account the email was open on, not on an account closed long before or opened after', async () => {
    const email = `ada-${unique()}@example.ng`;
    const [a, b, c] = [await aMerchant(), await aMerchant(), await aMerchant()];
    const closedLongBefore = await anAccountOf(
      a.merchant.merchant_id,
      email,
      refusedAt - 4 * HOUR,
      refusedAt - 2 * HOUR,
    );
    const open = await anAccountOf(b.merchant.merchant_id, email, refusedAt - HOUR, refusedAt + HOUR);
    const openedAfter = await anAccountOf(
      c.merchant.merchant_id,
      email,
      refusedAt + 60_000,
      refusedAt + 2 * HOUR,
    );
    const id = await refuse(email);
    expect(await refusalsOn(open)).toEqual([
      { amount: 12_345, reason: 'incorrect amount sent', received_at: iso(refusedAt) },
    ]);
    expect(await refusalsOn(closedLongBefore)).toEqual([]);
    expect(await refusalsOn(openedAfter)).toEqual([]);
    expect(await keptReason(id)).toBeUndefined();
  });

  it('is listed on no account and kept for operators when two accounts were open on the email, of one merchant or two', async () => {
    const m = await aMerchant();
    const other = await aMerchant();
    for (const second of [m, other]) {
      const email = `ada-${unique()}@example.ng`;
      const first = await anAccountOf(m.merchant.merchant_id, email, refusedAt - HOUR, refusedAt + HOUR);
      // Closed 30 minutes before the refusal was received: the partner may have refused it then.
      const recent = await anAccountOf(
        second.merchant.merchant_id,
        email,
        refusedAt - HOUR,
        refusedAt - HOUR / 2,
      );
      const id = await refuse(email);
      expect(await refusalsOn(first)).toEqual([]);
      expect(await refusalsOn(recent)).toEqual([]);
      expect(await keptReason(id)).toContain('several open virtual accounts');
      // Operators see the email that names both accounts.
      const [kept] = await unmatchedOf(partner().name, id);
      if (!kept) throw new Error('not kept');
      expect(toOperatorView(kept)).toMatchObject({
        kind: 'refused_attempt',
        account_ids: [`email:${email}`],
      });
    }
  });

  it('is kept for operators when no account was open on the email', async () => {
    const m = await aMerchant();
    const email = `ada-${unique()}@example.ng`;
    const closed = await anAccountOf(
      m.merchant.merchant_id,
      email,
      refusedAt - 5 * HOUR,
      refusedAt - 3 * HOUR,
    );
    const id = await refuse(email);
    expect(await refusalsOn(closed)).toEqual([]);
    expect(await keptReason(id)).toBe('refused payment matches no open virtual account');
    expect(await keptReason(await refuse(`nobody-${unique()}@example.ng`))).toBe(
      'refused payment matches no open virtual account',
    );
  });
});
