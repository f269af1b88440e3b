import { createHash } from 'node:crypto';
import type { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { entriesOf } from '#shared/ledger/audit.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { unmatchedOf } from '#shared/payments/unmatched.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { deliver, deliverRaw, nipSessionId, paymentEvent } from '#test/support/payments.ts';

/**
 * API.md §11, the sandbox partner end to end (webhook → queue → the test run's consumer → ledger):
 * a signed delivery that is valid JSON is answered 200 and either credited exactly once or kept
 * for operators with the reason. A cosmetic field never blocks a credit; only a body that is not
 * JSON is 400, only one over 256 KiB is 413.
 */

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());
afterEach(() => vi.restoreAllMocks());

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
type Data = Record<string, unknown>;
const balanceOf = async (m: Merchant) => (await getMerchant(m.merchant.merchant_id))?.balance;
const waitForBalance = (m: Merchant, balance: number) =>
  expect.poll(() => balanceOf(m), { timeout: 15_000, interval: 100 }).toBe(balance);
const keptUnder = (id: string) =>
  expect.poll(async () => (await unmatchedOf('sandbox', id))[0], { timeout: 15_000, interval: 100 });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A signed payment of `amount` into `m`'s wallet, with `patch` applied to its data. */
function payment(m: Merchant, amount: number, patch: (data: Data) => Data = (d) => d) {
  const event = paymentEvent({
    account_number: m.merchant.account_number,
    amount,
    session_id: nipSessionId(),
  });
  return { ...event, data: patch(event.data as Data) };
}

/** The merchant's view of a payment's transaction. */
async function transactionOf(m: Merchant, sessionId: string) {
  const response = await call(gateway, 'GET', `/transactions/${encodeURIComponent(`payment:${sessionId}`)}`, {
    headers: m.headers,
  });
  expect(response.status).toBe(200);
  return data<{ amount: number; narration: string | null; counterparty: Record<string, string> }>(response);
}

/** Credited exactly once: the balance is the amount and the ledger holds one entry for it. */
async function expectCreditedOnce(m: Merchant, amount: number) {
  await waitForBalance(m, amount);
  const entries = await entriesOf(m.merchant.merchant_id);
  expect(entries.map((entry) => entry.amount)).toEqual([amount]);
}

const sender = (data: Data) => data.sender as Data;

describe('a signed payment with odd cosmetic fields is credited, once', () => {
  it.each<[string, (data: Data) => Data, (tx: Awaited<ReturnType<typeof transactionOf>>) => void]>([
    [
      'sender.account_name over 200 characters',
      (d) => ({ ...d, sender: { ...sender(d), account_name: 'N'.repeat(250) } }),
      (tx) => expect(tx.counterparty.account_name).toBe('N'.repeat(200)),
    ],
    [
      'sender.account_name a number',
      (d) => ({ ...d, sender: { ...sender(d), account_name: 12345 } }),
      (tx) => expect(tx.counterparty.account_name).toBe(''),
    ],
    [
      'narration over 500 characters',
      (d) => ({ ...d, narration: 'x'.repeat(600) }),
      (tx) => expect(tx.narration).toBe('x'.repeat(500)),
    ],
    [
      'a narration with control characters',
      (d) => ({ ...d, narration: 'line\nbreak\u0000' }),
      (tx) => expect(tx.narration).toBe('line break'),
    ],
    [
      // A name made to read backwards on the merchant's screen ("Trojan Source"): the overrides the
      // API refuses in merchants' own text become spaces here; the embeddings and isolates stay.
      'a sender name with bidirectional overrides',
      (d) => ({ ...d, sender: { ...sender(d), account_name: 'ADA\u202eIBO\u202dOKE \u2068OBI\u2069' } }),
      (tx) => expect(tx.counterparty.account_name).toBe('ADA IBO OKE \u2068OBI\u2069'),
    ],
    [
      // Cut by characters: never half an emoji (a lone surrogate, which a strict JSON reader
      // refuses). One sent alone becomes U+FFFD.
      'a sender name and narration of emoji, over their lengths, and a lone surrogate',
      (d) => ({
        ...d,
        sender: { ...sender(d), account_name: `a${'😀'.repeat(300)}` },
        narration: `b\ud83d${'😀'.repeat(600)}`,
      }),
      (tx) => {
        expect(tx.counterparty.account_name).toBe(`a${'😀'.repeat(199)}`);
        expect(tx.narration).toBe(`b\uFFFD${'😀'.repeat(498)}`);
      },
    ],
    ['paid_at a number', (d) => ({ ...d, paid_at: 1_767_225_600 }), () => undefined],
    [
      'paid_at over 40 characters',
      (d) => ({ ...d, paid_at: 'Saturday, 21 November 2026 at 10:20:02 West Africa Time' }),
      () => undefined,
    ],
    [
      'sender a string',
      (d) => ({ ...d, sender: 'ADEBAYO CHIOMA' }),
      (tx) => expect(tx.counterparty).toEqual({ account_name: '', account_number: '', bank_code: '' }),
    ],
    [
      'a long sender.bank_code',
      (d) => ({ ...d, sender: { ...sender(d), bank_code: '0'.repeat(30) } }),
      (tx) => expect(tx.counterparty.bank_code).toBe(''),
    ],
    [
      'a long sender.account_number',
      (d) => ({ ...d, sender: { ...sender(d), account_number: '1'.repeat(40) } }),
      (tx) => expect(tx.counterparty.account_number).toBe('1'.repeat(20)),
    ],
    [
      'a sender.account_number with a lone surrogate',
      (d) => ({ ...d, sender: { ...sender(d), account_number: '12\ud83d' } }),
      (tx) => expect(tx.counterparty.account_number).toBe('12\uFFFD'),
    ],
    [
      'no sender at all',
      ({ sender: _drop, ...d }) => d,
      (tx) => expect(tx.counterparty.account_name).toBe(''),
    ],
  ])('%s', async (_label, patch, check) => {
    const m = await aMerchant();
    const event = payment(m, 4_321, patch);
    const response = await deliver(gateway, event);
    expect(response.status).toBe(200);
    await expectCreditedOnce(m, 4_321);
    const tx = await transactionOf(m, String(event.data.session_id));
    expect(tx.amount).toBe(4_321);
    check(tx);
  });

  it('credits a signed body far over 16 KiB (up to 256 KiB), once however often it is redelivered', async () => {
    const m = await aMerchant();
    const event = { ...payment(m, 7_000), padding: 'p'.repeat(250 * 1024) };
    const body = JSON.stringify(event);
    expect(Buffer.byteLength(body)).toBeGreaterThan(250 * 1024);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(256 * 1024);
    expect((await deliverRaw(gateway, body)).status).toBe(200);
    await expectCreditedOnce(m, 7_000);
    expect((await deliverRaw(gateway, body)).status).toBe(200);
    // A later payment credited shows the redelivery was consumed too; the entry id kept it out.
    expect((await deliver(gateway, payment(m, 1))).status).toBe(200);
    await waitForBalance(m, 7_001);
    expect((await entriesOf(m.merchant.merchant_id)).length).toBe(2);
  });

  it('answers a body over 256 KiB 413 and queues nothing', async () => {
    const m = await aMerchant();
    const body = JSON.stringify({ ...payment(m, 7_000), padding: 'p'.repeat(256 * 1024) });
    const send = vi.spyOn(sqs, 'send');
    const response = await deliverRaw(gateway, body);
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ status: 'error', code: 'payload_too_large' });
    expect(send.mock.calls.filter(([c]) => (c as SendMessageCommand).input.MessageBody)).toEqual([]);
  });

  // A partner's label does not make signed JSON less JSON: refusing it would leave the money uncredited.
  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', ''])(
    'credits signed JSON sent with Content-Type %j',
    async (contentType) => {
      const m = await aMerchant();
      const response = await deliverRaw(gateway, JSON.stringify(payment(m, 2_500)), { contentType });
      expect(response.status).toBe(200);
      await expectCreditedOnce(m, 2_500);
    },
  );
});

