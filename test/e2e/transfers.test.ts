import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { toNuban } from '#shared/banks/nuban.ts';
import { auditMerchant, entriesOf } from '#shared/ledger/audit.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, fund } from '#test/support/merchants.ts';

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
const ref = () => `ref-${Math.random().toString(36).slice(2, 12)}`;
const transfer = (m: Merchant, body: Record<string, unknown>) =>
  call(gateway, 'POST', '/api/v1/developer/transfers', { body, headers: m.headers });
const balanceOf = async (m: Merchant) => (await getMerchant(m.merchant.merchant_id))?.balance;

/**
 * A transfer of 5,000 (fee 1,000) from a new merchant holding 20,000 to a sandbox account whose
 * serial starts with `prefix`: answered pending (201), its money held.
 */
async function sendPending(prefix: string) {
  const m = await aMerchant();
  await fund(m.merchant.merchant_id, 20_000);
  const body = {
    reference: ref(),
    amount: 5_000,
    account_number: anAccount('011', prefix),
    bank_code: '011',
  };
  const response = await transfer(m, body);
  expect(response.status).toBe(201);
  expect(data(response).status).toBe('pending');
  expect(await balanceOf(m)).toBe(14_000);
  return { m, body };
}

describe('POST /transfers', () => {
  it('debits amount + fee, asks the partner, and answers 201 with a successful transaction', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 1_000_000);
    const account = anAccount('058');
    const reference = ref();
    const response = await transfer(m, {
      reference,
      amount: 250_000,
      account_number: account,
      bank_code: '058',
      narration: 'Invoice 42',
    });
    expect(response.status).toBe(201);
    expect(response.body).toStrictEqual({
      status: 'success',
      message: expect.any(String),
      data: {
        reference,
        type: 'debit',
        category: 'transfer',
        amount: 250_000,
        fee: 1_000,
        currency: 'NGN',
        status: 'success',
        narration: 'Invoice 42',
        counterparty: { account_name: expect.any(String), account_number: account, bank_code: '058' },
        balance_after: 749_000,
        reason: null,
        virtual_account_reference: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    expect(await balanceOf(m)).toBe(749_000);
  });

  it('debits once for 20 concurrent identical requests, answering 201 once and 200 with the same transaction otherwise', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 100_000);
    const body = { reference: ref(), amount: 10_000, account_number: anAccount('044'), bank_code: '044' };
    const responses = await Promise.all(Array.from({ length: 20 }, () => transfer(m, body)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    for (const response of responses) expect(data(response).reference).toBe(body.reference);
    expect(await balanceOf(m)).toBe(100_000 - 11_000);
    expect((await entriesOf(m.merchant.merchant_id)).filter((e) => e.category === 'transfer')).toHaveLength(
      1,
    );
    const retry = await transfer(m, body);
    expect(retry.status).toBe(200);
    expect(data(retry).status).toBe('success');
    // Read back from the table, the answer has the 201's fields in the 201's order, nested ones too
    // (its status may have moved on since: the 201 can answer one of the copies still pending).
    const created = data(responses.find((r) => r.status === 201) ?? retry);
    expect(Object.keys(data(retry))).toEqual(Object.keys(created));
    expect(JSON.stringify(data(retry).counterparty)).toBe(JSON.stringify(created.counterparty));
  });

  it('answers 409 duplicate_reference when a reference comes back with a different body, debiting nothing', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 100_000);
    const body = { reference: ref(), amount: 10_000, account_number: anAccount('044'), bank_code: '044' };
    expect((await transfer(m, body)).status).toBe(201);
    for (const changed of [
      { ...body, amount: 10_001 },
      { ...body, narration: 'x' },
      { ...body, account_number: anAccount('044') },
    ]) {
      const response = await transfer(m, changed);
      expect(response.status).toBe(409);
      expect(response.body).toMatchObject({ status: 'error', code: 'duplicate_reference' });
    }
    expect(await balanceOf(m)).toBe(89_000);
  });

  it('lets exactly 10 of 20 concurrent transfers of 4,000 (+1,000 fee) through a balance of 50,000', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 50_000);
    const account = anAccount('057');
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        transfer(m, { reference: ref(), amount: 4_000, account_number: account, bank_code: '057' }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    const refused = responses.filter((r) => r.status === 422);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r.body).toMatchObject({ code: 'insufficient_funds' });
    expect(await balanceOf(m)).toBe(0);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });

  it.each([
    [500_000, 1_000],
    [500_001, 2_500],
    [5_000_000, 2_500],
    [5_000_001, 5_000],
    [100, 1_000],
    [1_000_000_000, 5_000],
  ])('charges a transfer of %i kobo a fee of %i', async (amount, fee) => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, amount + fee);
    const response = await transfer(m, {
      reference: ref(),
      amount,
      account_number: anAccount('033'),
      bank_code: '033',
    });
    expect(response.status).toBe(201);
    expect(data(response)).toMatchObject({ amount, fee, balance_after: 0 });
  });

  it('ends a transfer the partner rejects (77777…) failed, with a reversal that restores the balance', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 20_000);
    const reference = ref();
    const response = await transfer(m, {
      reference,
      amount: 5_000,
      account_number: anAccount('011', '77777'),
      bank_code: '011',
    });
    expect(response.status).toBe(201);
    expect(data(response)).toMatchObject({ status: 'failed', balance_after: 14_000 });
    expect(await balanceOf(m)).toBe(20_000);
    const reversal = await call(gateway, 'GET', `/transactions/reversal:${reference}`, {
      headers: m.headers,
    });
    expect(reversal.status).toBe(200);
    expect(data(reversal)).toMatchObject({
      reference: `reversal:${reference}`,
      type: 'credit',
      category: 'reversal',
      amount: 6_000,
      fee: 0,
      status: 'success',
      balance_after: 20_000,
    });
    const retry = await transfer(m, {
      reference,
      amount: 5_000,
      account_number:
        data(response).counterparty &&
        (data(response).counterparty as { account_number: string }).account_number,
      bank_code: '011',
    });
    expect(retry.status).toBe(200);
    expect(await balanceOf(m)).toBe(20_000);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });

  it('leaves a transfer the partner has not settled (66666…) pending, with the money held', async () => {
    const { m, body } = await sendPending('66666');
    expect(data(await transfer(m, body)).status).toBe('pending');
    expect(await balanceOf(m)).toBe(14_000);
  });
});

