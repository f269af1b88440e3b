import { createHash } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { AccountAlreadyIssued } from '#shared/accounts/issue.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { ANSWER_RESERVE_MS } from '#shared/deadline.ts';
import { OVERDUE_TRANSFER } from '#shared/definitions/alerts.ts';
import { auditMerchant, entriesOf } from '#shared/ledger/audit.ts';
import { logger } from '#shared/logger.ts';
import { onboardMerchant } from '#shared/merchants/onboard.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { EARLIER_SENDS_OVER_MS } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';
import { unmatchedOf } from '#shared/payments/unmatched.ts';
import { getTransaction } from '#shared/transactions/store.ts';
import { dispatchTransfer } from '#shared/transfers/dispatch.ts';
import { requeryPendingTransfers } from '#shared/transfers/requery.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';
import { jsonEvent, lambdaContext } from '#test/support/events.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, aPendingTransfer } from '#test/support/merchants.ts';
import {
  PAYSTACK_ACCOUNT_PREFIXES,
  PAYSTACK_MISSING_BANK_CODE,
  PAYSTACK_NO_TRANSFER_BANK_CODE,
  standInAccountNumber,
} from '#test/support/paystack-stand-in.ts';

/**
 * The whole service with `PARTNER=paystack` against a Paystack stand-in written from Paystack's
 * published description: the handlers of this file's gateway read that configuration at import,
 * exactly as `npm start` with `PARTNER=paystack PAYSTACK_BASE_URL=… PAYSTACK_SECRET_KEY=…` does.
 * The consumer behind the queue is the test run's own: it sees only partner-neutral domain events.
 */
const { standIn, restoreEnv } = await vi.hoisted(async () => {
  const { startPaystackStandIn } = await import('#test/support/paystack-stand-in.ts');
  const started = await startPaystackStandIn({ settleAfterMs: 300 });
  const saved = { ...process.env };
  Object.assign(process.env, {
    PARTNER: 'paystack',
    PAYSTACK_BASE_URL: started.url,
    PAYSTACK_SECRET_KEY: started.secretKey,
    PAYSTACK_EMAIL_DOMAIN: 'customers.example.ng',
  });
  return { standIn: started, restoreEnv: () => Object.assign(process.env, saved) };
});

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
  standIn.setWebhookUrl(`${gateway.url}/webhooks/paystack`);
});
afterAll(async () => {
  await gateway.close();
  await standIn.close();
  delete process.env.PARTNER;
  restoreEnv();
});

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
const ref = () => `ps-${Math.random().toString(36).slice(2, 12)}`;
const balanceOf = async (m: Merchant) => (await getMerchant(m.merchant.merchant_id))?.balance;
const waitForBalance = (m: Merchant, balance: number) =>
  expect.poll(() => balanceOf(m), { timeout: 15_000, interval: 100 }).toBe(balance);
const transfer = (m: Merchant, body: Record<string, unknown>) =>
  call(gateway, 'POST', '/transfers', { body, headers: m.headers });
const transactionOf = async (m: Merchant, reference: string) =>
  data(await call(gateway, 'GET', `/transactions/${encodeURIComponent(reference)}`, { headers: m.headers }));
const paystackReference = (m: Merchant, reference: string) =>
  partner().transferReference(m.merchant.merchant_id, reference);
/** A funded merchant whose wallet is a Paystack dedicated account, funded by a real `charge.success`. */
async function aFundedMerchant(amount: number): Promise<Merchant> {
  const m = await aMerchant();
  await standIn.payDedicatedAccount(m.merchant.account_number, amount);
  await waitForBalance(m, amount);
  return m;
}

