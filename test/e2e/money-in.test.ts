import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { isValidNuban } from '#shared/banks/nuban.ts';
import { config } from '#shared/config.ts';
import { auditMerchant, entriesOf } from '#shared/ledger/audit.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { unmatchedOf } from '#shared/payments/unmatched.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, aPendingTransfer, fund } from '#test/support/merchants.ts';
import { deliver, nipSessionId, pay } from '#test/support/payments.ts';

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
const ref = () => `order-${Math.random().toString(36).slice(2, 10)}`;
const open = (m: Merchant, body: Record<string, unknown>) =>
  call(gateway, 'POST', '/api/v1/developer/virtual-accounts', { body, headers: m.headers });
const status = (m: Merchant, reference: string) =>
  call(gateway, 'GET', `/payments/${reference}`, { headers: m.headers });
const balanceOf = async (m: Merchant) => (await getMerchant(m.merchant.merchant_id))?.balance ?? -1;
/** Waits until the consumer has applied what the webhook queued. */
const waitForBalance = (m: Merchant, balance: number) =>
  expect.poll(() => balanceOf(m), { timeout: 15_000, interval: 100 }).toBe(balance);

async function virtualAccount(m: Merchant, amount: number, extra: Record<string, unknown> = {}) {
  const reference = ref();
  const response = await open(m, { amount, reference, ...extra });
  expect(response.status).toBe(201);
  return { reference, accountNumber: data<{ account_number: string }>(response).account_number };
}