describe('pending transfers whose webhook never comes (requery, API.md §7)', () => {
  const status = async (m: Merchant, reference: string) =>
    data(
      await call(gateway, 'GET', `/transactions/${encodeURIComponent(reference)}`, { headers: m.headers }),
    );

  it('is settled by the requery when the partner made it but its answer was lost (11111…), once', async () => {
    const { m, body } = await sendPending('11111');
    await expect
      .poll(async () => (await status(m, body.reference)).status, { timeout: 15_000 })
      .toBe('success');
    // A retry now answers it as it stands, sending nothing.
    expect(data(await transfer(m, body)).status).toBe('success');
    expect(await balanceOf(m)).toBe(14_000);
    expect((await entriesOf(m.merchant.merchant_id)).map((e) => e.category).sort()).toEqual([
      'payment',
      'transfer',
    ]);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });

  it('are settled by the requery: success (55555…), and failed with the reversal (44444…), once', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 50_000);
    const succeeds = {
      reference: ref(),
      amount: 5_000,
      account_number: anAccount('011', '55555'),
      bank_code: '011',
    };
    const fails = {
      reference: ref(),
      amount: 7_000,
      account_number: anAccount('011', '44444'),
      bank_code: '011',
    };
    expect(data(await transfer(m, succeeds)).status).toBe('pending');
    expect(data(await transfer(m, fails)).status).toBe('pending');
    // The test run requeries transfers pending 2 s, every second (TRANSFER_REQUERY_* in global setup).
    await expect
      .poll(async () => (await status(m, succeeds.reference)).status, { timeout: 15_000 })
      .toBe('success');
    await expect
      .poll(async () => (await status(m, fails.reference)).status, { timeout: 15_000 })
      .toBe('failed');
    expect(await status(m, fails.reference)).toMatchObject({
      reason: 'Beneficiary account could not be credited',
    });
    expect(await status(m, `reversal:${fails.reference}`)).toMatchObject({
      category: 'reversal',
      amount: 8_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await balanceOf(m)).toBe(50_000 - 6_000);
    expect((await entriesOf(m.merchant.merchant_id)).map((e) => e.category).sort()).toEqual([
      'payment',
      'reversal',
      'transfer',
      'transfer',
    ]);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });
});

