import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNuban } from '#shared/banks/nuban.ts';
import { parseWebhookSecrets } from '#shared/config.ts';
import { sign } from '#shared/crypto/standard-webhooks.ts';
import { AccountNotFound, PartnerUnavailable, TransferNotSent, ValidationError } from '#shared/errors.ts';
import {
  type BankingPartner,
  EARLIER_SENDS_OVER_MS,
  type IssuedAccount,
  SEND_START_WITHIN_MS,
  type TransferOutcome,
  type WebhookDelivery,
} from '#shared/partners/partner.ts';
import { createPaystackPartner } from '#shared/partners/paystack.ts';
import { createSandboxPartner } from '#shared/partners/sandbox.ts';
import { paymentEvent } from '#test/support/payments.ts';
import {
  PAYSTACK_ACCOUNT_PREFIXES,
  type PaystackStandIn,
  standInAccountNumber,
  startPaystackStandIn,
} from '#test/support/paystack-stand-in.ts';

/**
 * The contract of the banking-partner port, one suite run against every adapter: the sandbox
 * adapter against the test run's sandbox partner, the Paystack adapter against the Paystack
 * stand-in. Each fixture names its own test accounts and signs deliveries its partner's way; the
 * expectations are the port's, the same for both.
 */
interface Fixture {
  partner: BankingPartner;
  /** A resolvable account, one the bank does not know, and one that makes the partner hang. */
  accounts: { known: string; unknown: string; hangs: string };
  /** Transfers to these end: at once refused; later succeeded silently; later failed silently. */
  transferTo: { refused: string; silentSuccess: string; silentFailure: string };
  /** How long the partner takes to finish what it left pending. */
  settleMs: number;
  /**
   * The partner books a transfer before it answers its send (the sandbox): a resend finds what any
   * earlier send made, so a refusal of a resend is as final as a first send's. Leave it out unless
   * the partner guarantees that: then a refused resend must stay pending while an earlier send may
   * still be in the making (`EARLIER_SENDS_OVER_MS`), or its refund could meet that send's payment.
   */
  booksBeforeAnswering?: true;
  /** A delivery signed as the partner signs, and the same with one byte of the body changed. */
  signed(body: string): WebhookDelivery;
  /** The partner's own delivery of a customer paying `amount` into an issued account. */
  paymentInto(account: IssuedAccount, amount: number): Promise<WebhookDelivery>;
  /** A payment's body with every field a person reads (sender, narration, time) made hostile. */
  oddCosmetics(payload: Record<string, unknown>): Record<string, unknown>;
  /** A payment's body with its amount replaced. */
  withAmount(payload: Record<string, unknown>, amount: unknown): Record<string, unknown>;
  /** A payment's body with the narration people read (where the partner puts it) replaced. */
  withNarration(payload: Record<string, unknown>, narration: string): Record<string, unknown>;
  /**
   * How the partner's payment delivery writes its amount in JSON text (`kobo` as written: the
   * sandbox and Paystack `"amount":12000`), and the path the readers name it by: the hostile-body
   * tests edit a delivery's text at it (a key given twice, a rounded number, keys beside it).
   */
  amount: { text: (kobo: string) => string; path: string };
  /** The key of the narration people read, as `withNarration` writes it. */
  narrationKey: string;
}

type Payload = Record<string, unknown>;
const dataOf = (payload: Payload) => payload.data as Payload;

const BANK = '058';
let standIn: PaystackStandIn;