describe('PARTNER=paystack: money out', () => {
  it('validates an account through /bank/resolve, and refuses what Paystack cannot resolve or pay', async () => {
    const m = await aMerchant();
    const account = standInAccountNumber('12345', '058');
    const ok = await call(gateway, 'POST', '/validate-account', {
      body: { account_number: account, bank_code: '058' },
      headers: m.headers,
    });
    expect(ok.status).toBe(200);
    expect(data(ok)).toMatchObject({ account_number: account, bank: { code: '058' } });
    const missing = await call(gateway, 'POST', '/validate-account', {
      body: { account_number: standInAccountNumber('99999', '058'), bank_code: '058' },
      headers: m.headers,
    });
    expect([missing.status, missing.body?.code]).toEqual([422, 'account_not_found']);
    for (const bankCode of [PAYSTACK_MISSING_BANK_CODE, PAYSTACK_NO_TRANSFER_BANK_CODE]) {
      const refused = await call(gateway, 'POST', '/validate-account', {
        body: { account_number: anAccount(bankCode), bank_code: bankCode },
        headers: m.headers,
      });
      expect([refused.status, refused.body?.code]).toEqual([422, 'bank_not_supported']);
      const transferRefused = await transfer(m, {
        reference: ref(),
        amount: 1_000,
        account_number: anAccount(bankCode),
        bank_code: bankCode,
      });
      expect([transferRefused.status, transferRefused.body?.code]).toEqual([422, 'bank_not_supported']);
    }
  });

  it("issues a merchant's wallet as a dedicated account of a Paystack customer with the operator-given email and phone", async () => {
    const { merchant } = await onboardMerchant(
      'Acme Foods Ltd',
      {},
      { email: 'ops@acme-foods.ng', phone: '+2348031234567' },
    );
    expect(merchant).toMatchObject({ partner: 'paystack', bank_code: '035' });
    expect(standIn.dedicatedAccounts.get(merchant.account_number)).toMatchObject({
      email: 'ops@acme-foods.ng',
    });
    const customer = standIn.requests.find(
      (request) =>
        request.path === '/customer' && (request.body as { email?: string }).email === 'ops@acme-foods.ng',
    );
    expect(customer?.body).toEqual({
      email: 'ops@acme-foods.ng',
      first_name: 'Acme',
      last_name: 'Foods Ltd',
      phone: '+2348031234567',
    });
  });

  it("refuses a second merchant with another's email plainly: Paystack gives one wallet per customer email", async () => {
    const email = `ops-${ref()}@acme.ng`;
    const { merchant: first } = await onboardMerchant('Acme Ltd', {}, { email });
    const asked = () => standIn.requests.filter((request) => request.path === '/dedicated_account').length;
    const before = asked();
    const second = onboardMerchant('Acme Two', {}, { email });
    await expect(second).rejects.toThrow(
      `the partner issued account ${first.account_number}, which is another's already (wallet of ${first.merchant_id}), 3 times: nothing opened; the partner issues one wallet per customer email, and ${email} is another merchant's: give this merchant an email of its own`,
    );
    await expect(second).rejects.toBeInstanceOf(AccountAlreadyIssued);
    expect(asked() - before).toBe(3);
  });

  it('credits a wallet (dedicated account) payment once, however often Paystack redelivers it', async () => {
    const m = await aMerchant();
    const { id, event } = await standIn.payDedicatedAccount(m.merchant.account_number, 50_000);
    await waitForBalance(m, 50_000);
    for (let i = 0; i < 3; i++) expect((await standIn.sendEvent(event)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await balanceOf(m)).toBe(50_000);
    expect(await transactionOf(m, `payment:${id}`)).toMatchObject({
      category: 'payment',
      amount: 50_000,
      virtual_account_reference: null,
    });
  });

  it('sends a transfer that Paystack completes (transfer.success) and one it fails (with the reversal)', async () => {
    const m = await aFundedMerchant(100_000);
    const good = ref();
    const created = await transfer(m, {
      reference: good,
      amount: 10_000,
      account_number: standInAccountNumber('12345', '058'),
      bank_code: '058',
      narration: 'Invoice 7',
    });
    expect(created.status).toBe(201);
    await expect.poll(async () => (await transactionOf(m, good)).status, { timeout: 15_000 }).toBe('success');

    const bad = ref();
    await transfer(m, {
      reference: bad,
      amount: 20_000,
      account_number: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.failsWithWebhook, '058'),
      bank_code: '058',
    });
    await expect.poll(async () => (await transactionOf(m, bad)).status, { timeout: 15_000 }).toBe('failed');
    expect((await transactionOf(m, bad)).reason).toEqual(expect.any(String));
    expect(await transactionOf(m, `reversal:${bad}`)).toMatchObject({ category: 'reversal', amount: 21_000 });
    expect(await balanceOf(m)).toBe(100_000 - 11_000);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });

  it('ends a transfer Paystack refuses at once (4xx) failed with the reversal and its message', async () => {
    const m = await aFundedMerchant(30_000);
    const reference = ref();
    const refused = await transfer(m, {
      reference,
      amount: 5_000,
      account_number: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.insufficientBalance, '058'),
      bank_code: '058',
    });
    expect(refused.status).toBe(201);
    expect(data(refused)).toMatchObject({ status: 'failed', reason: expect.stringMatching(/balance/i) });
    expect(await balanceOf(m)).toBe(30_000);
  });

  it('turns a success that Paystack later returns (transfer.reversed) into reversed, with the money back once', async () => {
    const m = await aFundedMerchant(40_000);
    const reference = ref();
    await transfer(m, {
      reference,
      amount: 9_000,
      account_number: standInAccountNumber('12345', '044'),
      bank_code: '044',
    });
    await expect
      .poll(async () => (await transactionOf(m, reference)).status, { timeout: 15_000 })
      .toBe('success');
    await standIn.settleTransfer(paystackReference(m, reference), 'reversed', { reason: 'Account closed' });
    await expect
      .poll(async () => (await transactionOf(m, reference)).status, { timeout: 15_000 })
      .toBe('reversed');
    await standIn.sendEvent(standIn.lastEvent ?? { event: 'none', data: {} });
    await waitForBalance(m, 40_000);
    expect((await entriesOf(m.merchant.merchant_id)).filter((e) => e.category === 'reversal')).toHaveLength(
      1,
    );
  });

  it('makes one Paystack transfer for 20 concurrent identical requests, and debits once', async () => {
    const m = await aFundedMerchant(100_000);
    const body = {
      reference: ref(),
      amount: 10_000,
      account_number: standInAccountNumber('12345', '033'),
      bank_code: '033',
    };
    const answers = await Promise.all(Array.from({ length: 20 }, () => transfer(m, body)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(19);
    // One transfer made (a copy racing the first send may send the same reference alongside:
    // Paystack refuses it as a duplicate).
    const made = standIn.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === '/transfer' &&
        r.status === 200 &&
        (r.body as { reference?: string }).reference === paystackReference(m, body.reference),
    );
    expect(made).toHaveLength(1);
    expect(await balanceOf(m)).toBe(100_000 - 11_000);
  });

  it('never resends a transfer Paystack answered pending: a retry answers it as it stands', async () => {
    const m = await aFundedMerchant(50_000);
    const body = {
      reference: ref(),
      amount: 10_000,
      account_number: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.staysPending, '058'),
      bank_code: '058',
    };
    const first = await transfer(m, body);
    expect(first.status).toBe(201);
    expect(data(first)).toMatchObject({ status: 'pending' });
    // Retries after the answer, several at once: none sends it again.
    const retried = await Promise.all(Array.from({ length: 5 }, () => transfer(m, body)));
    for (const answer of retried) {
      expect(answer.status).toBe(200);
      expect(data(answer)).toMatchObject({ status: 'pending' });
    }
    const sends = standIn.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === '/transfer' &&
        (r.body as { reference?: string }).reference === paystackReference(m, body.reference),
    );
    expect(sends).toHaveLength(1);
    expect(await balanceOf(m)).toBe(50_000 - 11_000);
  });

  it('never refunds a retried transfer while Paystack is still making the first send: pending, then success once', async () => {
    const m = await aFundedMerchant(50_000);
    const body = {
      reference: ref(),
      amount: 10_000,
      account_number: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.slowToCreate, '058'),
      bank_code: '058',
    };
    const reference = paystackReference(m, body.reference);
    // The first send's answer is lost (Paystack answers 504 while it is still making the transfer).
    const first = await transfer(m, body);
    expect(first.status).toBe(201);
    expect(data(first)).toMatchObject({ status: 'pending' });
    // A retry within a minute of the failed send sends nothing; once the minute is over (moved
    // here, not waited for), the retry resends it: verify does not find it yet, and the resend is
    // refused (a 400 whose words say nothing of a used reference). Before, that ended the transfer
    // failed and refunded.
    const { holdResends } = await import('#shared/transactions/store.ts');
    await holdResends(m.merchant.merchant_id, body.reference, Date.now() - 1);
    const retried = await transfer(m, body);
    expect(retried.status).toBe(200);
    expect(data(retried)).toMatchObject({ status: 'pending' });
    expect(standIn.transfer(reference)).toBeUndefined();
    const refusedResends = standIn.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === '/transfer' &&
        r.status === 400 &&
        (r.body as { reference?: string }).reference === reference,
    );
    expect(refusedResends).toHaveLength(1);
    expect(await balanceOf(m)).toBe(50_000 - 11_000);
    // Paystack makes the transfer and pays it: success, debited once, never reversed. (Polled
    // slowly: the wait is seconds long, and the merchant's key allows 100 requests a minute.)
    await expect
      .poll(async () => (await transactionOf(m, body.reference)).status, { timeout: 15_000, interval: 500 })
      .toBe('success');
    expect(standIn.transfer(reference)).toMatchObject({ status: 'success', amount: 10_000 });
    expect(await balanceOf(m)).toBe(50_000 - 11_000);
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });
});