describe('POST /virtual-accounts', () => {
  it('opens an account at the partner bank for a fixed amount, pending, expiring in 30 minutes by default', async () => {
    const m = await aMerchant();
    const reference = ref();
    const response = await open(m, {
      amount: 500_000,
      reference,
      customer: { name: 'Ada Obi', email: 'ada@example.com' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toStrictEqual({
      status: 'success',
      message: expect.any(String),
      data: {
        reference,
        account_number: expect.stringMatching(/^\d{10}$/),
        account_name: expect.any(String),
        bank: { code: config.partner.bankCode, name: 'Providus Bank' },
        amount: 500_000,
        currency: 'NGN',
        status: 'pending',
        expires_at: expect.any(String),
        created_at: expect.any(String),
      },
    });
    const account = data<{ account_number: string; expires_at: string; created_at: string }>(response);
    expect(isValidNuban(config.partner.bankCode, account.account_number)).toBe(true);
    expect(Date.parse(account.expires_at) - Date.parse(account.created_at)).toBe(30 * 60_000);
  });

  it('is idempotent on reference: the same body again is 200 with the same account, another body is 409', async () => {
    const m = await aMerchant();
    const body = { amount: 100_000, reference: ref(), expires_in_minutes: 60 };
    const first = await open(m, body);
    const again = await open(m, body);
    expect(again.status).toBe(200);
    expect(data(again)).toEqual(data(first));
    const changed = await open(m, { ...body, amount: 100_001 });
    expect(changed.status).toBe(409);
    expect(changed.body).toMatchObject({ code: 'duplicate_reference' });
  });

  it('opens one account for 5 concurrent requests with the same reference', async () => {
    const m = await aMerchant();
    const body = { amount: 100_000, reference: ref() };
    const responses = await Promise.all(Array.from({ length: 5 }, () => open(m, body)));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(new Set(responses.map((r) => data(r).account_number)).size).toBe(1);
  });

  it('makes up a reference when none is given, and never issues a number twice', async () => {
    const m = await aMerchant();
    const responses = await Promise.all(Array.from({ length: 8 }, () => open(m, { amount: 100 })));
    const references = responses.map((r) => data<{ reference: string }>(r).reference);
    expect(new Set(references).size).toBe(8);
    expect(new Set(responses.map((r) => data(r).account_number)).size).toBe(8);
  });

  it.each([
    ['amount 99', { amount: 99 }, 'amount'],
    ['amount over NGN 10m', { amount: 1_000_000_001 }, 'amount'],
    ['a string amount', { amount: '5000' }, 'amount'],
    ['expires_in_minutes 4', { amount: 100, expires_in_minutes: 4 }, 'expires_in_minutes'],
    ['expires_in_minutes 1441', { amount: 100, expires_in_minutes: 1441 }, 'expires_in_minutes'],
    ['fractional minutes', { amount: 100, expires_in_minutes: 30.5 }, 'expires_in_minutes'],
    ['a bad email', { amount: 100, customer: { name: 'A', email: 'not-an-email' } }, 'customer.email'],
    ['a customer without name', { amount: 100, customer: { email: 'a@b.co' } }, 'customer.name'],
    [
      'an unknown customer field',
      { amount: 100, customer: { name: 'A', email: 'a@b.co', phone: '1' } },
      'customer.phone',
    ],
    ['a bad reference', { amount: 100, reference: 'no spaces please' }, 'reference'],
    ['an unknown field', { amount: 100, currency: 'USD' }, 'currency'],
  ])('answers 400 for %s', async (_label, body, field) => {
    const m = await aMerchant();
    const response = await open(m, body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'validation_error' });
    expect(response.body?.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });
});

describe('payments into a virtual account', () => {
  it('credits one payment once and makes the status paid', async () => {
    const m = await aMerchant();
    const { reference, accountNumber } = await virtualAccount(m, 250_000);
    expect(data(await status(m, reference))).toMatchObject({
      status: 'pending',
      amount_received: 0,
      payments: [],
      paid_at: null,
    });
    const sessionId = nipSessionId();
    const delivered = await pay(gateway, accountNumber, 250_000, sessionId);
    expect(delivered.status).toBe(200);
    expect(JSON.parse(delivered.body)).toStrictEqual({ status: 'success', message: 'Accepted' });
    await waitForBalance(m, 250_000);
    const paid = await status(m, reference);
    expect(paid.body).toStrictEqual({
      status: 'success',
      message: expect.any(String),
      data: {
        reference,
        status: 'paid',
        amount: 250_000,
        amount_received: 250_000,
        currency: 'NGN',
        account_number: accountNumber,
        bank: { code: config.partner.bankCode, name: 'Providus Bank' },
        expires_at: expect.any(String),
        paid_at: expect.any(String),
        created_at: expect.any(String),
        payments: [
          {
            session_id: sessionId,
            amount: 250_000,
            sender_name: 'ADEBAYO CHIOMA',
            sender_account_number: '0123456789',
            sender_bank_code: '058',
            received_at: expect.any(String),
          },
        ],
        rejected_attempts: [],
      },
    });
    const transaction = await call(gateway, 'GET', `/transactions/payment:${sessionId}`, {
      headers: m.headers,
    });
    expect(data(transaction)).toMatchObject({
      type: 'credit',
      category: 'payment',
      amount: 250_000,
      fee: 0,
      status: 'success',
      balance_after: 250_000,
      reason: null,
      virtual_account_reference: reference,
    });
  });

  it('credits nothing again for a redelivery: same webhook-id, new webhook-id with the same session, 5 at once', async () => {
    const m = await aMerchant();
    const { reference, accountNumber } = await virtualAccount(m, 10_000);
    const sessionId = nipSessionId();
    const first = await pay(gateway, accountNumber, 10_000, sessionId, 'msg_same');
    await waitForBalance(m, 10_000);
    const sameId = await pay(gateway, accountNumber, 10_000, sessionId, first.webhookId);
    const newId = await pay(gateway, accountNumber, 10_000, sessionId);
    const burst = await Promise.all(
      Array.from({ length: 5 }, () => pay(gateway, accountNumber, 10_000, sessionId)),
    );
    for (const response of [sameId, newId, ...burst]) expect(response.status).toBe(200);
    const concurrentSession = nipSessionId();
    await Promise.all(Array.from({ length: 5 }, () => pay(gateway, accountNumber, 5_000, concurrentSession)));
    await waitForBalance(m, 15_000);
    // Give stragglers time to be processed before checking nothing more arrived.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await balanceOf(m)).toBe(15_000);
    expect(data<{ payments: unknown[] }>(await status(m, reference)).payments).toHaveLength(2);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });

  it('credits nothing again for a delivery under a credited webhook-id with another body, and keeps it for operators', async () => {
    const m = await aMerchant();
    const webhookId = `msg_${nipSessionId()}`;
    const first = nipSessionId();
    expect((await pay(gateway, m.merchant.account_number, 4_000, first, webhookId)).status).toBe(200);
    await waitForBalance(m, 4_000);
    // Same webhook-id, another session and amount: a redelivery by API.md §4, whatever its body says.
    const other = nipSessionId();
    expect((await pay(gateway, m.merchant.account_number, 6_000, other, webhookId)).status).toBe(200);
    await expect
      .poll(async () => (await unmatchedOf('sandbox', other))[0], { timeout: 15_000 })
      .toMatchObject({
        reason: `webhook-id already credited for another payment (delivery:sandbox:${webhookId})`,
        event: { payment_id: other, amount: 6_000 },
      });
    expect(await balanceOf(m)).toBe(4_000);
    expect(await entriesOf(m.merchant.merchant_id)).toHaveLength(1);
    // Its own session under a new webhook-id is a new payment: credited.
    expect((await pay(gateway, m.merchant.account_number, 6_000, other)).status).toBe(200);
    await waitForBalance(m, 10_000);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });

  it('credits one of two different payments sent at once under one webhook-id, never both', async () => {
    const m = await aMerchant();
    const webhookId = `msg_${nipSessionId()}`;
    const sessions = [nipSessionId(), nipSessionId()];
    await Promise.all(
      sessions.map((session) => pay(gateway, m.merchant.account_number, 3_000, session, webhookId)),
    );
    await expect
      .poll(
        async () => (await Promise.all(sessions.map((session) => unmatchedOf('sandbox', session)))).flat(),
        {
          timeout: 15_000,
        },
      )
      .toHaveLength(1);
    expect(await balanceOf(m)).toBe(3_000);
    expect(await entriesOf(m.merchant.merchant_id)).toHaveLength(1);
  });

  it('credits all of 10 payments to one merchant that arrive at once, to the kobo', async () => {
    const m = await aMerchant();
    const accounts = await Promise.all(Array.from({ length: 5 }, () => virtualAccount(m, 1_000)));
    const amounts = Array.from({ length: 10 }, (_, i) => 1_000 + i * 7);
    await Promise.all(amounts.map((amount, i) => pay(gateway, accounts[i % 5]?.accountNumber ?? '', amount)));
    await waitForBalance(
      m,
      amounts.reduce((a, b) => a + b, 0),
    );
    expect(await entriesOf(m.merchant.merchant_id)).toHaveLength(10);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });

  it('credits partial then excess payments: partially_paid, then overpaid', async () => {
    const m = await aMerchant();
    const { reference, accountNumber } = await virtualAccount(m, 10_000);
    await pay(gateway, accountNumber, 4_000);
    await waitForBalance(m, 4_000);
    expect(data(await status(m, reference))).toMatchObject({
      status: 'partially_paid',
      amount_received: 4_000,
      paid_at: null,
    });
    await pay(gateway, accountNumber, 7_000);
    await waitForBalance(m, 11_000);
    const over = data<{
      status: string;
      amount_received: number;
      paid_at: string;
      payments: { received_at: string }[];
    }>(await status(m, reference));
    expect(over).toMatchObject({ status: 'overpaid', amount_received: 11_000 });
    expect(over.paid_at).toBe(over.payments[1]?.received_at);
    // The request repeated now: the same account as it stands, never a stale "pending".
    const again = await open(m, { amount: 10_000, reference });
    expect(again.status).toBe(200);
    expect(data(again)).toMatchObject({ reference, account_number: accountNumber, status: 'overpaid' });
  });

  it('shows an unpaid account past its expiry as expired, and still credits a late payment', async () => {
    const m = await aMerchant();
    const { reference, accountNumber } = await virtualAccount(m, 3_000, { expires_in_minutes: 5 });
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName('virtualAccounts'),
        Key: { merchant_id: m.merchant.merchant_id, reference },
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 60_000).toISOString() },
      }),
    );
    expect(data(await status(m, reference))).toMatchObject({ status: 'expired' });
    const again = await open(m, { amount: 3_000, reference, expires_in_minutes: 5 });
    expect(again.status).toBe(200);
    expect(data(again)).toMatchObject({ reference, status: 'expired' });
    await pay(gateway, accountNumber, 3_000);
    await waitForBalance(m, 3_000);
    expect(data(await status(m, reference))).toMatchObject({ status: 'paid' });
  });

  it('credits a payment into a merchant’s own wallet number', async () => {
    const m = await aMerchant();
    await pay(gateway, m.merchant.account_number, 7_500);
    await waitForBalance(m, 7_500);
  });

  it('accepts a payment to an unknown account and keeps it as unmatched, crediting no one', async () => {
    const sessionId = nipSessionId();
    const unknown = anAccount(config.partner.bankCode, '4');
    const response = await pay(gateway, unknown, 9_999, sessionId);
    expect(response.status).toBe(200);
    await expect
      .poll(async () => (await unmatchedOf('sandbox', sessionId))[0], {
        timeout: 15_000,
      })
      .toMatchObject({
        reason: 'unknown account number',
        event: { partner: 'sandbox', payment_id: sessionId },
      });
  });

  it("shows one merchant's payment as 404 to another", async () => {
    const m = await aMerchant();
    const other = await aMerchant();
    const { reference } = await virtualAccount(m, 1_000);
    for (const p of [`/payments/${reference}`, '/payments/nope']) {
      const response = await call(gateway, 'GET', p, { headers: other.headers });
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'not_found' });
    }
  });
});

