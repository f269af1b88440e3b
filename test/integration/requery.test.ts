import { afterEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { OVERDUE_TRANSFER } from '#shared/definitions/alerts.ts';
import { PartnerUnavailable } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { partner } from '#shared/partners/registry.ts';
import { getTransaction } from '#shared/transactions/store.ts';
import { dispatchTransfer } from '#shared/transfers/dispatch.ts';
import { requeryPendingTransfers } from '#shared/transfers/requery.ts';
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

describe('the requery of pending transfers (API.md §7)', () => {
  it('never settles by guess a transfer the partner does not know, and reports it to operators once overdue', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `lost-${Math.random().toString(36).slice(2, 10)}`;
    // Debited and pending, but never handed to the partner (a crash between debit and send).
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    const errors = vi.spyOn(logger, 'error');

    const early = await requeryPendingTransfers(Date.now() + 10_000);
    expect(early.checked).toBeGreaterThanOrEqual(1);
    expect(overdueReports(errors, reference)).toEqual([]);

    const dayLater = Date.now() + 25 * 3600 * 1000;
    const late = await requeryPendingTransfers(dayLater);
    expect(late.overdue).toBeGreaterThanOrEqual(1);
    const reported = overdueReports(errors, reference);
    expect(reported).toHaveLength(1);
    expect(reported[0]?.[1]).toMatchObject({ known_to_partner: false, merchant_id: merchant.merchant_id });
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(14_000);
  });

  it('never asks or resends through this partner a transfer sent through another (PARTNER switched), and reports it at once', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `switched-${Math.random().toString(36).slice(2, 10)}`;
    const other = partner().name === 'sandbox' ? 'paystack' : 'sandbox';
    await aPendingTransfer(merchant.merchant_id, reference, 5_000, 1_000, undefined, other);
    const asked = vi.spyOn(partner(), 'queryTransfer');
    const sent = vi.spyOn(partner(), 'sendTransfer');
    const errors = vi.spyOn(logger, 'error');

    // A minute old, far from the alert window: reported already, its money being out of reach.
    const round = await requeryPendingTransfers(Date.now() + 60_000);
    const reported = overdueReports(errors, reference);
    expect(reported).toHaveLength(1);
    expect(reported[0]?.[1]).toMatchObject({ partner: other, configured_partner: partner().name });
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
    const reported = overdueReports(errors, reference);
    expect(reported).toHaveLength(1);
    expect(reported[0]?.[1]).toMatchObject({ known_to_partner: 'unanswered' });
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
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