describe('transfer destinations', () => {
  it('pays a saved beneficiary and a validated session, and refuses those of another merchant', async () => {
    const m = await aMerchant();
    const other = await aMerchant();
    await fund(m.merchant.merchant_id, 100_000);
    const account = anAccount('035');
    const saved = await call(gateway, 'POST', '/beneficiaries', {
      body: { account_number: account, bank_code: '035' },
      headers: m.headers,
    });
    const beneficiaryId = data(saved).id as string;
    const byBeneficiary = await transfer(m, {
      reference: ref(),
      amount: 1_000,
      beneficiary_id: beneficiaryId,
    });
    expect(byBeneficiary.status).toBe(201);
    expect(data(byBeneficiary).counterparty).toMatchObject({ account_number: account, bank_code: '035' });

    const validated = await call(gateway, 'POST', '/validate-account', {
      body: { account_number: account, bank_code: '035' },
      headers: m.headers,
    });
    const sessionId = data(validated).session_id as string;
    const bySession = await transfer(m, { reference: ref(), amount: 1_000, session_id: sessionId });
    expect(bySession.status).toBe(201);

    await fund(other.merchant.merchant_id, 100_000);
    const foreignBeneficiary = await transfer(other, {
      reference: ref(),
      amount: 1_000,
      beneficiary_id: beneficiaryId,
    });
    expect(foreignBeneficiary.status).toBe(422);
    expect(foreignBeneficiary.body).toMatchObject({ code: 'beneficiary_not_found' });
    const foreignSession = await transfer(other, { reference: ref(), amount: 1_000, session_id: sessionId });
    expect(foreignSession.status).toBe(422);
    expect(foreignSession.body).toMatchObject({ code: 'session_expired' });
    expect(await balanceOf(other)).toBe(100_000);
  });

  it("pays another merchant's wallet: the sandbox names it as issued and credits it, so the money stays in the system", async () => {
    const payer = await aMerchant();
    const payee = await aMerchant();
    await fund(payer.merchant.merchant_id, 100_000);
    const destination = {
      account_number: payee.merchant.account_number,
      bank_code: payee.merchant.bank_code,
    };
    const validated = await call(gateway, 'POST', '/validate-account', {
      body: destination,
      headers: payer.headers,
    });
    expect(data(validated)).toMatchObject({ account_name: payee.merchant.account_name });
    const sent = await transfer(payer, { reference: ref(), amount: 25_000, ...destination });
    expect(sent.status).toBe(201);
    expect(data(sent)).toMatchObject({ status: 'success', fee: 1_000 });
    await expect.poll(() => balanceOf(payee), { timeout: 15_000, interval: 100 }).toBe(25_000);
    expect(await balanceOf(payer)).toBe(100_000 - 25_000 - 1_000);
    expect((await auditMerchant(payee.merchant.merchant_id)).problems).toEqual([]);
  });

  it('answers 400 for no destination, two destinations or half of one', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 100_000);
    const account = anAccount('058');
    for (const destination of [
      {},
      { beneficiary_id: 'ben_x', account_number: account, bank_code: '058' },
      { session_id: 'ses_x', account_number: account, bank_code: '058' },
      { beneficiary_id: 'ben_x', session_id: 'ses_x' },
      { account_number: account },
      { bank_code: '058' },
    ]) {
      const response = await transfer(m, { reference: ref(), amount: 1_000, ...destination });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'validation_error' });
    }
    expect(await balanceOf(m)).toBe(100_000);
  });
});