/** The POST /transfer requests the stand-in received for one Paystack reference. */
const sendsOf = (partnerReference: string) =>
  standIn.requests.filter(
    (r) =>
      r.method === 'POST' &&
      r.path === '/transfer' &&
      (r.body as { reference?: string }).reference === partnerReference,
  ).length;

/** Sets one attribute of a stored transaction, as time or an older deployment would have left it. */
const setOnTransaction = (merchantId: string, reference: string, name: string, value: unknown) =>
  dynamo.send(
    new UpdateCommand({
      TableName: tableName('transactions'),
      Key: { merchant_id: merchantId, reference },
      UpdateExpression: 'SET #name = :value',
      ExpressionAttributeNames: { '#name': name },
      ExpressionAttributeValues: { ':value': value },
    }),
  );

/**
 * A merchant with 30,000 kobo less a transfer of 5,000 (fee 1,000) to a stand-in account of
 * `prefix`, debited and pending but never sent (as after a crash between debit and send).
 */
async function aPendingPaystackTransfer(
  prefix: string,
  accountName: string,
  {
    handedOver = false,
    account,
    serial = 0,
  }: {
    /** Counted as handed over once (its send lost), resends held; under `account`'s key if given. */
    handedOver?: boolean;
    account?: string;
    serial?: number;
  } = {},
) {
  const m = await aFundedMerchant(30_000);
  const merchantId = m.merchant.merchant_id;
  const reference = ref();
  const payee = standInAccountNumber(prefix, '058', serial);
  await aPendingTransfer(merchantId, reference, 5_000, {
    counterparty: { account_name: accountName, account_number: payee, bank_code: '058' },
    handedOver,
    ...(account ? { account } : {}),
  });
  const pending = await getTransaction(merchantId, reference);
  if (!pending) throw new Error('no pending transfer');
  return { m, merchantId, reference, payee, pending, partnerReference: paystackReference(m, reference) };
}

