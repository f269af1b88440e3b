import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { sandboxAccountName } from '#infra/local/sandbox-partner.ts';
import { accountOfSession, SessionExpired } from '#shared/accounts/sessions.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { call, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, nameEnquiriesFor } from '#test/support/merchants.ts';

let gateway: LocalGateway;
let merchant: Awaited<ReturnType<typeof aMerchant>>;
beforeAll(async () => {
  gateway = await startTestGateway();
  merchant = await aMerchant();
});
afterAll(() => gateway.close());

const validate = (body: unknown, headers = merchant.headers) =>
  call(gateway, 'POST', '/api/v1/developer/validate-account', { body, headers });

describe('POST /validate-account', () => {
  it('returns the holder name from the partner, the bank and a session_id', async () => {
    const accountNumber = anAccount('058');
    const response = await validate({ account_number: accountNumber, bank_code: '058' });
    expect(response.status).toBe(200);
    expect(response.body).toStrictEqual({
      status: 'success',
      message: expect.any(String),
      data: {
        account_name: sandboxAccountName(accountNumber),
        account_number: accountNumber,
        bank: { code: '058', name: 'Guaranty Trust Bank' },
        session_id: expect.stringMatching(/^ses_[0-9a-f]{32}$/),
      },
    });
  });

  it('stores the session for 30 minutes, bound to this merchant only', async () => {
    const accountNumber = anAccount('044');
    const response = await validate({ account_number: accountNumber, bank_code: '044' });
    const session = response.body?.data as { session_id: string };
    const sessionId = session.session_id;
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: tableName('accountSessions'), Key: { session_id: sessionId } }),
    );
    expect(Item?.merchant_id).toBe(merchant.merchant.merchant_id);
    expect(Item?.ttl * 1000 - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(Item?.ttl * 1000 - Date.now()).toBeLessThanOrEqual(30 * 60_000 + 1000);
    await expect(accountOfSession(merchant.merchant.merchant_id, sessionId)).resolves.toMatchObject({
      account_number: accountNumber,
    });
    const other = await aMerchant();
    await expect(accountOfSession(other.merchant.merchant_id, sessionId)).rejects.toBeInstanceOf(
      SessionExpired,
    );
    await expect(
      accountOfSession(merchant.merchant.merchant_id, sessionId, Date.now() + 30 * 60_000 + 1),
    ).rejects.toBeInstanceOf(SessionExpired);
  });

  it('caches name enquiries per bank account: a repeated lookup costs no partner call', async () => {
    const accountNumber = anAccount('057');
    await validate({ account_number: accountNumber, bank_code: '057' });
    await validate({ account_number: accountNumber, bank_code: '057' });
    const other = await aMerchant();
    const third = await validate({ account_number: accountNumber, bank_code: '057' }, other.headers);
    expect(third.status).toBe(200);
    expect(await nameEnquiriesFor(accountNumber)).toBe(1);
  });

  it('answers 400 invalid_account_number for a wrong check digit, without calling the partner', async () => {
    const valid = anAccount('033');
    const wrong = `${valid.slice(0, 9)}${(Number(valid[9]) + 1) % 10}`;
    const response = await validate({ account_number: wrong, bank_code: '033' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'invalid_account_number' });
    expect(await nameEnquiriesFor(wrong)).toBe(0);
  });

  it('answers 400 unknown_bank for a code not in the bank list', async () => {
    for (const bankCode of ['999', '50211', 'GTB']) {
      const response = await validate({ account_number: anAccount('058'), bank_code: bankCode });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'unknown_bank' });
    }
  });

  it.each([
    ['a missing account_number', { bank_code: '058' }, 'account_number'],
    ['a missing bank_code', { account_number: '0123456789' }, 'bank_code'],
    ['9 digits', { account_number: '012345678', bank_code: '058' }, 'account_number'],
    ['11 digits', { account_number: '01234567890', bank_code: '058' }, 'account_number'],
    ['letters', { account_number: '01234S6789', bank_code: '058' }, 'account_number'],
    ['a number instead of a string', { account_number: 123456789, bank_code: '058' }, 'account_number'],
    ['a numeric bank code', { account_number: '0123456789', bank_code: 58 }, 'bank_code'],
    ['an unknown field', { account_number: '0123456789', bank_code: '058', name: 'x' }, 'name'],
  ])('answers 400 validation_error for %s', async (_label, body, field) => {
    const response = await validate(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'validation_error' });
    expect(response.body?.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it('answers 422 account_not_found when the partner says the account does not exist (serial 99999…)', async () => {
    const response = await validate({ account_number: anAccount('011', '99999'), bank_code: '011' });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ status: 'error', code: 'account_not_found' });
  });

  it('answers 503 partner_unavailable with Retry-After when the partner times out (serial 88888…)', async () => {
    const started = Date.now();
    const response = await validate({ account_number: anAccount('011', '88888'), bank_code: '011' });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ status: 'error', code: 'partner_unavailable' });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    // PARTNER_TIMEOUT_MS is 1 s in tests; the sandbox would hang 3 s.
    expect(Date.now() - started).toBeLessThan(2900);
  });

  it('skips the check digit for wallets whose numbers are not NUBANs', async () => {
    const response = await validate({ account_number: '8031234567', bank_code: '100004' });
    expect(response.status).toBe(200);
    expect(response.body?.data).toMatchObject({ bank: { code: '100004' } });
  });

  it('answers 415 for a non-JSON body and 400 for malformed JSON, after authentication', async () => {
    const form = await call(gateway, 'POST', '/validate-account', {
      rawBody: 'account_number=1',
      headers: { ...merchant.headers, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    const broken = await call(gateway, 'POST', '/validate-account', {
      rawBody: '{"account_number":',
      headers: { ...merchant.headers, 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    const anonymous = await call(gateway, 'POST', '/validate-account', {
      rawBody: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect(anonymous.status).toBe(401);
  });
});

describe('GET /balance', () => {
  it("returns the merchant's own wallet in kobo", async () => {
    const response = await call(gateway, 'GET', '/api/v1/developer/balance', { headers: merchant.headers });
    expect(response.status).toBe(200);
    expect(response.body).toStrictEqual({
      status: 'success',
      message: expect.any(String),
      data: {
        account_number: merchant.merchant.account_number,
        account_name: merchant.merchant.account_name,
        balance: 0,
        currency: 'NGN',
        updated_at: merchant.merchant.updated_at,
      },
    });
  });

  it('shows each merchant only its own wallet', async () => {
    const other = await aMerchant();
    const response = await call(gateway, 'GET', '/balance', { headers: other.headers });
    const wallet = response.body?.data as { account_number: string };
    expect(wallet.account_number).toBe(other.merchant.account_number);
  });
});
