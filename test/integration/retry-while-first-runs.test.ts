import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { BankNotSupported, PartnerUnavailable } from '#shared/errors.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { partner } from '#shared/partners/registry.ts';
import { createVirtualAccount } from '#shared/payments/virtual-account-opening.ts';
import { createTransfer } from '#shared/transfers/transfers.ts';
import { call, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, fund } from '#test/support/merchants.ts';

/**
 * A client's retry while its first request is still running: the first made the transfer (the
 * account, the beneficiary), and the retry's own call to the partner failed (slow for the first,
 * timed out for the retry). The retry is answered with what was made, never with a 503 saying
 * nothing was, which would have the client pay (or open, or save) again some other way.
 */
afterEach(() => {
  vi.restoreAllMocks();
});

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

describe('a retried transfer whose own checks fail', () => {
  it('is answered with the transfer the first request made meanwhile, debited once', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const request = {
      reference: `retry-${Math.random().toString(36).slice(2, 10)}`,
      amount: 5_000,
      account_number: anAccount('058'),
      bank_code: '058',
    };
    const enquiry = partner().nameEnquiry.bind(partner());
    vi.spyOn(partner(), 'nameEnquiry').mockImplementationOnce(async () => {
      // The first request, running all along, makes the transfer (its own enquiry answered) ...
      vi.mocked(partner().nameEnquiry).mockImplementation(enquiry);
      await createTransfer(merchant.merchant_id, request);
      // ... while the retry's enquiry times out.
      throw new PartnerUnavailable(30);
    });
    const retry = await createTransfer(merchant.merchant_id, request);
    expect(retry.created).toBe(false);
    expect(retry.transaction).toMatchObject({ reference: request.reference, amount: 5_000 });
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(20_000 - 5_000 - retry.transaction.fee);
  });

  it('fails as before when nothing was made under its reference', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    vi.spyOn(partner(), 'nameEnquiry').mockRejectedValueOnce(new PartnerUnavailable(30));
    await expect(
      createTransfer(merchant.merchant_id, {
        reference: `none-${Math.random().toString(36).slice(2, 10)}`,
        amount: 5_000,
        account_number: anAccount('058'),
        bank_code: '058',
      }),
    ).rejects.toBeInstanceOf(PartnerUnavailable);
    expect((await getMerchant(merchant.merchant_id))?.balance).toBe(20_000);
  });
});

describe('a retried virtual account whose issue fails', () => {
  it('is answered with the account the first request opened meanwhile', async () => {
    const { merchant } = await aMerchant();
    const request = {
      reference: `va-retry-${Math.random().toString(36).slice(2, 10)}`,
      amount: 50_000,
      expires_in_minutes: 30,
    };
    const issue = partner().openVirtualAccount.bind(partner());
    let first: Awaited<ReturnType<typeof createVirtualAccount>> | undefined;
    vi.spyOn(partner(), 'openVirtualAccount').mockImplementationOnce(async () => {
      vi.mocked(partner().openVirtualAccount).mockImplementation(issue);
      first = await createVirtualAccount(merchant.merchant_id, merchant.name, request);
      throw new PartnerUnavailable(30);
    });
    const retry = await createVirtualAccount(merchant.merchant_id, merchant.name, request);
    expect(first?.created).toBe(true);
    expect(retry).toEqual({ account: first?.account, created: false });
  });
});

/**
 * Another request under a reference, made while the first one runs: it read nothing under the
 * reference, so its 409 must come from the paths that answer a retry with what the first made.
 */
describe('a different request that loses the race for its reference', () => {
  const reference = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

  it.each([
    ['its account named', false],
    ['its own checks failed', true],
  ])(
    'is refused 409 duplicate_reference for a transfer when %s, never answered with the winner',
    async (_, timesOut) => {
      const { merchant } = await aMerchant();
      await fund(merchant.merchant_id, 20_000);
      const first = {
        reference: reference('race'),
        amount: 5_000,
        account_number: anAccount('058'),
        bank_code: '058',
      };
      const other = { ...first, amount: 6_000 };
      const enquiry = partner().nameEnquiry.bind(partner());
      vi.spyOn(partner(), 'nameEnquiry').mockImplementationOnce(async (bank, account) => {
        // While `other` checks its account, `first` is made; then `other` goes on to the debit (which
        // finds the reference taken) or, its enquiry timed out, looks for what was made.
        vi.mocked(partner().nameEnquiry).mockImplementation(enquiry);
        expect((await createTransfer(merchant.merchant_id, first)).created).toBe(true);
        if (timesOut) throw new PartnerUnavailable(30);
        return enquiry(bank, account);
      });
      await expect(createTransfer(merchant.merchant_id, other)).rejects.toMatchObject({
        code: 'duplicate_reference',
      });
      expect((await getMerchant(merchant.merchant_id))?.balance).toBe(20_000 - 5_000 - 1_000);
    },
  );

  it.each([
    ['its account issued', false],
    ['its issue failed', true],
  ])(
    'is refused 409 duplicate_reference for a virtual account when %s, never answered with the winner',
    async (_, fails) => {
      const { merchant } = await aMerchant();
      const first = { reference: reference('va-race'), amount: 50_000, expires_in_minutes: 30 };
      const issue = partner().openVirtualAccount.bind(partner());
      vi.spyOn(partner(), 'openVirtualAccount').mockImplementationOnce(async (order) => {
        vi.mocked(partner().openVirtualAccount).mockImplementation(issue);
        expect((await createVirtualAccount(merchant.merchant_id, merchant.name, first)).created).toBe(true);
        if (fails) throw new PartnerUnavailable(30);
        return issue(order);
      });
      await expect(
        createVirtualAccount(merchant.merchant_id, merchant.name, { ...first, amount: 60_000 }),
      ).rejects.toMatchObject({ code: 'duplicate_reference' });
    },
  );
});

describe('a retried beneficiary whose name enquiry fails', () => {
  it('is answered 200 with the beneficiary the first request saved meanwhile', async () => {
    const { headers } = await aMerchant();
    const body = { account_number: anAccount('058'), bank_code: '058', nickname: 'Supplier' };
    const enquiry = partner().nameEnquiry.bind(partner());
    let first: Awaited<ReturnType<typeof call>> | undefined;
    vi.spyOn(partner(), 'nameEnquiry').mockImplementationOnce(async () => {
      vi.mocked(partner().nameEnquiry).mockImplementation(enquiry);
      first = await call(gateway, 'POST', '/beneficiaries', { headers, body });
      throw new PartnerUnavailable(30);
    });
    const retry = await call(gateway, 'POST', '/beneficiaries', { headers, body });
    expect(first?.status).toBe(201);
    expect([retry.status, retry.body?.message]).toEqual([200, 'Beneficiary already saved']);
    expect(retry.body?.data).toEqual(first?.body?.data);

    // A refusal of the saved account is said as ever: only a partner that did not answer is covered.
    vi.spyOn(partner(), 'checkBank').mockRejectedValueOnce(new BankNotSupported());
    const unpaid = await call(gateway, 'POST', '/beneficiaries', { headers, body });
    expect([unpaid.status, unpaid.body?.code]).toEqual([422, 'bank_not_supported']);
    const both = await call(gateway, 'POST', '/beneficiaries', {
      headers,
      body: { ...body, session_id: 'ses_doesnotexist0000' },
    });
    expect([both.status, both.body?.code]).toEqual([400, 'validation_error']);
  });
});