describe('PARTNER=paystack: two sends of one transfer racing', () => {
  it("never refunds on the first send's refusal when a retry's send reached Paystack first", async () => {
    const { m, merchantId, reference, payee, pending, partnerReference } = await aPendingPaystackTransfer(
      PAYSTACK_ACCOUNT_PREFIXES.slowToCreate,
      'RACE PAYEE',
    );
    // The first send is counted (its POST is slow to leave, a recipient call say)...
    const { recordDispatch } = await import('#shared/transactions/store.ts');
    expect((await recordDispatch(merchantId, reference))?.dispatch).toBe(1);
    // ...and a retry, which read the transfer after that count and is counted second, reaches
    // Paystack first: Paystack starts making the transfer (its answer is lost: pending).
    const counted = await getTransaction(merchantId, reference);
    if (!counted) throw new Error('no transfer');
    expect((await dispatchTransfer(counted, { retry: true })).status).toBe('pending');
    // Now the first send's POST arrives: refused while Paystack is making the transfer, and verify
    // does not find it yet. As a first send, the adapter calls that a failure...
    const late = await partner().sendTransfer({
      reference: partnerReference,
      amount: 5_000,
      bank_code: '058',
      account_number: payee,
      account_name: 'RACE PAYEE',
      narration: null,
      countedAt: Date.now(),
    });
    expect(late).toMatchObject({ status: 'failed' });
    // ...but its money goes back only if no other send was counted since: it stays pending.
    expect((await settleTransfer(pending, late, { dispatches: 1 })).status).toBe('pending');
    expect(await balanceOf(m)).toBe(30_000 - 6_000);
    // Paystack makes it and pays it: success, debited once, never refunded.
    await expect
      .poll(async () => (await getTransaction(merchantId, reference))?.status, {
        timeout: 15_000,
        interval: 250,
      })
      .toBe('success');
    expect(standIn.transfer(partnerReference)).toMatchObject({ status: 'success', amount: 5_000 });
    expect(await balanceOf(m)).toBe(30_000 - 6_000);
    expect((await auditMerchant(merchantId)).problems).toEqual([]);
  });
});

describe('PARTNER=paystack: a retry after Paystack answered', () => {
  it('sends nothing for a minute after Paystack said it has the transfer, then asks again', async () => {
    const { m, merchantId, reference, pending, partnerReference } = await aPendingPaystackTransfer(
      PAYSTACK_ACCOUNT_PREFIXES.staysPending,
      'HELD PAYEE',
    );
    const sends = () => sendsOf(partnerReference);
    // The first send: Paystack answers pending.
    expect((await dispatchTransfer(pending)).status).toBe('pending');
    expect(sends()).toBe(1);
    // Retries within the minute send nothing and answer the transfer as it stands.
    expect((await dispatchTransfer(pending, { retry: true })).status).toBe('pending');
    expect((await dispatchTransfer(pending, { retry: true })).status).toBe('pending');
    expect(sends()).toBe(1);
    // Once the minute is over (moved here, not waited for), a retry sends it again: refused as a
    // duplicate, verify shows it pending, and it stays pending, debited once.
    const { holdResends } = await import('#shared/transactions/store.ts');
    await holdResends(merchantId, reference, Date.now() - 1);
    const held = await getTransaction(merchantId, reference);
    if (!held) throw new Error('no transfer');
    expect((await dispatchTransfer(held, { retry: true })).status).toBe('pending');
    expect(sends()).toBe(2);
    expect(await balanceOf(m)).toBe(30_000 - 6_000);
  });
});