const fixtures: Record<string, () => Fixture> = {
  sandbox: () => {
    const secret = process.env.PARTNER_WEBHOOK_SECRET ?? '';
    const [key] = parseWebhookSecrets(secret);
    const signed = (body: string): WebhookDelivery => {
      const timestamp = Math.floor(Date.now() / 1000);
      return {
        headers: {
          'webhook-id': 'msg_contract',
          'webhook-timestamp': String(timestamp),
          'webhook-signature': sign(key as Buffer, 'msg_contract', timestamp, body),
        },
        rawBody: body,
        sourceIp: '127.0.0.1',
      };
    };
    return {
      partner: createSandboxPartner({
        baseUrl: process.env.PARTNER_BASE_URL ?? '',
        timeoutMs: 400,
        webhookKeys: async () => parseWebhookSecrets(secret),
      }),
      accounts: {
        known: toNuban(BANK, '123450001'),
        unknown: toNuban(BANK, '999990001'),
        hangs: toNuban(BANK, '888880001'),
      },
      transferTo: {
        refused: toNuban(BANK, '777770001'),
        silentSuccess: toNuban(BANK, '555550001'),
        silentFailure: toNuban(BANK, '444440001'),
      },
      settleMs: 500,
      booksBeforeAnswering: true,
      signed,
      paymentInto: async (account, amount) =>
        signed(JSON.stringify(paymentEvent({ account_number: account.account_number, amount }))),
      oddCosmetics: (payload) => ({
        ...payload,
        data: { ...dataOf(payload), sender: 'ADEBAYO', narration: 'x'.repeat(5_000), paid_at: 1_767_225_600 },
      }),
      withAmount: (payload, amount) => ({ ...payload, data: { ...dataOf(payload), amount } }),
      withNarration: (payload, narration) => ({ ...payload, data: { ...dataOf(payload), narration } }),
      amount: { text: (kobo) => `"amount":${kobo}`, path: 'data.amount' },
      narrationKey: 'narration',
    };
  },
  paystack: () => {
    const memo = new Map<string, string>();
    const signed = (body: string): WebhookDelivery => ({
      headers: { 'x-paystack-signature': createHmac('sha512', standIn.secretKey).update(body).digest('hex') },
      rawBody: body,
      sourceIp: '52.31.139.75',
    });
    return {
      partner: createPaystackPartner({
        baseUrl: standIn.url,
        secretKey: async () => standIn.secretKey,
        timeoutMs: 400,
        webhookIps: [],
        emailDomain: 'customers.example.ng',
        dvaBank: 'wema-bank',
        memo: { get: async (k) => memo.get(k), put: async (k, v) => void memo.set(k, v) },
      }),
      accounts: {
        known: standInAccountNumber('12345', BANK, 1),
        unknown: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.unresolvable, BANK, 1),
        hangs: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.resolveHangs, BANK, 1),
      },
      transferTo: {
        refused: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.insufficientBalance, BANK, 1),
        silentSuccess: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, BANK, 1),
        silentFailure: standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.failsSilently, BANK, 1),
      },
      settleMs: 200,
      signed,
      paymentInto: async (account, amount) => {
        const chargeId = account.account_ids.find((id) => id.startsWith('charge:'))?.slice('charge:'.length);
        const { event } = chargeId
          ? await standIn.payCharge(chargeId, amount, { sendWebhook: false })
          : await standIn.payDedicatedAccount(account.account_number, amount);
        return signed(JSON.stringify(event));
      },
      oddCosmetics: (payload) => {
        const authorization = dataOf(payload).authorization as Payload;
        return {
          ...payload,
          data: {
            ...dataOf(payload),
            paid_at: 1_767_225_600,
            paidAt: ['odd'],
            authorization: {
              ...authorization,
              sender_name: 7,
              narration: 'x'.repeat(5_000),
              sender_bank: '9'.repeat(40),
              sender_bank_account_number: '1'.repeat(40),
            },
          },
        };
      },
      withAmount: (payload, amount) => ({ ...payload, data: { ...dataOf(payload), amount } }),
      withNarration: (payload, narration) => ({
        ...payload,
        data: {
          ...dataOf(payload),
          authorization: { ...(dataOf(payload).authorization as Payload), narration },
        },
      }),
      amount: { text: (kobo) => `"amount":${kobo}`, path: 'data.amount' },
      narrationKey: 'narration',
    };
  },
};

beforeAll(async () => {
  // Deliveries go nowhere: this suite reads them through the adapter, not through the service.
  standIn = await startPaystackStandIn({ settleAfterMs: 200 });
});
afterAll(() => standIn.close());

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const order = (reference: string, accountNumber: string) => ({
  reference,
  amount: 5_000,
  bank_code: BANK,
  account_number: accountNumber,
  account_name: 'CONTRACT PAYEE',
  narration: 'contract test',
  countedAt: Date.now(),
});

/** A final outcome as `expected`; its amount, where the partner gives one, the order's (`TransferOutcome`). */
function expectFinal(outcome: TransferOutcome | undefined, expected: Record<string, unknown>) {
  const { amount, ...rest } = (outcome ?? {}) as { amount?: number };
  expect(rest).toEqual(expected);
  expect([undefined, 5_000]).toContain(amount);
}