describe('bad transfer input', () => {
  const base = () => ({
    reference: ref(),
    amount: 1_000,
    account_number: anAccount('058'),
    bank_code: '058',
  });
  it.each([
    ['a reference with a space', { reference: 'has space' }, 'reference'],
    ['a reference of 65 characters', { reference: 'r'.repeat(65) }, 'reference'],
    ['an empty reference', { reference: '' }, 'reference'],
    ['a reference with a colon', { reference: 'reversal:x' }, 'reference'],
    ['an amount as a string', { amount: '1000' }, 'amount'],
    ['a fractional amount', { amount: 1000.5 }, 'amount'],
    ['a zero amount', { amount: 0 }, 'amount'],
    ['a negative amount', { amount: -500 }, 'amount'],
    ['an amount under NGN 1', { amount: 99 }, 'amount'],
    ['an amount over NGN 10,000,000', { amount: 1_000_000_001 }, 'amount'],
    ['an unsafe amount', { amount: 2 ** 53 + 2 }, 'amount'],
    ['a narration of 101 characters', { narration: 'n'.repeat(101) }, 'narration'],
    ['a narration with control characters', { narration: 'a\u0000b' }, 'narration'],
    ['a narration with a right-to-left override', { narration: 'Refund \u202Egnp.exe' }, 'narration'],
    ['a narration with a left-to-right override', { narration: 'Pay \u202DAda' }, 'narration'],
    ['a narration with the replacement character', { narration: 'caf\uFFFD' }, 'narration'],
    ['a narration with a line separator', { narration: 'Rent\u2028paid' }, 'narration'],
    ['a narration with a paragraph separator', { narration: 'Rent\u2029paid' }, 'narration'],
    ['a narration of 101 emoji', { narration: '😀'.repeat(101) }, 'narration'],
    ['a narration with a lone surrogate', { narration: 'a\ud800b' }, 'narration'],
    ['an unknown field', { currency: 'NGN' }, 'currency'],
  ])('answers 400 for %s and writes nothing', async (_label, change, field) => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 100_000);
    const body = { ...base(), ...change };
    const response = await transfer(m, body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'validation_error' });
    expect(response.body?.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await getMerchant(m.merchant.merchant_id)).toMatchObject({ balance: 100_000, version: 1 });
  });

  it.each([
    ['in Ajami (Arabic script) with its right-to-left mark', '\u200Fكُدِنْ هَيَرْ 2026'],
    ['with a name isolated as Fluent formats it', 'Payment from \u2068محمد\u2069'],
    ['with a name embedded as Android formats it', 'Payment from \u202Bمحمد\u202C'],
  ])('takes a narration %s: only the overrides are refused', async (_label, narration) => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 100_000);
    const response = await transfer(m, { ...base(), narration });
    expect(response.status).toBe(201);
    expect(data(response)).toMatchObject({ narration });
  });

  it('counts a narration in characters, as its documented maxLength does: 100 emoji are 100', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 100_000);
    const narration = `${'😀'.repeat(99)}é`;
    const response = await transfer(m, { ...base(), narration });
    expect(response.status).toBe(201);
    expect(data(response)).toMatchObject({ narration });
  });

  it('answers 400 unknown_bank, invalid_account_number and 422 insufficient_funds, writing nothing', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 1_500);
    const good = anAccount('058');
    const unknown = await transfer(m, {
      reference: ref(),
      amount: 1_000,
      account_number: good,
      bank_code: '999',
    });
    expect(unknown.body).toMatchObject({ code: 'unknown_bank' });
    const badDigit = await transfer(m, {
      reference: ref(),
      amount: 1_000,
      account_number: `${good.slice(0, 9)}${(Number(good[9]) + 1) % 10}`,
      bank_code: '058',
    });
    expect(badDigit.body).toMatchObject({ code: 'invalid_account_number' });
    const reference = ref();
    const poor = await transfer(m, { reference, amount: 1_000, account_number: good, bank_code: '058' });
    expect(poor.status).toBe(422);
    expect(poor.body).toMatchObject({ code: 'insufficient_funds' });
    expect((await call(gateway, 'GET', `/transactions/${reference}`, { headers: m.headers })).status).toBe(
      404,
    );
    expect(await getMerchant(m.merchant.merchant_id)).toMatchObject({ balance: 1_500, version: 1 });
  });
});

describe('POST /transfers: a reference is one request (API.md §2)', () => {
  it('answers 409 when a reference comes back naming another bank, beneficiary or session, sending nothing', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 100_000);
    const expect409 = async (body: Record<string, unknown>) => {
      const response = await transfer(m, body);
      expect([response.status, response.body?.code], JSON.stringify(body)).toEqual([
        409,
        'duplicate_reference',
      ]);
    };

    // 044 and 011 give every serial the same check digit: one account number, another bank.
    const account = anAccount('044');
    expect(toNuban('011', account.slice(0, 9))).toBe(account);
    const byNumber = { reference: ref(), amount: 1_000, account_number: account, bank_code: '044' };
    expect((await transfer(m, byNumber)).status).toBe(201);
    await expect409({ ...byNumber, bank_code: '011' });

    // A new beneficiary, or a new validation session, of a fresh account: its id.
    const made = async (path: string, field: 'id' | 'session_id') =>
      data<Record<string, string>>(
        await call(gateway, 'POST', path, {
          body: { account_number: anAccount('035'), bank_code: '035' },
          headers: m.headers,
        }),
      )[field];
    const beneficiary = () => made('/beneficiaries', 'id');
    const session = () => made('/validate-account', 'session_id');
    const byBeneficiary = { reference: ref(), amount: 1_000, beneficiary_id: await beneficiary() };
    expect((await transfer(m, byBeneficiary)).status).toBe(201);
    await expect409({ ...byBeneficiary, beneficiary_id: await beneficiary() });

    const bySession = { reference: ref(), amount: 1_000, session_id: await session() };
    expect((await transfer(m, bySession)).status).toBe(201);
    await expect409({ ...bySession, session_id: await session() });

    // Three transfers of 1,000 + 1,000 fee; the refused retries moved nothing.
    expect(await balanceOf(m)).toBe(100_000 - 3 * 2_000);
  });
});