describe('PARTNER=paystack: requery', () => {
  it('settles transfers whose webhook never comes, success and failure, by GET /transfer/verify', async () => {
    const m = await aFundedMerchant(60_000);
    const silentSuccess = ref();
    const silentFailure = ref();
    for (const [reference, prefix] of [
      [silentSuccess, PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently],
      [silentFailure, PAYSTACK_ACCOUNT_PREFIXES.failsSilently],
    ] as const) {
      const created = await transfer(m, {
        reference,
        amount: 10_000,
        account_number: standInAccountNumber(prefix, '058'),
        bank_code: '058',
      });
      expect(data(created).status).toBe('pending');
    }
    // The stand-in finishes them silently; this file's clock is the requery's own.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await requeryPendingTransfers();
    expect((await transactionOf(m, silentSuccess)).status).toBe('success');
    expect((await transactionOf(m, silentFailure)).status).toBe('failed');
    expect(await balanceOf(m)).toBe(60_000 - 11_000);
    const verifies = standIn.requests.filter((r) => r.path.startsWith('/transfer/verify/'));
    expect(verifies.length).toBeGreaterThanOrEqual(2);
  });

  it('sends again, under the same reference, a transfer Paystack never received, and settles it: paid once', async () => {
    // Debited, never sent (a crash between the debit and POST /transfer), and the merchant never retries.
    const { m, merchantId, reference, partnerReference } = await aPendingPaystackTransfer(
      PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently,
      'LOST SEND PAYEE',
    );
    const sends = () => sendsOf(partnerReference);
    // Verify answers 404: sent again (Paystack answers pending), by the round's clock a minute on.
    const first = await requeryPendingTransfers(Date.now() + 60_000);
    expect(first.resent).toBeGreaterThanOrEqual(1);
    expect(sends()).toBe(1);
    // The stand-in completes it silently; the next round finds it by verify and settles it.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await requeryPendingTransfers(Date.now() + 120_000);
    expect((await getTransaction(merchantId, reference))?.status).toBe('success');
    expect(sends()).toBe(1);
    expect(standIn.transfer(partnerReference)).toMatchObject({ status: 'success', amount: 5_000 });
    expect(await balanceOf(m)).toBe(30_000 - 6_000);
    expect((await auditMerchant(merchantId)).problems).toEqual([]);
  });

  it('fails and refunds a transfer Paystack keeps refusing once its earlier sends are long over, not before', async () => {
    // Handed over once and its answer lost (a timeout); Paystack had refused it (its balance too low).
    const { m, merchantId, reference, partnerReference } = await aPendingPaystackTransfer(
      PAYSTACK_ACCOUNT_PREFIXES.insufficientBalance,
      'REFUSED PAYEE',
      { handedOver: true, serial: 11 },
    );
    const { holdResends } = await import('#shared/transactions/store.ts');
    const backdate = (at: number) => setOnTransaction(merchantId, reference, 'dispatched_at', at);
    // Its lost send a minute ago: the resend is refused and verify shows nothing, but the lost send
    // may still be in the making. Pending, the money held.
    await backdate(Date.now() - 60_000);
    await holdResends(merchantId, reference, Date.now() - 1);
    await requeryPendingTransfers(Date.now() + 60_000);
    expect(sendsOf(partnerReference)).toBe(1);
    expect(await getTransaction(merchantId, reference)).toMatchObject({ status: 'pending', dispatches: 2 });
    expect(await balanceOf(m)).toBe(30_000 - 6_000);
    // The last hand-over long over: the next resend's refusal is final, and the money comes back.
    const lastHandOverAt = Date.now() - EARLIER_SENDS_OVER_MS - 1_000;
    await backdate(lastHandOverAt);
    await holdResends(merchantId, reference, Date.now() - 1);
    const spy = vi.spyOn(partner(), 'sendTransfer');
    await requeryPendingTransfers(Date.now() + 60_000);
    const orders = spy.mock.calls.map(([sent]) => sent);
    spy.mockRestore();
    expect(sendsOf(partnerReference)).toBe(2);
    // The order said when the hand-over before was counted, and when this one was.
    const order = orders.find((sent) => sent.reference === partnerReference);
    expect(order).toMatchObject({ resend: true, lastHandOverAt, countedAt: expect.any(Number) });
    expect(Date.now() - (order?.countedAt ?? 0)).toBeLessThan(30_000);
    expect(await getTransaction(merchantId, reference)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringMatching(/balance/i),
    });
    expect(standIn.transfer(partnerReference)).toBeUndefined();
    expect(await balanceOf(m)).toBe(30_000);
    expect((await auditMerchant(merchantId)).problems).toEqual([]);
  });

  it('settles once when a requery races the webhook', async () => {
    const m = await aFundedMerchant(50_000);
    const reference = ref();
    await transfer(m, {
      reference,
      amount: 10_000,
      account_number: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.staysPending, '058'),
      bank_code: '058',
    });
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await Promise.all([
      standIn.settleTransfer(paystackReference(m, reference), 'failed', { reason: 'Account closed' }),
      requeryPendingTransfers(),
      requeryPendingTransfers(),
    ]);
    await waitForBalance(m, 50_000);
    await requeryPendingTransfers();
    const stored = await getTransaction(m.merchant.merchant_id, reference);
    expect(stored?.status).toBe('failed');
    expect((await entriesOf(m.merchant.merchant_id)).filter((e) => e.category === 'reversal')).toHaveLength(
      1,
    );
    expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
  });
});