describe.each(Object.keys(fixtures))('the %s adapter keeps the partner port contract', (name) => {
  let f: Fixture;
  beforeAll(() => {
    f = (fixtures[name] as () => Fixture)();
  });
  const reference = (label: string) =>
    f.partner.transferReference('mer_contract', `${label}-${Math.random().toString(36).slice(2, 10)}`);
  /** The delivery's text with `make(amount)` where its amount of 12,000 kobo was written. */
  const atAmount = (json: string, make: (amount: string) => string) => {
    const amount = f.amount.text('12000');
    expect(json).toContain(amount);
    return json.replace(amount, make(amount));
  };
  /** The path of the object holding the amount, which the readers name keys beside it by. */
  const holder = () => f.amount.path.split('.').slice(0, -1).join('.');
  /** The narration given as `text` (JSON), in a body whose narration was made `@@`. */
  const narrations = (payload: Payload, text: string) => {
    const json = JSON.stringify(f.withNarration(payload, '@@'));
    const at = `"${f.narrationKey}":"@@"`;
    expect(json).toContain(at);
    return json.replace(at, text);
  };
  const narration = (value: string) => `"${f.narrationKey}":${JSON.stringify(value)}`;

  it('resolves a known account to the same name every time', async () => {
    const first = await f.partner.nameEnquiry(BANK, f.accounts.known);
    expect(first).toMatch(/\S/);
    expect(await f.partner.nameEnquiry(BANK, f.accounts.known)).toBe(first);
  });

  it('answers AccountNotFound for an account the bank does not know, PartnerUnavailable when it hangs', async () => {
    await expect(f.partner.nameEnquiry(BANK, f.accounts.unknown)).rejects.toBeInstanceOf(AccountNotFound);
    await expect(f.partner.nameEnquiry(BANK, f.accounts.hangs)).rejects.toBeInstanceOf(PartnerUnavailable);
  });

  it('issues wallets and virtual accounts at a listed bank, each with ids of its own', async () => {
    const wallet = await f.partner.issueWallet({ merchant_id: 'mer_contract1', name: 'Contract Ltd' });
    const expires = new Date(Date.now() + 30 * 60_000).toISOString();
    const accounts = await Promise.all(
      ['va-1', 'va-2'].map((ref) =>
        f.partner.openVirtualAccount({
          merchant_id: 'mer_contract1',
          reference: ref,
          name: 'Ada Obi',
          amount: 25_000,
          expires_at: expires,
        }),
      ),
    );
    for (const account of [wallet, ...accounts]) {
      expect(account.account_number).toMatch(/^\d{10}$/);
      expect(account.bank_code).toMatch(/^\d{3}(\d{3})?$/);
      expect(account.account_ids.length).toBeGreaterThan(0);
    }
    const ids = [wallet, ...accounts].flatMap((account) => account.account_ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('derives one partner reference per merchant reference, never the same for two', () => {
    const a = f.partner.transferReference('mer_a', 'inv-1');
    expect(f.partner.transferReference('mer_a', 'inv-1')).toBe(a);
    expect(f.partner.transferReference('mer_b', 'inv-1')).not.toBe(a);
    expect(f.partner.transferReference('mer_a', 'inv-2')).not.toBe(a);
  });

  it('sends a transfer, and a resend of its reference never fails it or pays twice', async () => {
    const ref = reference('ok');
    const first = await f.partner.sendTransfer(order(ref, f.accounts.known));
    expect(['success', 'pending']).toContain(first.status);
    const again = await f.partner.sendTransfer(order(ref, f.accounts.known));
    expect(['success', 'pending']).toContain(again.status);
    await wait(f.settleMs * 3);
    expectFinal(await f.partner.queryTransfer(ref), { status: 'success' });
  });

  it('reports a refused transfer as failed, with a reason', async () => {
    const outcome = await f.partner.sendTransfer(order(reference('no'), f.transferTo.refused));
    expectFinal(outcome, { status: 'failed', reason: expect.stringMatching(/\S/) });
  });

  it('never makes a refused resend final while an earlier send may still be in the making, unless it books before answering', async () => {
    // A resend: an earlier send was handed over a moment ago, and its answer was lost.
    const recent = await f.partner.sendTransfer({
      ...order(reference('resend'), f.transferTo.refused),
      resend: true,
      lastHandOverAt: Date.now() - 5_000,
    });
    if (f.booksBeforeAnswering)
      expectFinal(recent, { status: 'failed', reason: expect.stringMatching(/\S/) });
    else expect(recent.status).toBe('pending');
    // Once the last hand-over is EARLIER_SENDS_OVER_MS old, a partner that shows nothing has nothing.
    const over = await f.partner.sendTransfer({
      ...order(reference('resend-over'), f.transferTo.refused),
      resend: true,
      lastHandOverAt: Date.now() - EARLIER_SENDS_OVER_MS - 1_000,
    });
    expectFinal(over, { status: 'failed', reason: expect.stringMatching(/\S/) });
  });

  it('never starts a send counted more than a minute ago: not sent, and the partner has nothing', async () => {
    // A send that stalled since its count: an operator's `transfers fail`, or the requery's final
    // refusal 15 minutes on, relies on it never reaching the partner late.
    const ref = reference('late');
    const late = { ...order(ref, f.accounts.known), countedAt: Date.now() - SEND_START_WITHIN_MS - 1_000 };
    await expect(f.partner.sendTransfer(late)).rejects.toBeInstanceOf(TransferNotSent);
    expect(await f.partner.queryTransfer(ref)).toBeUndefined();
    const inTime = await f.partner.sendTransfer({ ...late, countedAt: Date.now() });
    expect(['success', 'pending']).toContain(inTime.status);
  });

  it('answers a query for a reference it never got with undefined', async () => {
    expect(await f.partner.queryTransfer(reference('never-sent'))).toBeUndefined();
  });

  it('tells by query how a transfer it finished without a webhook ended', async () => {
    const success = reference('silent-ok');
    const failure = reference('silent-no');
    expect((await f.partner.sendTransfer(order(success, f.transferTo.silentSuccess))).status).toBe('pending');
    expect((await f.partner.sendTransfer(order(failure, f.transferTo.silentFailure))).status).toBe('pending');
    await wait(f.settleMs * 3);
    expectFinal(await f.partner.queryTransfer(success), { status: 'success' });
    expectFinal(await f.partner.queryTransfer(failure), {
      status: 'failed',
      reason: expect.stringMatching(/\S/),
    });
  });

  it('accepts its own signature and refuses a tampered body or a forged signature', async () => {
    const body = JSON.stringify({ type: 'ping', event: 'ping', data: {} });
    expect(await f.partner.verifyDelivery(f.signed(body))).toBeUndefined();
    const tampered = { ...f.signed(body), rawBody: body.replace('ping', 'pong') };
    expect(await f.partner.verifyDelivery(tampered)).toEqual(expect.any(String));
    const headers = Object.fromEntries(Object.keys(f.signed(body).headers).map((h) => [h, 'forged']));
    expect(await f.partner.verifyDelivery({ ...f.signed(body), headers })).toEqual(expect.any(String));
  });

  it("turns its partner's payment delivery into one PaymentReceived for the issued account", async () => {
    const account = await f.partner.openVirtualAccount({
      merchant_id: 'mer_contract2',
      reference: 'va-pay',
      name: 'Ada Obi',
      amount: 12_000,
      expires_at: new Date(Date.now() + 30 * 60_000).toISOString(),
    });
    const delivery = await f.paymentInto(account, 12_000);
    expect(await f.partner.verifyDelivery(delivery)).toBeUndefined();
    const { events } = f.partner.eventsOf(delivery);
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({ type: 'PaymentReceived', partner: f.partner.name, amount: 12_000 });
    if (event?.type !== 'PaymentReceived') throw new Error('not a payment');
    expect(event.payment_id).toMatch(/\S/);
    expect(event.account_ids.some((id) => account.account_ids.includes(id))).toBe(true);
    // A redelivery names the same payment: the ledger entry id derives from it.
    expect(f.partner.eventsOf(delivery).events[0]).toEqual(event);
  });

  /** A payment delivery into a fresh virtual account, and its body as JSON. */
  async function aPayment(amount: number) {
    const account = await f.partner.openVirtualAccount({
      merchant_id: 'mer_contract3',
      reference: `va-${Math.random().toString(36).slice(2, 10)}`,
      name: 'Ada Obi',
      amount,
      expires_at: new Date(Date.now() + 30 * 60_000).toISOString(),
    });
    const delivery = await f.paymentInto(account, amount);
    const [payment] = f.partner.eventsOf(delivery).events;
    if (payment?.type !== 'PaymentReceived') throw new Error('not a payment');
    return { payment, payload: JSON.parse(delivery.rawBody) as Payload };
  }

  it('never lets a field people read stop a payment: odd ones are cut or dropped (API.md §11)', async () => {
    const { payment, payload } = await aPayment(12_000);
    const { events } = f.partner.eventsOf(f.signed(JSON.stringify(f.oddCosmetics(payload))));
    expect(events).toEqual([
      {
        ...payment,
        sender: expect.any(Object),
        narration: 'x'.repeat(500),
        paid_at: null,
      },
    ]);
  });

  it.each([
    ['in a string', (amount: number) => String(amount)],
    ['fractional', (amount: number) => amount + 0.5],
    ['negative', (amount: number) => -amount],
  ])(
    'keeps a payment whose amount is %s for operators, with the reason, under its payment id',
    async (_label, odd) => {
      const { payment, payload } = await aPayment(12_000);
      const body = JSON.stringify(f.withAmount(payload, odd(12_000)));
      expect(f.partner.eventsOf(f.signed(body)).events).toEqual([
        expect.objectContaining({
          type: 'DeliveryUnusable',
          partner: f.partner.name,
          partner_id: payment.payment_id,
          reason: expect.stringMatching(/amount/),
          body,
        }),
      ]);
    },
  );

  it('keeps a delivery with a key given twice, crediting neither value', async () => {
    const { payment, payload } = await aPayment(12_000);
    const body = atAmount(JSON.stringify(payload), (amount) => `${amount},${f.amount.text('1200000000')}`);
    expect(f.partner.eventsOf(f.signed(body)).events).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        partner_id: payment.payment_id,
        reason: expect.stringContaining(`duplicate key: ${f.amount.path}`),
      }),
    ]);
  });

  it('credits a payment whose narration is given twice, with the last: a field people read never blocks a credit (API.md §11)', async () => {
    const { payment, payload } = await aPayment(12_000);
    const body = narrations(payload, `${narration('first words')},${narration('last words')}`);
    expect(f.partner.eventsOf(f.signed(body)).events).toEqual([{ ...payment, narration: 'last words' }]);
  });

  it.each([
    // A reader taking the first holder of the amount takes its first amount: no reading is safe.
    [
      'a repeated object holding a repeated amount',
      (body: string, held: string, key: string) =>
        body.replace(
          `"${key}":${held}`,
          `"${key}":${held.replace(f.amount.text('12000'), `${f.amount.text('900000000')},${f.amount.text('12000')}`)},"${key}":${held}`,
        ),
      () => `duplicate key: ${f.amount.path}, ${holder()} (`,
    ],
    // The scan stops at its 11th repeated key (bounded work), before the amount given twice: the
    // body is taken as unread.
    [
      'twelve narrations, then an amount given twice',
      (body: string) =>
        atAmount(body, (amount) => `${'"narration":"n",'.repeat(12)}${f.amount.text('900000000')},${amount}`),
      () =>
        `more than 10 keys given twice or numbers JSON.parse rounds (${holder()}.narration, …): not read further`,
    ],
    // Ten rounded numbers in a field nobody reads, then a rounded amount: never credited.
    [
      'eleven numbers JSON.parse rounds, the last its amount',
      (body: string) =>
        atAmount(
          body,
          () =>
            `"x":[${Array(10).fill('1.00000000000000001').join(',')}],${f.amount.text('12000.0000000000000001')}`,
        ),
      () => `more than 10 keys given twice or numbers JSON.parse rounds (${holder()}.x.0, ${holder()}.x.1`,
    ],
    // A number JSON.parse rounds in a field no reader of people's text reads: another reader may
    // take its exact value (an id, say).
    [
      'a number JSON.parse rounds in a field read for no person',
      (body: string) => atAmount(body, (amount) => `"x":1.00000000000000001,${amount}`),
      () => `number with a fraction: ${holder()}.x (`,
    ],
  ])('keeps a delivery with %s, crediting nothing', async (_label, make, reason) => {
    const { payment, payload } = await aPayment(12_000);
    const json = JSON.stringify(payload);
    const key = holder().split('.').at(-1) ?? '';
    const held = JSON.stringify(
      holder()
        .split('.')
        .reduce<unknown>((at, part) => (at as Payload)[part], payload),
    );
    const body = make(json, held, key);
    expect(body).not.toBe(json);
    expect(f.partner.eventsOf(f.signed(body)).events).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        partner_id: payment.payment_id,
        reason: expect.stringContaining(reason()),
      }),
    ]);
  });

  it('keeps a delivery whose amount carries a fraction JSON.parse rounds away, crediting nothing', async () => {
    const { payment, payload } = await aPayment(12_000);
    const body = atAmount(JSON.stringify(payload), () => f.amount.text('12000.0000000000000001'));
    expect(f.partner.eventsOf(f.signed(body)).events).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        partner_id: payment.payment_id,
        reason: expect.stringContaining(`number with a fraction: ${f.amount.path}`),
      }),
    ]);
    // A fraction in a field people read blocks nothing (a `paid_at` that is no time is dropped).
    const cosmetic = JSON.stringify({ ...payload, data: { ...dataOf(payload), paid_at: 5 } }).replace(
      '"paid_at":5',
      '"paid_at":5.00000000000000001',
    );
    expect(f.partner.eventsOf(f.signed(cosmetic)).events).toEqual([
      expect.objectContaining({ amount: 12_000, paid_at: null }),
    ]);
  });

  it('keeps a hostile body (long keys over many repeats and rounded numbers) with a short reason, scanning only to its tenth find', async () => {
    const { payment, payload } = await aPayment(12_000);
    const key = 'k'.repeat(20_000);
    const repeats = Array.from({ length: 10 }, (_, i) => `"d${i}":0,"d${i}":1`).join(',');
    const body = atAmount(
      JSON.stringify(payload),
      (amount) => `"${key}":{${repeats}},"${key}x":[${Array(5_000).fill('1e-999').join(',')}],${amount}`,
    );
    const [kept] = f.partner.eventsOf(f.signed(body)).events;
    expect(kept).toMatchObject({ type: 'DeliveryUnusable', partner_id: payment.payment_id });
    const reason = (kept as { reason: string }).reason;
    expect(reason).toMatch(
      new RegExp(`^more than 10 keys given twice or numbers JSON\\.parse rounds \\(${holder()}\\.k{100}`),
    );
    expect(reason.length).toBeLessThanOrEqual(2_000);
  });

  it('names a repeated key to operators escaped and cut: never a control character for their terminal, never a false line', async () => {
    const { payment, payload } = await aPayment(12_000);
    const key = '\u001b[2J\u001b[31mFAKE\nsandbox:X  credited\u202e';
    const long = 'k'.repeat(300);
    const body = atAmount(
      JSON.stringify(payload),
      (amount) => `${JSON.stringify(key)}:1,${JSON.stringify(key)}:2,"${long}":1,"${long}":2,${amount}`,
    );
    const [kept] = f.partner.eventsOf(f.signed(body)).events;
    expect(kept).toMatchObject({ type: 'DeliveryUnusable', partner_id: payment.payment_id });
    const reason = (kept as { reason: string }).reason;
    expect(reason).toContain(`${holder()}.\\u001b[2J\\u001b[31mFAKE\\nsandbox:X  credited\\u202e, `);
    expect(reason).not.toMatch(/[\p{Cc}\u202e]/u);
    // A path is cut at 200 characters, its `…` the last.
    expect(reason).toContain(`${holder()}.${'k'.repeat(199 - holder().length - 1)}…`);
  });

  it('credits a payment whose field people read is given again up to ten times, and reads a body after a byte order mark', async () => {
    const { payment, payload } = await aPayment(12_000);
    const body = narrations(payload, `${`${narration('again')},`.repeat(10)}${narration('last words')}`);
    expect(f.partner.eventsOf(f.signed(body)).events).toEqual([{ ...payment, narration: 'last words' }]);
    const marked = `\uFEFF${JSON.stringify(payload)}`;
    expect(f.partner.eventsOf(f.signed(marked)).events).toEqual([payment]);
  });

  it('keeps JSON that is not an event, and throws only for a body that is not JSON', () => {
    for (const body of ['[]', '42', '{"data":{}}']) {
      expect(f.partner.eventsOf(f.signed(body)).events).toEqual([
        expect.objectContaining({ type: 'DeliveryUnusable', reason: expect.stringMatching(/^not an event/) }),
      ]);
    }
    expect(() => f.partner.eventsOf(f.signed('{"data":'))).toThrow(ValidationError);
  });
});