describe('a signed delivery whose money fields cannot be used is answered 200 and kept, never credited', () => {
  it.each<[string, (data: Data) => Data, RegExp]>([
    ['the amount as a string', (d) => ({ ...d, amount: '5000' }), /data\.amount: Must be a number/],
    ['a fractional amount', (d) => ({ ...d, amount: 100.5 }), /data\.amount/],
    ['a zero amount', (d) => ({ ...d, amount: 0 }), /data\.amount: Must be a positive number of kobo/],
    ['an account number that is not 10 digits', (d) => ({ ...d, account_number: '12345' }), /account_number/],
  ])('%s', async (_label, patch, reason) => {
    const m = await aMerchant();
    const event = payment(m, 5_000, patch);
    expect((await deliver(gateway, event)).status).toBe(200);
    await keptUnder(String(event.data.session_id)).toMatchObject({
      reason: expect.stringMatching(reason),
      event: { type: 'DeliveryUnusable', partner: 'sandbox', partner_event: 'payment.received' },
    });
    expect(await balanceOf(m)).toBe(0);
  });

  it('keeps a payment whose amount is given twice, crediting neither amount', async () => {
    const m = await aMerchant();
    const sessionId = nipSessionId();
    const body = JSON.stringify(
      paymentEvent({ account_number: m.merchant.account_number, amount: 100, session_id: sessionId }),
    ).replace('"amount":100', '"amount":100,"amount":1000000000');
    expect((await deliverRaw(gateway, body)).status).toBe(200);
    await keptUnder(sessionId).toMatchObject({
      reason: expect.stringContaining('duplicate key: data.amount'),
      event: { type: 'DeliveryUnusable', body },
    });
    expect(await balanceOf(m)).toBe(0);
    expect(await entriesOf(m.merchant.merchant_id)).toEqual([]);
  });

  it.each([
    [
      'a payment without a session id',
      (m: Merchant) => JSON.stringify(payment(m, 900, ({ session_id: _s, ...d }) => d)),
    ],
    ['a JSON array', () => JSON.stringify([{ type: 'payment.received', n: nipSessionId() }])],
    ['an object without a type', () => JSON.stringify({ data: { n: nipSessionId() } })],
  ])('keeps %s under its body hash', async (_label, make) => {
    const m = await aMerchant();
    const body = make(m);
    expect((await deliverRaw(gateway, body)).status).toBe(200);
    await keptUnder(`body:${sha256(body)}`).toMatchObject({ reason: expect.any(String), event: { body } });
    expect(await balanceOf(m)).toBe(0);
  });

  it('keeps a transfer verdict whose reference cannot be read', async () => {
    const body = JSON.stringify({ type: 'transfer.failed', data: { reference: 42, n: nipSessionId() } });
    expect((await deliverRaw(gateway, body)).status).toBe(200);
    await keptUnder(`body:${sha256(body)}`).toMatchObject({
      reason: expect.stringContaining('data.reference'),
      event: { partner_event: 'transfer.failed' },
    });
  });

  it('answers only a body that is not JSON with 400', async () => {
    for (const body of ['{"type":', 'payment.received', '']) {
      expect((await deliverRaw(gateway, body)).status, body).toBe(400);
    }
  });
});