describe('PARTNER=paystack: a secret key changed with transfers pending', () => {
  /** The tag of the stand-in's key, as the adapter derives it: 12 hex characters of its SHA-256. */
  const keyTag = createHash('sha256').update(standIn.secretKey).digest('hex').slice(0, 12);

  it('never sends through this key a transfer handed over with another (test to live, another business): reported every round', async () => {
    const m = await aFundedMerchant(30_000);
    const merchantId = m.merchant.merchant_id;
    const reference = ref();
    const payee = standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, '058');
    // Handed over through another Paystack account before the key changed: this one has never
    // heard of it, and only the other can tell whether it paid.
    await aPendingTransfer(merchantId, reference, 5_000, {
      counterparty: { account_name: 'OTHER KEY PAYEE', account_number: payee, bank_code: '058' },
      account: 'a0a0a0a0a0a0',
    });
    const { holdResends, recordDispatch } = await import('#shared/transactions/store.ts');
    await holdResends(merchantId, reference, Date.now() - 1);
    const partnerReference = paystackReference(m, reference);
    const errors = vi.spyOn(logger, 'error');
    try {
      // Verify answers 404 under this key, round after round: never sent again, reported each time.
      for (const minutes of [1, 2]) await requeryPendingTransfers(Date.now() + minutes * 60_000);
      const reports = errors.mock.calls.filter(
        ([message, details]) =>
          message === OVERDUE_TRANSFER && (details as { reference?: string }).reference === reference,
      );
      expect(reports).toHaveLength(2);
      expect(reports[0]?.[1]).toMatchObject({ partner_account: 'a0a0a0a0a0a0', configured_account: keyTag });
    } finally {
      errors.mockRestore();
    }
    // The merchant's retry sends nothing either: answered as it stands.
    const pending = await getTransaction(merchantId, reference);
    if (!pending) throw new Error('no pending transfer');
    expect((await dispatchTransfer(pending, { retry: true })).status).toBe('pending');
    expect(sendsOf(partnerReference)).toBe(0);
    // Nor can a hand-over under this key be counted behind the check's back.
    expect(await recordDispatch(merchantId, reference, { account: keyTag })).toBeUndefined();
    expect(await getTransaction(merchantId, reference)).toMatchObject({
      status: 'pending',
      dispatches: 1,
      partner_account: 'a0a0a0a0a0a0',
    });
    expect(await balanceOf(m)).toBe(30_000 - 6_000);
  });

  it('sends through the new key a transfer no hand-over of which ever reached Paystack, as a first send', async () => {
    // Paystack refuses transfers to this account outright (its balance is not enough). Counted
    // under another key, but never given to Paystack (no time was left, say).
    const { m, merchantId, reference } = await aPendingPaystackTransfer(
      PAYSTACK_ACCOUNT_PREFIXES.insufficientBalance,
      'NEVER SENT PAYEE',
      { handedOver: true, account: 'c2c2c2c2c2c2', serial: 9 },
    );
    const { holdResends, markUnposted } = await import('#shared/transactions/store.ts');
    expect(await markUnposted(merchantId, reference, 1)).toBe(true);
    await holdResends(merchantId, reference, Date.now() - 1);
    // The requery sends it with this key, which it now belongs to, as the first send it is: the
    // refusal ends it failed with the money back.
    await requeryPendingTransfers(Date.now() + 60_000);
    expect(sendsOf(paystackReference(m, reference))).toBe(1);
    expect(await getTransaction(merchantId, reference)).toMatchObject({
      status: 'failed',
      dispatches: 2,
      partner_account: keyTag,
    });
    expect(await balanceOf(m)).toBe(30_000);
    expect((await auditMerchant(merchantId)).problems).toEqual([]);
  });

  it('records the key of the first hand-over, and a rotated key of the same account settles what Paystack has', async () => {
    const m = await aFundedMerchant(30_000);
    const merchantId = m.merchant.merchant_id;
    const reference = ref();
    const created = await transfer(m, {
      reference,
      amount: 5_000,
      account_number: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, '058'),
      bank_code: '058',
    });
    expect(data(created).status).toBe('pending');
    expect((await getTransaction(merchantId, reference))?.partner_account).toBe(keyTag);
    // The key is rotated (here: the record says an older key of the same integration handed it
    // over): verify under the new key finds the transfer, and the requery settles it as usual.
    await setOnTransaction(merchantId, reference, 'partner_account', 'b1b1b1b1b1b1');
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await requeryPendingTransfers();
    expect((await getTransaction(merchantId, reference))?.status).toBe('success');
    expect(sendsOf(paystackReference(m, reference))).toBe(1);
    expect(await balanceOf(m)).toBe(30_000 - 6_000);
    expect((await auditMerchant(merchantId)).problems).toEqual([]);
  });
});

describe("PARTNER=paystack: the function's own time bounds its partner calls", () => {
  /** POST /transfers as API Gateway invokes the function, with `remainingMs` of its time left. */
  async function invokeCreateTransfer(m: Merchant, body: Record<string, unknown>, remainingMs: number) {
    const { handler } = await import('#functions/create-transfer.ts');
    const event = jsonEvent(body);
    event.requestContext.authorizer = { merchantId: m.merchant.merchant_id, apiKey: 'key-of-the-test' };
    const context = { ...lambdaContext, getRemainingTimeInMillis: () => remainingMs };
    const result = await handler(event, context);
    return { status: result.statusCode, body: JSON.parse(result.body) };
  }

  it('answers 503 before the debit when no time is left for the name enquiry', async () => {
    const m = await aFundedMerchant(30_000);
    const account = standInAccountNumber('23456', '058');
    const answer = await invokeCreateTransfer(
      m,
      { reference: ref(), amount: 5_000, account_number: account, bank_code: '058' },
      ANSWER_RESERVE_MS + 100,
    );
    expect([answer.status, answer.body.code]).toEqual([503, 'partner_unavailable']);
    expect(standIn.requests.some((r) => r.path.includes(account))).toBe(false);
    expect(await balanceOf(m)).toBe(30_000);
  });

  it('answers a debited transfer pending, never a timeout, when no time is left to send it; the requery sends it as a first send', async () => {
    const m = await aFundedMerchant(30_000);
    const merchantId = m.merchant.merchant_id;
    // An account whose transfers Paystack refuses outright (its balance is not enough).
    const account = standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.insufficientBalance, '058', 7);
    const saved = await call(gateway, 'POST', '/beneficiaries', {
      body: { account_number: account, bank_code: '058' },
      headers: m.headers,
    });
    const beneficiaryId = data<{ id: string }>(saved).id;
    await partner().checkBank('058'); // The bank list, kept per container, as a warm function has it.
    const reference = ref();
    // Time enough for the debit, none for the partner: the function would be killed mid-send.
    const answer = await invokeCreateTransfer(
      m,
      { reference, amount: 5_000, beneficiary_id: beneficiaryId },
      ANSWER_RESERVE_MS + 100,
    );
    expect(answer.status).toBe(201);
    expect(answer.body.data).toMatchObject({ reference, status: 'pending', amount: 5_000 });
    expect(await balanceOf(m)).toBe(30_000 - 6_000);
    const partnerReference = paystackReference(m, reference);
    expect(sendsOf(partnerReference)).toBe(0);
    // Held like a failed send, and marked as never given to Paystack.
    expect(await getTransaction(merchantId, reference)).toMatchObject({
      status: 'pending',
      resend_after: expect.any(Number),
      dispatches: 1,
      unposted_dispatches: new Set([1]),
    });
    // Once the hold is over, the requery sends it as the first send it is: Paystack's refusal then
    // ends it failed with the money back (a resend's refusal would have left it pending).
    const { holdResends } = await import('#shared/transactions/store.ts');
    await holdResends(merchantId, reference, Date.now() - 1);
    await requeryPendingTransfers(Date.now() + 60_000);
    expect(sendsOf(partnerReference)).toBe(1);
    expect(await getTransaction(merchantId, reference)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringMatching(/balance/i),
    });
    expect(await balanceOf(m)).toBe(30_000);
    expect((await auditMerchant(merchantId)).problems).toEqual([]);
  });
});