/** A transfer's status as its merchant reads it. */
const transferStatus = async (m: Merchant, reference: string) =>
  data<{ status: string }>(await call(gateway, 'GET', `/transactions/${reference}`, { headers: m.headers }))
    .status;

describe('transfer verdicts by webhook', () => {
  it('settles a pending transfer on transfer.success, once, and ignores a late transfer.failed', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 20_000);
    const reference = ref();
    // Held from resends and unknown to the sandbox: only the webhook can settle it here (the
    // requery, every second in tests, cannot).
    await aPendingTransfer(m.merchant.merchant_id, reference, 5_000);
    const verdict = {
      type: 'transfer.success',
      data: { reference: `${m.merchant.merchant_id}.${reference}` },
    };
    const answers = await Promise.all([
      deliver(gateway, verdict),
      deliver(gateway, verdict),
      deliver(gateway, verdict),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    await expect.poll(() => transferStatus(m, reference), { timeout: 10_000 }).toBe('success');
    await deliver(gateway, {
      type: 'transfer.failed',
      data: { reference: `${m.merchant.merchant_id}.${reference}`, reason: 'Too late' },
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await transferStatus(m, reference)).toBe('success');
    // The debit stands (amount + fee), never refunded, never taken twice.
    expect(await balanceOf(m)).toBe(14_000);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });

  it('settles a transfer the sandbox left processing (by its transfer.success webhook, or the requery if first)', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 20_000);
    const reference = ref();
    const created = await call(gateway, 'POST', '/transfers', {
      body: { reference, amount: 5_000, account_number: anAccount('011', '66666'), bank_code: '011' },
      headers: m.headers,
    });
    expect(data(created).status).toBe('pending');
    await expect.poll(() => transferStatus(m, reference), { timeout: 15_000 }).toBe('success');
    expect(await balanceOf(m)).toBe(14_000);
  });

  it('reverses a pending transfer on transfer.failed, once, and ignores a late transfer.success', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 20_000);
    const reference = ref();
    await aPendingTransfer(m.merchant.merchant_id, reference, 5_000);
    expect(await balanceOf(m)).toBe(14_000);
    const verdict = {
      type: 'transfer.failed',
      data: {
        reference: `${m.merchant.merchant_id}.${reference}`,
        session_id: null,
        reason: 'Account closed',
      },
    };
    await Promise.all([deliver(gateway, verdict), deliver(gateway, verdict), deliver(gateway, verdict)]);
    await waitForBalance(m, 20_000);
    await deliver(gateway, {
      type: 'transfer.success',
      data: { reference: `${m.merchant.merchant_id}.${reference}` },
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(
      data(await call(gateway, 'GET', `/transactions/${reference}`, { headers: m.headers })),
    ).toMatchObject({ status: 'failed', reason: 'Account closed' });
    expect(await balanceOf(m)).toBe(20_000);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });
});

describe('POST /virtual-accounts: a reference is one request', () => {
  it('answers 409 when a reference comes back with another expiry or customer, or none', async () => {
    const m = await aMerchant();
    const body = {
      amount: 100_000,
      reference: ref(),
      expires_in_minutes: 60,
      customer: { name: 'Ada Obi', email: 'ada@example.com' },
    };
    expect((await open(m, body)).status).toBe(201);
    expect((await open(m, body)).status).toBe(200);
    for (const changed of [
      { ...body, expires_in_minutes: 61 },
      { ...body, customer: { name: 'Ada Obi', email: 'ada2@example.com' } },
      { amount: body.amount, reference: body.reference, expires_in_minutes: 60 },
    ]) {
      const response = await open(m, changed);
      expect([response.status, response.body?.code], JSON.stringify(changed)).toEqual([
        409,
        'duplicate_reference',
      ]);
    }
  });
});
