import { afterEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { handler as requeryHandler } from '#functions/requery-transfers.ts';
import { config, MAX_PARTNER_TIMEOUT_MS } from '#shared/config.ts';
import { OVERDUE_TRANSFER } from '#shared/definitions/alerts.ts';
import { REQUERY_TIMEOUT_SECONDS } from '#shared/definitions/routes.ts';
import { PartnerAnswerUnreadable, PartnerUnavailable } from '#shared/errors.ts';
import { auditMerchant } from '#shared/ledger/audit.ts';
import { logger } from '#shared/logger.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import type { BankingPartner } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';
import { getTransaction } from '#shared/transactions/store.ts';
import { dispatchTransfer, resendHoldMs } from '#shared/transfers/dispatch.ts';
import { requeryPendingTransfers } from '#shared/transfers/requery.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';
import { aMerchant, aPendingTransfer, fund } from '#test/support/merchants.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The operator reports of one transfer among the logged errors. */
function overdueReports(errors: MockInstance<typeof logger.error>, reference: string) {
  return errors.mock.calls.filter(
    ([message, details]) =>
      message === OVERDUE_TRANSFER &&
      (details as { reference?: string } | undefined)?.reference === reference,
  );
}

/** The transfer was reported overdue exactly once, saying what `details` holds. */
function expectOneOverdueReport(
  errors: MockInstance<typeof logger.error>,
  reference: string,
  details: Record<string, unknown>,
): void {
  const reported = overdueReports(errors, reference);
  expect(reported).toHaveLength(1);
  expect(reported[0]?.[1]).toMatchObject(details);
}

/**
 * A merchant funded with 20,000 and a transfer of 5,000 (fee 1,000) debited and pending but never
 * handed to the partner (a crash between debit and send), with no retry of the merchant's to come;
 * and the sends of it the spy `sent` saw.
 */
async function aNeverSentTransfer(label: string) {
  const { merchant } = await aMerchant();
  await fund(merchant.merchant_id, 20_000);
  const reference = `${label}-${Math.random().toString(36).slice(2, 10)}`;
  await aPendingTransfer(merchant.merchant_id, reference, 5_000, { handedOver: false });
  const pending = await getTransaction(merchant.merchant_id, reference);
  const sendsOf = (sent: MockInstance<BankingPartner['sendTransfer']>) =>
    sent.mock.calls.filter(([order]) => order.reference === pending?.partner_reference);
  return { merchant, reference, pending, sendsOf };
}

describe('the requery of pending transfers (API.md §7)', () => {
  it('sends again a transfer the partner does not know (a crash between debit and send): paid once', async () => {
    // Debited and pending, but never handed to the partner, and no retry of the merchant's will come.
    const { merchant, reference, pending, sendsOf } = await aNeverSentTransfer('lost');
    const sent = vi.spyOn(partner(), 'sendTransfer');
    const sendsOfIt = () => sendsOf(sent);

    // Past TRANSFER_REQUERY_AFTER_SECONDS by the round's clock (the runtime's own round, on the
    // real clock, has not reached it yet): asked, unknown, sent again under the same reference.
    const round = await requeryPendingTransfers(Date.now() + 10_000);
    expect(round.resent).toBeGreaterThanOrEqual(1);
    expect(sendsOfIt()).toHaveLength(1);
    // Its first hand-over: a refusal would be final (nothing was sent before).
    expect(sendsOfIt()[0]?.[0]).toMatchObject({ resend: false, amount: 5_000 });
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('success');
    expect(await partner().queryTransfer(pending?.partner_reference ?? '')).toMatchObject({
      status: 'success',
    });
    // Debited once, never refunded; and a later round sends nothing more.
    await requeryPendingTransfers(Date.now() + 20_000);
    expect(sendsOfIt()).toHaveLength(1);
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(14_000);
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });

  it('sends it again in a round of its function (50 s) even with the longest partner call allowed', async () => {
    const { merchant, reference, sendsOf } = await aNeverSentTransfer('slow-partner');
    const sent = vi.spyOn(partner(), 'sendTransfer');
    const timeoutMs = config.partner.timeoutMs;
    (config.partner as { timeoutMs: number }).timeoutMs = MAX_PARTNER_TIMEOUT_MS;
    // Pending past TRANSFER_REQUERY_AFTER_SECONDS (2 s in tests) on the clock the function reads,
    // 10 s ahead here: waiting on the real clock would let the test runtime's own round (every
    // second, in another process) send it first.
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 10_000);
    try {
      await requeryHandler({}, { getRemainingTimeInMillis: () => REQUERY_TIMEOUT_SECONDS * 1000 });
    } finally {
      vi.mocked(Date.now).mockRestore();
      (config.partner as { timeoutMs: number }).timeoutMs = timeoutMs;
    }
    expect(sendsOf(sent)).toHaveLength(1);
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('success');
  });

  it('never fails by guess a transfer the partner will not show: sent again, then held, and reported once overdue', async () => {
    const { merchant, reference, sendsOf } = await aNeverSentTransfer('refused');
    // The partner refuses the resend yet does not show the transfer (Paystack's adapter answers
    // such a refusal pending: an earlier send may still be in the making).
    const sent = vi.spyOn(partner(), 'sendTransfer').mockResolvedValue({ status: 'pending' });
    const sendsOfIt = () => sendsOf(sent);
    const errors = vi.spyOn(logger, 'error');

    const before = Date.now();
    await requeryPendingTransfers(Date.now() + 10_000);
    expect(sendsOfIt()).toHaveLength(1);
    const held = await getTransaction(merchant.merchant_id, reference);
    expect(held).toMatchObject({ status: 'pending', dispatches: 1 });
    // Held a minute after its first hand-over (then 2, 4 … 64: resendHoldMs).
    expect(held?.resend_after).toBeGreaterThanOrEqual(before + resendHoldMs(1));
    expect(held?.resend_after).toBeLessThanOrEqual(Date.now() + resendHoldMs(1));

    // Within the hold: asked, not sent. A day later: reported to operators, still pending, still held.
    await requeryPendingTransfers(Date.now() + 20_000);
    expect(sendsOfIt()).toHaveLength(1);
    expect(overdueReports(errors, reference)).toEqual([]);
    const late = await requeryPendingTransfers(Date.now() + 25 * 3600 * 1000);
    expect(late.overdue).toBeGreaterThanOrEqual(1);
    expectOneOverdueReport(errors, reference, { known_to_partner: false, merchant_id: merchant.merchant_id });
    expect(sendsOfIt()).toHaveLength(1);
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(14_000);
  });

  it('holds a resend whose send failed too, so a send that fails every time is not made every round', async () => {
    const { merchant, reference, sendsOf } = await aNeverSentTransfer('failing');
    // The partner fails every send the same way (down, or a recipient it answers for another account).
    const sent = vi
      .spyOn(partner(), 'sendTransfer')
      .mockRejectedValue(new PartnerUnavailable(30, 'recipient answered for another account'));
    const sendsOfIt = () => sendsOf(sent);
    const before = Date.now();
    await requeryPendingTransfers(Date.now() + 10_000);
    expect(sendsOfIt()).toHaveLength(1);
    expect((await getTransaction(merchant.merchant_id, reference))?.resend_after).toBeGreaterThanOrEqual(
      before + resendHoldMs(1),
    );
    await requeryPendingTransfers(Date.now() + 20_000);
    expect(sendsOfIt()).toHaveLength(1);
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
  });

  it('sends once for concurrent retries past the hold, each of which read the same transfer', async () => {
    const { merchant, reference, sendsOf } = await aNeverSentTransfer('concurrent');
    // Handed over once, answered pending (the partner shows nothing yet), then its hold passes.
    const sent = vi.spyOn(partner(), 'sendTransfer').mockResolvedValue({ status: 'pending' });
    const sendsOfIt = () => sendsOf(sent);
    await requeryPendingTransfers(Date.now() + 10_000);
    expect(sendsOfIt()).toHaveLength(1);
    const { holdResends } = await import('#shared/transactions/store.ts');
    await holdResends(merchant.merchant_id, reference, Date.now() - 1);
    const held = await getTransaction(merchant.merchant_id, reference);
    if (!held) throw new Error('no transfer');
    expect(held.dispatches).toBe(1);

    // Five retries of the merchant's at once, each with the transfer as it read it: one sends.
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => dispatchTransfer(held, { retry: true })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(5).fill('pending'));
    expect(sendsOfIt()).toHaveLength(2);
    expect(sendsOfIt()[1]?.[0]).toMatchObject({ resend: true, reference: held.partner_reference });
    // One hand-over counted: the next hold is the second's (2 minutes), not the sixth's.
    const after = await getTransaction(merchant.merchant_id, reference);
    expect(after?.dispatches).toBe(2);
    // A read from before that hand-over sends nothing even once the hold has passed again.
    await holdResends(merchant.merchant_id, reference, Date.now() - 1);
    expect((await dispatchTransfer(held, { retry: true })).dispatches).toBe(2);
    expect(sendsOfIt()).toHaveLength(2);
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(14_000);
    // Held out of the later tests' rounds (the partner never made it: the send was mocked).
    await holdResends(merchant.merchant_id, reference, Date.now() + 7 * 24 * 3600 * 1000);
  });

  it('holds resends 1, 2, 4 … 64 minutes after each hand-over answered pending or failed', () => {
    expect([1, 2, 3, 4, 7, 8, 50].map((dispatch) => resendHoldMs(dispatch) / 60_000)).toEqual([
      1, 2, 4, 8, 64, 64, 64,
    ]);
  });

  it('never asks or resends through this partner a transfer sent through another (PARTNER switched), and reports it at once', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `switched-${Math.random().toString(36).slice(2, 10)}`;
    const other = partner().name === 'sandbox' ? 'paystack' : 'sandbox';
    await aPendingTransfer(merchant.merchant_id, reference, 5_000, { through: other });
    const asked = vi.spyOn(partner(), 'queryTransfer');
    const sent = vi.spyOn(partner(), 'sendTransfer');
    const errors = vi.spyOn(logger, 'error');

    // A minute old, far from the alert window: reported already, its money being out of reach.
    const round = await requeryPendingTransfers(Date.now() + 60_000);
    expectOneOverdueReport(errors, reference, { partner: other, configured_partner: partner().name });
    expect(round.overdue).toBeGreaterThanOrEqual(1);
    // The merchant's retry answers it as it stands: pending, not sent through this partner.
    const pending = await getTransaction(merchant.merchant_id, reference);
    if (!pending) throw new Error('no transfer');
    expect((await dispatchTransfer(pending, { retry: true })).status).toBe('pending');
    expect(asked.mock.calls.flat()).not.toContain(pending.partner_reference);
    expect(sent).not.toHaveBeenCalled();
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(14_000);
  });

  it('asks nothing once its deadline passed, and still reports the overdue transfers it did not ask about', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `late-${Math.random().toString(36).slice(2, 10)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    const asked = vi.spyOn(partner(), 'queryTransfer');
    const errors = vi.spyOn(logger, 'error');
    const round = await requeryPendingTransfers(Date.now() + 25 * 3600 * 1000, { deadline: Date.now() - 1 });
    expect(round.checked).toBe(0);
    expect(round.notAsked).toBeGreaterThanOrEqual(1);
    expect(asked).not.toHaveBeenCalled();
    expect(overdueReports(errors, reference)[0]?.[1]).toMatchObject({ known_to_partner: 'not asked' });
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
  });

  it('reports an overdue transfer to operators also when the partner does not answer the query', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `unanswered-${Math.random().toString(36).slice(2, 10)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    vi.spyOn(partner(), 'queryTransfer').mockRejectedValue(new PartnerUnavailable(30, 'down'));
    const errors = vi.spyOn(logger, 'error');
    const late = await requeryPendingTransfers(Date.now() + 25 * 3600 * 1000);
    expect(late.unanswered).toBeGreaterThanOrEqual(1);
    expectOneOverdueReport(errors, reference, { known_to_partner: 'unanswered' });
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
  });

  it('reports how the partner answered when its answer settles nothing (another reference), not as unanswered', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `unreadable-${Math.random().toString(36).slice(2, 10)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    vi.spyOn(partner(), 'queryTransfer').mockRejectedValue(
      new PartnerAnswerUnreadable(30, 'it names another reference'),
    );
    const errors = vi.spyOn(logger, 'error');
    const round = await requeryPendingTransfers(Date.now() + 25 * 3600 * 1000);
    expect(round.unreadable).toBeGreaterThanOrEqual(1);
    expectOneOverdueReport(errors, reference, {
      known_to_partner: 'answered, settling nothing: it names another reference',
    });
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
  });

  it('reports an overdue transfer the partner keeps answering pending, and leaves it pending', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `stuck-${Math.random().toString(36).slice(2, 10)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    vi.spyOn(partner(), 'queryTransfer').mockResolvedValue({ status: 'pending' });
    const errors = vi.spyOn(logger, 'error');
    // Within the alert window: asked, not reported. Past it (API.md §9): reported, never settled by guess.
    await requeryPendingTransfers(Date.now() + 10_000);
    expect(overdueReports(errors, reference)).toEqual([]);
    const late = await requeryPendingTransfers(Date.now() + 25 * 3600 * 1000);
    expect(late.overdue).toBeGreaterThanOrEqual(1);
    expectOneOverdueReport(errors, reference, { known_to_partner: true, merchant_id: merchant.merchant_id });
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
  });

  it('asks no more about a transfer once it is final: settled ones leave the pending index', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const [paid, failed] = [`final-ok-${Date.now()}`, `final-failed-${Date.now()}`];
    for (const reference of [paid, failed]) await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    const paidRecord = await getTransaction(merchant.merchant_id, paid);
    const failedRecord = await getTransaction(merchant.merchant_id, failed);
    if (!paidRecord || !failedRecord) throw new Error('no pending transfers');
    await settleTransfer(paidRecord, { status: 'success' });
    await settleTransfer(failedRecord, {
      status: 'failed',
      reason: 'Beneficiary bank rejected the transfer',
    });
    const asked = vi.spyOn(partner(), 'queryTransfer');
    await requeryPendingTransfers(Date.now() + 10_000);
    const askedAbout = new Set(asked.mock.calls.map(([ref]) => ref));
    expect(askedAbout.has(paidRecord.partner_reference ?? '')).toBe(false);
    expect(askedAbout.has(failedRecord.partner_reference ?? '')).toBe(false);
  });

  it('asks only about transfers pending longer than TRANSFER_REQUERY_AFTER_SECONDS (2 s in tests)', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `young-${Math.random().toString(36).slice(2, 10)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    const transfer = await getTransaction(merchant.merchant_id, reference);
    const created = Date.parse(transfer?.created_at ?? '');
    const asked = vi.spyOn(partner(), 'queryTransfer');
    const askedAboutIt = () => asked.mock.calls.some(([ref]) => ref === transfer?.partner_reference);

    await requeryPendingTransfers(created + 1_000);
    expect(askedAboutIt()).toBe(false);
    await requeryPendingTransfers(created + 2_000);
    expect(askedAboutIt()).toBe(true);
  });
});