describe('PARTNER=paystack: money in (Pay with Transfer)', () => {
  async function openAccount(m: Merchant, amount: number, email?: string) {
    const reference = ref();
    const created = await call(gateway, 'POST', '/virtual-accounts', {
      body: {
        amount,
        reference,
        customer: { name: 'Ada Obi', email: email ?? `ada-${reference}@example.ng` },
      },
      headers: m.headers,
    });
    expect(created.status).toBe(201);
    const account = data<{ account_number: string; bank: { code: string } }>(created);
    const charge = [...standIn.charges].find(([, c]) => c.account_number === account.account_number);
    if (!charge) throw new Error('no Paystack charge for the virtual account');
    return { reference, account, chargeReference: charge[0] };
  }

  it('credits a charge.success once however often it is redelivered, and shows it on the payment', async () => {
    const m = await aMerchant();
    const { reference, account, chargeReference } = await openAccount(m, 25_000);
    // The stand-in issues at Paystack's own bank, as Paystack's samples do: found by its code in
    // Paystack's list (where it is "Titan Paystack", with no NIP code), shown as payers see it.
    expect(account.bank).toEqual({ code: '100039', name: 'Paystack-Titan' });
    const { id, event } = await standIn.payCharge(chargeReference, 25_000);
    await waitForBalance(m, 25_000);
    await Promise.all(Array.from({ length: 5 }, () => standIn.sendEvent(event)));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await balanceOf(m)).toBe(25_000);
    const payment = data(await call(gateway, 'GET', `/payments/${reference}`, { headers: m.headers }));
    expect(payment).toMatchObject({ status: 'paid', amount_received: 25_000, rejected_attempts: [] });
    expect(await transactionOf(m, `payment:${id}`)).toMatchObject({ virtual_account_reference: reference });
  });

  it("refuses an amount below Paystack's Pay with Transfer minimum (NGN 100) as the caller's 400, never a 503 to retry", async () => {
    const m = await aMerchant();
    const small = await call(gateway, 'POST', '/virtual-accounts', {
      body: { amount: 9_999, reference: ref() },
      headers: m.headers,
    });
    expect(small.status).toBe(400);
    expect(small.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'amount' }] });
    const charges = standIn.requests.filter((request) => request.path === '/charge').length;
    await openAccount(m, 10_000);
    // The refusal asked Paystack nothing; the smallest it takes was asked once.
    expect(standIn.requests.filter((request) => request.path === '/charge').length).toBe(charges + 1);
  });

  it('credits nothing for a wrong amount Paystack refused, and lists the attempt on the payment', async () => {
    const m = await aMerchant();
    const { reference, chargeReference } = await openAccount(m, 30_000);
    await standIn.rejectCharge(chargeReference, 12_345);
    await expect
      .poll(
        async () =>
          data<{ rejected_attempts: unknown[] }>(
            await call(gateway, 'GET', `/payments/${reference}`, { headers: m.headers }),
          ).rejected_attempts,
        { timeout: 15_000 },
      )
      .toEqual([{ amount: 12_345, reason: expect.any(String), received_at: expect.any(String) }]);
    expect(await balanceOf(m)).toBe(0);
  });

  it("lists a refusal on no merchant's account when the customer's email names open accounts of two merchants, and keeps it for operators", async () => {
    const email = `shared-${ref()}@example.ng`;
    const [first, second] = [await aMerchant(), await aMerchant()];
    const meant = await openAccount(first, 30_000, email);
    const other = await openAccount(second, 40_000, email);
    // Paystack's bank.transfer.rejected names only the customer (pwt-events.js): both accounts fit.
    const { event } = await standIn.rejectCharge(meant.chargeReference, 12_345);
    const attempt = String((event.data.bank_transfer as { transaction_id: string }).transaction_id);
    await expect
      .poll(async () => (await unmatchedOf('paystack', `rejected:${attempt}`))[0], { timeout: 15_000 })
      .toMatchObject({ reason: expect.stringContaining('open virtual accounts of 2 merchants') });
    for (const [m, account] of [
      [first, meant],
      [second, other],
    ] as const) {
      const payment = data(
        await call(gateway, 'GET', `/payments/${account.reference}`, { headers: m.headers }),
      );
      expect(payment).toMatchObject({ rejected_attempts: [] });
    }
    expect(await balanceOf(first)).toBe(0);
    expect(await balanceOf(second)).toBe(0);
  });

  it('answers a bad x-paystack-signature 401 invalid_signature and queues nothing', async () => {
    const m = await aMerchant();
    const { chargeReference } = await openAccount(m, 10_000);
    const { event } = await standIn.payCharge(chargeReference, 10_000, { sendWebhook: false });
    const forged = await standIn.sendEvent(event, { signature: 'ab'.repeat(64) });
    expect(forged.status).toBe(401);
    expect(JSON.parse(forged.body)).toMatchObject({ code: 'invalid_signature' });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await balanceOf(m)).toBe(0);
  });
});

