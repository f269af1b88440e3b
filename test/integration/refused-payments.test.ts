import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { openWithIssuedAccount } from '#shared/accounts/issue.ts';
import { tableName } from '#shared/aws/clients.ts';
import { logger } from '#shared/logger.ts';
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
async function anAccountOf(
  merchantId: string,
  email: string,
  opened: number,
  closes: number,
  { paid = false } = {},
) {
  const reference = `va-${unique()}`;
  const chargeId = `charge:${unique()}`;
  await openWithIssuedAccount(
    'virtual_account',
    async () => ({
      account_number: anAccount('058', '3'),
      account_name: 'Ada Obi',
      bank_code: '058',
      account_ids: [chargeId],
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
        amount_received: paid ? 50_000 : 0,
        payment_count: paid ? 1 : 0,
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
  return { merchantId, reference, chargeId };
}

/**
 * The partner refuses a payment to the customer of `email`: dated `refusedAt` (its own time) or
 * undated (Paystack's samples), received at `receivedAt`. Returns its kept id and the event, to
 * deliver again.
 */
async function refuse(
  email: string,
  { dated = true, receivedAt = refusedAt + 5_000, attemptId = unique(), accountIds = [] as string[] } = {},
) {
  const event: QueuedEvent & PaymentRejected = {
    type: 'PaymentRejected',
    partner: partner().name,
    attempt_id: attemptId,
    account_ids: accountIds,
    alias_ids: [`email:${email}`],
    amount: 12_345,
    reason: 'incorrect amount sent',
    rejected_at: dated ? iso(refusedAt) : null,
    delivery_id: `msg_${unique()}`,
    received_at: iso(receivedAt),
  };
  await receiveRejectedPayment(event);
  return { id: `rejected:${attemptId}`, attemptId, at: dated ? iso(refusedAt) : iso(receivedAt) };
}

const refusalsOn = async (account: { merchantId: string; reference: string }) =>
  (await paymentsOf(account.merchantId, account.reference)).rejected;
const keptReason = async (id: string) => (await unmatchedOf(partner().name, id))[0]?.reason;
const listedAt = (at: string) => [{ amount: 12_345, reason: 'incorrect amount sent', received_at: at }];
const anEmail = () => `ada-${unique()}@example.ng`;

describe('a refused payment named by its customer email only', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  /** The warnings that a refusal could not be told to one merchant. */
  const sharedWarnings = (warn: MockInstance<typeof logger.warn>) =>
    warn.mock.calls.filter(([message]) => String(message).includes('cannot be told to one merchant'));

  it('is listed on the one account open at its time, not on one closed before or opened after it', async () => {
    const email = anEmail();
    const [a, b, c] = [await aMerchant(), await aMerchant(), await aMerchant()];
    const closedBefore = await anAccountOf(
      a.merchant.merchant_id,
      email,
      refusedAt - 4 * HOUR,
      refusedAt - HOUR,
    );
    const open = await anAccountOf(b.merchant.merchant_id, email, refusedAt - HOUR, refusedAt + HOUR);
    const openedAfter = await anAccountOf(
      c.merchant.merchant_id,
      email,
      refusedAt + 10 * 60_000,
      refusedAt + HOUR,
    );
    const { id, at } = await refuse(email);
    expect(await refusalsOn(open)).toEqual(listedAt(at));
    expect(await refusalsOn(closedBefore)).toEqual([]);
    expect(await refusalsOn(openedAfter)).toEqual([]);
    expect(await keptReason(id)).toBeUndefined();
  });

  it('is kept for operators when accounts of two merchants carried the email at its time, listed on neither', async () => {
    const email = anEmail();
    const [a, b] = [await aMerchant(), await aMerchant()];
    const first = await anAccountOf(a.merchant.merchant_id, email, refusedAt - HOUR, refusedAt + HOUR);
    const second = await anAccountOf(b.merchant.merchant_id, email, refusedAt - HOUR, refusedAt + HOUR);
    const warn = vi.spyOn(logger, 'warn');
    const { id } = await refuse(email);
    // Operators are warned of a refusal two merchants could claim.
    expect(sharedWarnings(warn)).toHaveLength(1);
    expect(await refusalsOn(first)).toEqual([]);
    expect(await refusalsOn(second)).toEqual([]);
    expect(await keptReason(id)).toMatch(/open virtual accounts of 2 merchants \(shared email\)/);
    // Operators see the email that names both accounts, and both accounts.
    const [kept] = await unmatchedOf(partner().name, id);
    if (!kept) throw new Error('not kept');
    expect(toOperatorView(kept)).toMatchObject({ kind: 'refused_attempt', account_ids: [`email:${email}`] });
    expect(kept.reason).toContain(`${b.merchant.merchant_id}/${second.reference}`);
  });

  it("undated, arriving late: another merchant's account of the email opened since does not get it", async () => {
    // Refused at refusedAt on a's account (closed since), delivered 3 hours later: our webhook was
    // down and Paystack retried. b opened an account for the same email in the meantime.
    const email = anEmail();
    const [a, b] = [await aMerchant(), await aMerchant()];
    const meant = await anAccountOf(
      a.merchant.merchant_id,
      email,
      refusedAt - HOUR / 2,
      refusedAt + HOUR / 2,
    );
    const other = await anAccountOf(
      b.merchant.merchant_id,
      email,
      refusedAt + 2 * HOUR,
      refusedAt + 4 * HOUR,
    );
    const { id } = await refuse(email, { dated: false, receivedAt: refusedAt + 3 * HOUR });
    expect(await refusalsOn(other)).toEqual([]);
    expect(await refusalsOn(meant)).toEqual([]);
    expect(await keptReason(id)).toMatch(/of 2 merchants/);
    // An account closed more than 72 hours before it arrived is not a candidate.
    const email2 = anEmail();
    await anAccountOf(a.merchant.merchant_id, email2, refusedAt - 80 * HOUR, refusedAt - 74 * HOUR);
    const open = await anAccountOf(b.merchant.merchant_id, email2, refusedAt - HOUR, refusedAt + HOUR);
    const late = await refuse(email2, { dated: false, receivedAt: refusedAt });
    expect(await refusalsOn(open)).toEqual(listedAt(late.at));
  });

  it("of one merchant's customer is listed on its newest account not yet paid, a repeat customer's too", async () => {
    const email = anEmail();
    const m = (await aMerchant()).merchant.merchant_id;
    const paidYesterday = await anAccountOf(m, email, refusedAt - 26 * HOUR, refusedAt - 25 * HOUR, {
      paid: true,
    });
    const older = await anAccountOf(m, email, refusedAt - 2 * HOUR, refusedAt + HOUR);
    const newest = await anAccountOf(m, email, refusedAt - HOUR, refusedAt + HOUR);
    const paidNewer = await anAccountOf(m, email, refusedAt - HOUR / 2, refusedAt + HOUR, { paid: true });
    const { id, at } = await refuse(email, { dated: false, receivedAt: refusedAt });
    expect(await refusalsOn(newest)).toEqual(listedAt(at));
    for (const account of [paidYesterday, older, paidNewer]) expect(await refusalsOn(account)).toEqual([]);
    expect(await keptReason(id)).toBeUndefined();
  });

  it('is decided once: a redelivery after another merchant opened an account of the email follows the first decision', async () => {
    const email = anEmail();
    const [a, b] = [await aMerchant(), await aMerchant()];
    const meant = await anAccountOf(a.merchant.merchant_id, email, refusedAt - HOUR, refusedAt + HOUR);
    const first = await refuse(email, { dated: false, receivedAt: refusedAt });
    await anAccountOf(b.merchant.merchant_id, email, refusedAt + 60_000, refusedAt + HOUR);
    // Paystack delivers it again five minutes later (its first 200 was lost).
    await refuse(email, { dated: false, receivedAt: refusedAt + 5 * 60_000, attemptId: first.attemptId });
    expect(await refusalsOn(meant)).toEqual(listedAt(first.at));
    expect(await keptReason(first.id)).toBeUndefined();
  });

  it('is kept for operators when no account, or more than ten, carried the email', async () => {
    const m = (await aMerchant()).merchant.merchant_id;
    const email = anEmail();
    const closed = await anAccountOf(m, email, refusedAt - 5 * HOUR, refusedAt - 3 * HOUR);
    const warn = vi.spyOn(logger, 'warn');
    const { id } = await refuse(email);
    expect(await refusalsOn(closed)).toEqual([]);
    expect(await keptReason(id)).toBe('refused payment matches no open virtual account');
    expect(await keptReason((await refuse(anEmail())).id)).toBe(
      'refused payment matches no open virtual account',
    );

    const many = anEmail();
    for (let i = 0; i < 11; i++) await anAccountOf(m, many, refusedAt - HOUR, refusedAt + HOUR);
    // Kept for want of an account is not a warning; kept for too many accounts is.
    expect(sharedWarnings(warn)).toHaveLength(0);
    expect(await keptReason((await refuse(many)).id)).toMatch(/more than 10 virtual accounts/);
    expect(sharedWarnings(warn)).toHaveLength(1);
  });

  it("named by the account's own id, is listed on that account, however long closed, whatever its email names", async () => {
    const email = anEmail();
    const [a, b] = [await aMerchant(), await aMerchant()];
    const closed = await anAccountOf(
      a.merchant.merchant_id,
      email,
      refusedAt - 5 * HOUR,
      refusedAt - 4 * HOUR,
    );
    const other = await anAccountOf(b.merchant.merchant_id, email, refusedAt - HOUR, refusedAt + HOUR);
    const { at } = await refuse(email, { accountIds: [closed.chargeId] });
    expect(await refusalsOn(closed)).toEqual(listedAt(at));
    expect(await refusalsOn(other)).toEqual([]);
  });
});