describe('PARTNER=paystack: a signed delivery is credited or kept, never refused over cosmetic fields (API.md §11)', () => {
  /** A paid charge.success into a fresh merchant's wallet, not yet sent, with `patch` applied to its data. */
  async function walletPayment(
    amount: number,
    patch: (data: Record<string, unknown>) => Record<string, unknown>,
  ) {
    const m = await aMerchant();
    const { id, event } = await withoutWebhook(() =>
      standIn.payDedicatedAccount(m.merchant.account_number, amount),
    );
    return { m, id, event: { ...event, data: patch(event.data) } };
  }
  /** Runs `pay` with the stand-in's webhook pointed nowhere, so the test sends the event itself. */
  async function withoutWebhook<T>(pay: () => Promise<T>): Promise<T> {
    standIn.setWebhookUrl('http://127.0.0.1:9/nowhere');
    try {
      return await pay();
    } finally {
      standIn.setWebhookUrl(`${gateway.url}/webhooks/paystack`);
    }
  }
  const authorization = (data: Record<string, unknown>) => data.authorization as Record<string, unknown>;

  it.each<[string, (data: Record<string, unknown>) => Record<string, unknown>]>([
    [
      'a sender name and narration far over their limits',
      (d) => ({
        ...d,
        authorization: { ...authorization(d), sender_name: 'N'.repeat(5_000), narration: 'x'.repeat(5_000) },
      }),
    ],
    [
      'a sender name that is a number',
      (d) => ({ ...d, authorization: { ...authorization(d), sender_name: 42 } }),
    ],
    ['paid_at a number, paidAt an object', (d) => ({ ...d, paid_at: 1_767_225_600, paidAt: { at: 1 } })],
    [
      'a long, odd paid_at',
      (d) => ({ ...d, paid_at: 'Saturday 21 November 2026, around ten, WAT'.repeat(3) }),
    ],
    [
      'long sender bank and account number',
      (d) => ({
        ...d,
        authorization: {
          ...authorization(d),
          sender_bank: '9'.repeat(40),
          sender_bank_account_number: '1'.repeat(40),
        },
      }),
    ],
  ])('credits a charge.success with %s, once', async (_label, patch) => {
    const { m, id, event } = await walletPayment(6_100, patch);
    expect((await standIn.sendEvent(event)).status).toBe(200);
    await waitForBalance(m, 6_100);
    expect((await entriesOf(m.merchant.merchant_id)).map((entry) => entry.amount)).toEqual([6_100]);
    expect(await transactionOf(m, `payment:${id}`)).toMatchObject({ amount: 6_100 });
  });

  it('credits a signed 250 KiB delivery sent as text/plain', async () => {
    const { m, event } = await walletPayment(3_300, (d) => ({ ...d, log: 'l'.repeat(250 * 1024) }));
    const sent = await standIn.sendEvent(event, { contentType: 'text/plain' });
    expect(sent.status).toBe(200);
    await waitForBalance(m, 3_300);
  });

  it('credits a charge.success whose currency is naira written in lower case', async () => {
    const { m, event } = await walletPayment(2_700, (d) => ({ ...d, currency: 'ngn' }));
    expect((await standIn.sendEvent(event)).status).toBe(200);
    await waitForBalance(m, 2_700);
  });

  it.each<[string, (data: Record<string, unknown>) => Record<string, unknown>, string]>([
    [
      'an amount in a string',
      (d) => ({ ...d, amount: String(d.amount) }),
      'amount is not a positive whole number',
    ],
    ['another currency', (d) => ({ ...d, currency: 'USD' }), 'currency USD is not NGN'],
  ])('keeps a charge.success with %s for operators, crediting nothing', async (_label, patch, reason) => {
    const { m, id, event } = await walletPayment(8_800, patch);
    expect((await standIn.sendEvent(event)).status).toBe(200);
    await expect
      .poll(async () => (await unmatchedOf('paystack', String(id)))[0], { timeout: 15_000 })
      .toMatchObject({ reason: expect.stringContaining(reason), event: { type: 'DeliveryUnusable' } });
    expect(await balanceOf(m)).toBe(0);
  });

  it('keeps a charge.success whose amount is given twice, crediting neither', async () => {
    const { m, id, event } = await walletPayment(100, (d) => d);
    const rawBody = JSON.stringify(event).replace('"amount":100,', '"amount":100,"amount":100000000,');
    expect(rawBody).toContain('"amount":100000000');
    expect((await standIn.sendEvent(event, { rawBody })).status).toBe(200);
    await expect
      .poll(async () => (await unmatchedOf('paystack', String(id)))[0], { timeout: 15_000 })
      .toMatchObject({ reason: expect.stringContaining('duplicate key: data.amount') });
    expect(await balanceOf(m)).toBe(0);
  });
});

describe('PARTNER=paystack: every request is one Paystack would accept', () => {
  it('sent nothing the published description refuses', () => {
    expect(standIn.requests.length).toBeGreaterThan(20);
    expect(standIn.requests.filter((r) => r.problems.length > 0)).toEqual([]);
  });
});
