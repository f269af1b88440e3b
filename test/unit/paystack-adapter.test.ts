import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '#shared/errors.ts';
import type { WebhookDelivery } from '#shared/partners/partner.ts';
import { createPaystackPartner, type PaystackOptions } from '#shared/partners/paystack.ts';

// The pure parts of the Paystack adapter: webhook verification, webhook payloads → domain events,
// and transfer references. Payloads are built from Paystack's published samples
// (PaystackOSS/doc-code-snippets: dist/doc/payments/payment-methods/pwt-events.js,
// dist/doc/payments/webhooks/events.js, dist/doc/payments/dedicated-virtual-account/event-snippet.js).

const SECRET = 'sk_test_0123456789abcdef0123456789abcdef01234567';

type Json = Record<string, unknown>;

function adapter(overrides: Partial<PaystackOptions> = {}) {
  const memo = new Map<string, string>();
  return createPaystackPartner({
    // Unroutable: none of these tests may reach a network.
    baseUrl: 'http://127.0.0.1:9',
    secretKey: async () => SECRET,
    timeoutMs: 100,
    webhookIps: [],
    emailDomain: 'customers.example.ng',
    dvaBank: 'wema-bank',
    memo: { get: async (key) => memo.get(key), put: async (key, value) => void memo.set(key, value) },
    ...overrides,
  });
}

const sign = (body: string, key = SECRET) => createHmac('sha512', key).update(body).digest('hex');

function delivery(payload: unknown, overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  const rawBody = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return {
    headers: { 'content-type': 'application/json', 'x-paystack-signature': sign(rawBody) },
    rawBody,
    sourceIp: '52.31.139.75',
    ...overrides,
  };
}

/** pwt-events.js `charge_successful`: a Pay with Transfer payment. */
function pwtChargeSuccess(data: Json = {}, authorization: Json = {}): Json {
  return {
    event: 'charge.success',
    data: {
      id: 3104021987,
      domain: 'test',
      status: 'success',
      reference: 'zuz8ggd1ro',
      amount: 25000,
      message: null,
      gateway_response: 'Approved',
      paid_at: '2023-09-12T13:29:09.000Z',
      created_at: '2023-09-12T13:27:50.000Z',
      channel: 'bank_transfer',
      currency: 'NGN',
      ip_address: '172.91.42.100',
      metadata: '',
      fees_breakdown: null,
      log: null,
      fees: 375,
      fees_split: null,
      authorization: {
        authorization_code: 'AUTH_q5nfynycgm',
        bin: '008XXX',
        last4: 'X553',
        exp_month: '09',
        exp_year: '2023',
        channel: 'bank_transfer',
        card_type: 'transfer',
        bank: null,
        country_code: 'NG',
        brand: 'Managed Account',
        reusable: false,
        signature: null,
        account_name: null,
        sender_country: 'NG',
        sender_bank: null,
        sender_bank_account_number: 'XXXXXXX553',
        sender_name: 'Jadesola Oluwashina',
        narration: 'Channel Tests',
        ...authorization,
      },
      customer: {
        id: 138496675,
        first_name: null,
        last_name: null,
        email: 'another@one.com',
        customer_code: 'CUS_1eq06yu8efl8u63',
        phone: null,
        metadata: null,
        risk_action: 'default',
        international_format_phone: null,
      },
      plan: {},
      subaccount: {},
      split: {},
      order_id: null,
      paidAt: '2023-09-12T13:29:09.000Z',
      requested_amount: 25000,
      pos_transaction_data: null,
      source: { type: 'api', source: 'merchant_api', entry_point: 'charge', identifier: null },
      ...data,
    },
  };
}

/** A payment into a dedicated account: the charge.success shape with event-snippet.js's authorization. */
function dvaChargeSuccess(data: Json = {}): Json {
  const base = pwtChargeSuccess({
    id: 3104030001,
    reference: 'T493859324_dva',
    channel: 'dedicated_nuban',
    customer: {
      id: 7454289,
      first_name: 'RHODA',
      last_name: 'CHURCH',
      email: 'rhodachurch@email.com',
      customer_code: 'CUS_kpb3qj71u1m0rw8',
      phone: '+2349053267565',
      metadata: null,
      risk_action: 'default',
    },
    ...data,
  });
  (base.data as Json).authorization = {
    authorization_code: 'AUTH_0ozsafcpdf',
    bin: '413XXX',
    last4: 'X011',
    exp_month: '01',
    exp_year: '2020',
    channel: 'dedicated_nuban',
    card_type: 'transfer',
    bank: 'First City Monument Bank',
    country_code: 'NG',
    brand: 'Managed Account',
    reusable: false,
    signature: null,
    sender_bank: 'First City Monument Bank',
    sender_bank_account_number: 'XXXXXX0011',
    sender_country: 'NG',
    sender_name: 'RANDALL AKANBI HORTON',
    narration: 'NIP: RHODA CHURCH -1123344343/44343231232',
    receiver_bank_account_number: '9930000902',
    receiver_bank: 'Wema Bank',
  };
  return base;
}

/** webhooks/events.js `transaction_successful`: a card payment, which the service never issues. */
function cardChargeSuccess(): Json {
  return {
    event: 'charge.success',
    data: {
      id: 302961,
      domain: 'live',
      status: 'success',
      reference: 'qTPrJoy9Bx',
      amount: 10000,
      message: null,
      gateway_response: 'Approved by Financial Institution',
      paid_at: '2016-09-30T21:10:19.000Z',
      created_at: '2016-09-30T21:09:56.000Z',
      channel: 'card',
      currency: 'NGN',
      ip_address: '41.242.49.37',
      metadata: 0,
      fees: null,
      customer: {
        id: 68324,
        first_name: 'BoJack',
        last_name: 'Horseman',
        email: 'bojack@horseman.com',
        customer_code: 'CUS_qo38as2hpsgk2r0',
        phone: null,
        metadata: null,
        risk_action: 'default',
      },
      authorization: {
        authorization_code: 'AUTH_f5rnfq9p',
        bin: '539999',
        last4: '8877',
        exp_month: '08',
        exp_year: '2020',
        card_type: 'mastercard DEBIT',
        bank: 'Guaranty Trust Bank',
        country_code: 'NG',
        brand: 'mastercard',
        account_name: 'BoJack Horseman',
      },
      plan: {},
    },
  };
}

/** webhooks/events.js `transfer_successful`, `transfer_failed` and `transfer_reversed`. */
function transferEvent(
  event: 'transfer.success' | 'transfer.failed' | 'transfer.reversed',
  data: Json = {},
): Json {
  const status = event.slice('transfer.'.length);
  return {
    event,
    data: {
      amount: 100000,
      createdAt: '2025-08-04T10:32:40.000Z',
      currency: 'NGN',
      domain: 'test',
      failures: null,
      id: 860703114,
      integration: { id: 463433, is_live: true, business_name: 'Paystack Demo' },
      // Paystack echoes the narration we sent here: it is not a failure reason.
      reason: 'Bonus for the week',
      reference: 'acv_9ee55786-2323-4760-98e2-6380c9cb3f68',
      source: 'balance',
      source_details: null,
      status,
      titan_code: null,
      transfer_code: 'TRF_v5tip3zx8nna9o78',
      transferred_at: status === 'reversed' ? '2020-03-24T07:14:00.000Z' : null,
      updatedAt: '2025-08-04T10:32:40.000Z',
      recipient: {
        active: true,
        currency: 'NGN',
        domain: 'test',
        id: 56824902,
        name: 'Jekanmo Padie',
        recipient_code: 'RCP_gd9vgag7n5lr5ix',
        type: 'nuban',
        details: {
          authorization_code: null,
          account_number: '9876543210',
          account_name: null,
          bank_code: '044',
          bank_name: 'Access Bank',
        },
      },
      session: { provider: 'nip', id: '74849400998877667' },
      fee_charged: 0,
      gateway_response: null,
      ...data,
    },
  };
}

/** pwt-events.js `bank_transfer_rejected`: a wrong amount Paystack returned to the payer. */
function bankTransferRejected(data: Json = {}, bankTransfer: Json = {}): Json {
  return {
    event: 'bank.transfer.rejected',
    data: {
      bank_transfer: {
        amount: '30000',
        message: 'incorrect amount sent',
        message_type: 'INCORRECT_AMOUNT',
        transaction_id: '3103959930',
        ...bankTransfer,
      },
      customer: {
        first_name: null,
        last_name: null,
        email: 'test@amount.com',
        phone: null,
        metadata: null,
        domain: 'test',
        customer_code: 'CUS_1qjgujjddixs8gd',
        risk_action: 'default',
        id: 138492368,
        integration: 165949,
        createdAt: '2023-09-12T12:55:55.000Z',
        updatedAt: '2023-09-12T12:55:55.000Z',
      },
      ...data,
    },
  };
}

const eventsOf = (payload: unknown) => adapter().eventsOf(delivery(payload)).events;

describe('Paystack webhook verification', () => {
  const body = JSON.stringify(pwtChargeSuccess());

  it('accepts the hex HMAC-SHA512 of the raw body keyed with the secret key, in either case', async () => {
    expect(await adapter().verifyDelivery(delivery(body))).toBeUndefined();
    const upper = { 'x-paystack-signature': sign(body).toUpperCase() };
    expect(await adapter().verifyDelivery(delivery(body, { headers: upper }))).toBeUndefined();
  });

  it.each([
    ['a signature made with another key', sign(body, 'sk_test_another')],
    ['a signature of another body', sign(body.replace('25000', '2500000'))],
    ['a signature of the re-serialised body', sign(JSON.stringify(JSON.parse(body), null, 2))],
    ['a signature one character short', sign(body).slice(1)],
    // Prefixes of the right one: a check that compares only what it was given would take them.
    ['the first 2 characters of the right signature', sign(body).slice(0, 2)],
    ['the first half of the right signature', sign(body).slice(0, 64)],
    ['the right signature less its last 2 characters', sign(body).slice(0, 126)],
    ['a signature one byte long', `${sign(body)}00`],
    ['a non-hex signature of the right length', `${sign(body).slice(0, 127)}g`],
    ['an empty signature', ''],
    ['a huge signature', 'a'.repeat(10_000)],
  ])('rejects %s', async (_label, signature) => {
    const headers = { 'x-paystack-signature': signature };
    expect(await adapter().verifyDelivery(delivery(body, { headers }))).toEqual(expect.any(String));
  });

  it('rejects the body re-formatted under the signature of the bytes Paystack sent: the HMAC is over the raw body', async () => {
    // A check over the parsed and re-serialised body would take this (the case above cannot tell).
    const reformatted = JSON.stringify(JSON.parse(body), null, 2);
    const headers = { 'x-paystack-signature': sign(body) };
    expect(await adapter().verifyDelivery(delivery(reformatted, { headers }))).toEqual(expect.any(String));
  });

  it('rejects a delivery without the signature header', async () => {
    expect(await adapter().verifyDelivery(delivery(body, { headers: {} }))).toEqual(expect.any(String));
  });

  it('checks the source address only when addresses are configured', async () => {
    const allowlisted = adapter({ webhookIps: ['52.31.139.75', '52.49.173.169', '52.214.14.220'] });
    expect(await allowlisted.verifyDelivery(delivery(body, { sourceIp: '52.49.173.169' }))).toBeUndefined();
    expect(
      await allowlisted.verifyDelivery(delivery(body, { sourceIp: '::ffff:52.214.14.220' })),
    ).toBeUndefined();
    for (const sourceIp of ['203.0.113.7', '52.31.139.7', undefined]) {
      expect(await allowlisted.verifyDelivery(delivery(body, { sourceIp }))).toEqual(expect.any(String));
    }
    expect(await adapter().verifyDelivery(delivery(body, { sourceIp: '203.0.113.7' }))).toBeUndefined();
  });

  it('compares an allowed address as written in any form: IPv4-mapped, any case', async () => {
    const allowlisted = adapter({ webhookIps: ['::FFFF:52.31.139.75'] });
    for (const sourceIp of ['52.31.139.75', '::ffff:52.31.139.75']) {
      expect(await allowlisted.verifyDelivery(delivery(body, { sourceIp }))).toBeUndefined();
    }
    expect(await allowlisted.verifyDelivery(delivery(body, { sourceIp: '52.31.139.7' }))).toEqual(
      expect.any(String),
    );
  });

  it('still needs the signature from an allowed address', async () => {
    const allowlisted = adapter({ webhookIps: ['52.31.139.75'] });
    const headers = { 'x-paystack-signature': sign(body, 'sk_test_another') };
    expect(await allowlisted.verifyDelivery(delivery(body, { headers }))).toBe('signature mismatch');
  });
});

describe('Paystack webhook events', () => {
  it('turns a Pay with Transfer charge.success into a payment to the charge reference', () => {
    const { deliveryId, events } = adapter().eventsOf(delivery(pwtChargeSuccess()));
    expect(deliveryId).toBe('paystack:charge.success:3104021987');
    expect(events).toEqual([
      {
        type: 'PaymentReceived',
        partner: 'paystack',
        payment_id: '3104021987',
        account_ids: ['charge:zuz8ggd1ro'],
        account_number: null,
        amount: 25000,
        sender: { account_name: 'Jadesola Oluwashina', account_number: 'XXXXXXX553', bank_code: null },
        narration: 'Channel Tests',
        paid_at: '2023-09-12T13:29:09.000Z',
      },
    ]);
  });

  it('gives a redelivery the same delivery id and payment id', () => {
    const first = adapter().eventsOf(delivery(pwtChargeSuccess()));
    const again = adapter().eventsOf(delivery(pwtChargeSuccess({ gateway_response: 'Approved again' })));
    expect(again.deliveryId).toBe(first.deliveryId);
    expect(again.events[0]).toEqual(first.events[0]);
  });

  it('turns a dedicated_nuban charge.success into a payment to the account number, then the customer', () => {
    expect(eventsOf(dvaChargeSuccess())).toEqual([
      {
        type: 'PaymentReceived',
        partner: 'paystack',
        payment_id: '3104030001',
        account_ids: ['nuban:9930000902', 'customer:CUS_kpb3qj71u1m0rw8'],
        account_number: '9930000902',
        amount: 25000,
        // The sample's sender_bank is a name ("First City Monument Bank"): our code of that bank.
        sender: { account_name: 'RANDALL AKANBI HORTON', account_number: 'XXXXXX0011', bank_code: '214' },
        narration: 'NIP: RHODA CHURCH -1123344343/44343231232',
        paid_at: '2023-09-12T13:29:09.000Z',
      },
    ]);
  });

  it('matches a dedicated account payment by customer code alone when the receiver is missing', () => {
    const payload = dvaChargeSuccess();
    delete ((payload.data as Json).authorization as Json).receiver_bank_account_number;
    expect(eventsOf(payload)[0]).toMatchObject({
      account_ids: ['customer:CUS_kpb3qj71u1m0rw8'],
      account_number: null,
    });
  });

  it("reads the channel from the authorization when the event's data gives none (event-snippet.js shows it only there)", () => {
    const payload = dvaChargeSuccess();
    delete (payload.data as Json).channel;
    expect(eventsOf(payload)).toEqual(eventsOf(dvaChargeSuccess()));
    expect(eventsOf(payload)[0]).toMatchObject({
      account_ids: ['nuban:9930000902', 'customer:CUS_kpb3qj71u1m0rw8'],
    });
    // The event's own channel decides when it gives one: a card payment stays not ours; one that
    // names a receiving account all the same is kept for operators, never dropped.
    const card = dvaChargeSuccess({ channel: 'card' });
    expect(eventsOf(card)).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        reason: expect.stringContaining('names a receiving account'),
      }),
    ]);
    delete ((card.data as Json).authorization as Json).receiver_bank_account_number;
    expect(eventsOf(card)).toEqual([]);
    // As Paystack's live card events have it: a receiver of null names no account.
    ((card.data as Json).authorization as Json).receiver_bank_account_number = null;
    expect(eventsOf(card)).toEqual([]);
  });

  it('keeps a sender bank that is a CBN code, names one by our list, and leaves an unknown name null', () => {
    const [event] = eventsOf(pwtChargeSuccess({}, { sender_bank: '058' }));
    expect(event).toMatchObject({ sender: { bank_code: '058' } });
    const [named] = eventsOf(pwtChargeSuccess({}, { sender_bank: 'Guaranty Trust Bank' }));
    expect(named).toMatchObject({ sender: { bank_code: '058' } });
    const [unknown] = eventsOf(pwtChargeSuccess({}, { sender_bank: 'Bank of Nowhere' }));
    expect(unknown).toMatchObject({ sender: { bank_code: null } });
    // Not Access Bank (044): the old Diamond Bank, absent from our list. No words are dropped.
    const [qualified] = eventsOf(pwtChargeSuccess({}, { sender_bank: 'Access Bank (Diamond)' }));
    expect(qualified).toMatchObject({ sender: { bank_code: null } });
  });

  it('reads paidAt when paid_at is missing', () => {
    const [event] = eventsOf(pwtChargeSuccess({ paid_at: undefined, paidAt: '2023-09-12T13:30:00.000Z' }));
    expect(event).toMatchObject({ paid_at: '2023-09-12T13:30:00.000Z' });
  });

  it('never lets cosmetic fields block a credit: long strings are cut, odd types dropped', () => {
    const [event] = eventsOf(
      pwtChargeSuccess(
        { paid_at: 'yesterday', paidAt: 12, surprise: { nested: [1, 2] } },
        { sender_name: 'N'.repeat(1000), narration: 'x'.repeat(2000), sender_bank_account_number: 553 },
      ),
    );
    expect(event).toMatchObject({
      amount: 25000,
      sender: { account_name: 'N'.repeat(200), account_number: null, bank_code: null },
      narration: 'x'.repeat(500),
      paid_at: null,
    });
  });

  it('ignores fields it does not know', () => {
    const plain = eventsOf(pwtChargeSuccess());
    expect(
      eventsOf({
        ...pwtChargeSuccess(),
        extra: true,
        data: { ...(pwtChargeSuccess().data as Json), new_field: 'x' },
      }),
    ).toEqual(plain);
  });

  it.each([
    ['a fractional amount', { amount: 250.5 }],
    ['an amount in a string', { amount: '25000' }],
    ['a zero amount', { amount: 0 }],
    ['a negative amount', { amount: -25000 }],
    ['an unsafe amount', { amount: 2 ** 53 }],
    ['another currency', { currency: 'USD' }],
    ['no currency', { currency: undefined }],
    ['no transaction id', { id: undefined }],
    // An id its transaction's reference payment:<id> could not carry: a path's separator, 93 characters.
    ['a transaction id with a /', { id: 'T31/04' }],
    ['a transaction id over 92 characters', { id: '1'.repeat(93) }],
    ['no charge reference', { reference: undefined }],
  ])(
    'credits nothing for a charge.success with %s: keeps it for operators with the reason',
    (_label, data) => {
      const payload = pwtChargeSuccess(data);
      expect(eventsOf(payload)).toEqual([
        {
          type: 'DeliveryUnusable',
          partner: 'paystack',
          partner_event: 'charge.success',
          partner_id: 'id' in data ? null : '3104021987',
          reason: expect.stringMatching(/^charge\.success cannot be credited: \S/),
          body: JSON.stringify(payload),
          body_bytes: Buffer.byteLength(JSON.stringify(payload)),
          body_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        },
      ]);
    },
  );

  it('keeps a charge.success whose key is given twice, crediting neither amount', () => {
    const body = JSON.stringify(pwtChargeSuccess()).replace(
      '"amount":25000',
      '"amount":25000,"amount":2500000000',
    );
    expect(eventsOf(body)).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        partner_id: '3104021987',
        reason: expect.stringContaining('duplicate key: data.amount'),
      }),
    ]);
  });

  it('ignores charge.success on channels the service never issues (a card payment)', () => {
    expect(eventsOf(cardChargeSuccess())).toEqual([]);
  });

  it('keeps for operators a charge.success on another channel that names a charge the service made', () => {
    const payload = cardChargeSuccess();
    const data = { ...(payload.data as Json), reference: 'va-0123456789abcdef01234567' };
    expect(eventsOf({ ...payload, data })).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        partner_event: 'charge.success',
        reason:
          'charge.success on channel "card": it names a charge the service made (va-0123456789abcdef01234567)',
      }),
    ]);
  });

  it.each<[string, (payload: Json) => Json, string]>([
    [
      'its channel spelled otherwise',
      (p) => ({ ...p, data: { ...(p.data as Json), channel: 'DEDICATED_NUBAN' } }),
      'its channel is ours, spelled otherwise',
    ],
    ['data that is not an object', (p) => ({ ...p, data: [p.data] }), 'its channel cannot be read'],
    [
      'no channel, to a receiving account',
      (p) => {
        const data: Json = { ...(p.data as Json), channel: undefined };
        return {
          ...p,
          data: { ...data, authorization: { ...(data.authorization as Json), channel: undefined } },
        };
      },
      'it names a receiving account',
    ],
  ])('keeps for operators, never drops, a charge.success with %s', (_label, change, why) => {
    expect(eventsOf(change(dvaChargeSuccess()))).toEqual([
      expect.objectContaining({ type: 'DeliveryUnusable', reason: expect.stringContaining(why) }),
    ]);
  });

  it('keeps at most 64 KiB of a kept body, counted in UTF-8 bytes (the queued message stays far below 256 KiB)', () => {
    const body = JSON.stringify({ event: 'charge.success', data: ['😀'.repeat(65_500)] });
    const [kept] = eventsOf(body);
    expect(kept).toMatchObject({ type: 'DeliveryUnusable', body_bytes: Buffer.byteLength(body) });
    const stored = (kept as { body: string }).body;
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(64 * 1024);
    expect(body.startsWith(stored)).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThan(100 * 1024);
  });

  it('reads ids, account numbers, channels and event names exactly as sent, never trimmed or cut', () => {
    const padded = dvaChargeSuccess();
    const data = padded.data as Json;
    data.customer = { ...(data.customer as Json), customer_code: 'CUS_other' };
    data.authorization = {
      ...(data.authorization as Json),
      receiver_bank_account_number: '\u00a09930000902\u3000',
    };
    // A receiver given, but not 10 digits as sent: kept, never matched by the customer code alone.
    expect(eventsOf(padded)).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        reason: expect.stringContaining('its receiving account number is not 10 digits'),
      }),
    ]);
    // Paystack's description gives the field no type: as a JSON number it is its digits, the leading
    // zeros a number cannot carry put back (a whole number of at most 10 digits).
    const numbered = dvaChargeSuccess();
    (numbered.data as Json).authorization = {
      ...((numbered.data as Json).authorization as Json),
      receiver_bank_account_number: 9930000902,
    };
    expect(eventsOf(numbered)).toEqual(eventsOf(dvaChargeSuccess()));
    const zeroLed = dvaChargeSuccess();
    (zeroLed.data as Json).authorization = {
      ...((zeroLed.data as Json).authorization as Json),
      receiver_bank_account_number: 123456789,
    };
    expect(eventsOf(zeroLed)[0]).toMatchObject({ type: 'PaymentReceived', account_number: '0123456789' });
    for (const receiver of ['99300009021', '993000090', 99300009021, 9930000902.5, -930000902]) {
      const odd = dvaChargeSuccess();
      const oddData = odd.data as Json;
      oddData.authorization = { ...(oddData.authorization as Json), receiver_bank_account_number: receiver };
      expect(eventsOf(odd), String(receiver)).toEqual([
        expect.objectContaining({
          type: 'DeliveryUnusable',
          reason: expect.stringContaining('not 10 digits'),
        }),
      ]);
    }
    // An event's own channel that cannot be read is never replaced by the authorization's.
    expect(eventsOf(dvaChargeSuccess({ channel: ' card' }))).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        reason: expect.stringContaining('its channel cannot be read'),
      }),
    ]);
    expect(eventsOf({ ...dvaChargeSuccess(), event: ' charge.success\n' })).toEqual([
      expect.objectContaining({ type: 'DeliveryUnusable', reason: 'not an event: no event name' }),
    ]);
    expect(eventsOf(dvaChargeSuccess({ currency: '\u2028NGN ' }))).toEqual([
      expect.objectContaining({ type: 'DeliveryUnusable', reason: expect.stringContaining('no currency') }),
    ]);
    const long = `np_${'a'.repeat(98)}`;
    for (const reference of ['\ufeffnp_0123456789abcdef\n', long]) {
      const event = transferEvent('transfer.success');
      expect(eventsOf({ ...event, data: { ...(event.data as Json), reference } })).toEqual([
        expect.objectContaining({
          type: 'DeliveryUnusable',
          reason: 'transfer.success cannot be settled: no reference',
        }),
      ]);
    }
  });

  it('keeps a transfer verdict whose amount is given but cannot be read, never settling it unchecked', () => {
    for (const amount of [
      '100000.0',
      ' 100000',
      '0100000',
      100000.5,
      -100000,
      0,
      1e30,
      2 ** 53,
      { value: 100000 },
      [100000],
    ]) {
      for (const event of ['transfer.success', 'transfer.failed', 'transfer.reversed'] as const) {
        expect(eventsOf(transferEvent(event, { amount })), `${event} ${JSON.stringify(amount)}`).toEqual([
          expect.objectContaining({
            type: 'DeliveryUnusable',
            reason: `${event} cannot be settled: its amount is not a positive whole number of kobo`,
          }),
        ]);
      }
    }
    // Nor is a verdict in another currency taken (a refund of kobo for dollars).
    for (const currency of ['USD', 'ngm', ' NGN', 'NGN ', 566, ['NGN']]) {
      for (const event of ['transfer.success', 'transfer.failed', 'transfer.reversed'] as const) {
        const reason = `${event} cannot be settled: its currency ${typeof currency === 'string' ? JSON.stringify(currency) : typeof currency} is not NGN`;
        expect(eventsOf(transferEvent(event, { currency })), `${event} ${JSON.stringify(currency)}`).toEqual([
          expect.objectContaining({ type: 'DeliveryUnusable', reason }),
        ]);
      }
    }
    // Naira in lower case is naira.
    expect(eventsOf(transferEvent('transfer.success', { currency: 'ngn' }))).toEqual([
      expect.objectContaining({
        type: 'TransferSettled',
        outcome: expect.objectContaining({ status: 'success' }),
      }),
    ]);
    // No amount at all (null, or absent) is nothing to check, as before; nor is no currency.
    expect(eventsOf(transferEvent('transfer.failed', { currency: null }))).toEqual([
      expect.objectContaining({
        type: 'TransferSettled',
        outcome: expect.objectContaining({ status: 'failed' }),
      }),
    ]);
    for (const amount of [null, undefined]) {
      expect(eventsOf(transferEvent('transfer.reversed', { amount }))).toEqual([
        expect.objectContaining({
          type: 'TransferSettled',
          outcome: expect.objectContaining({ status: 'reversed' }),
        }),
      ]);
    }
  });

  it('settles a transfer from transfer.success', () => {
    expect(eventsOf(transferEvent('transfer.success'))).toEqual([
      {
        type: 'TransferSettled',
        partner: 'paystack',
        reference: 'acv_9ee55786-2323-4760-98e2-6380c9cb3f68',
        outcome: { status: 'success', amount: 100000 },
      },
    ]);
  });

  it.each([
    ['absent', undefined],
    ['null', null],
  ])('gives no amount to check when Paystack gives it %s', (_label, amount) => {
    const [event] = eventsOf(transferEvent('transfer.success', { amount }));
    expect(event).toMatchObject({ outcome: { status: 'success' } });
    expect((event as { outcome: { amount?: number } }).outcome.amount).toBeUndefined();
  });

  it('reads an amount given as its digits, as Paystack gives some amounts, and checks it', () => {
    expect(eventsOf(transferEvent('transfer.success', { amount: '100000' }))).toEqual([
      expect.objectContaining({ type: 'TransferSettled', outcome: { status: 'success', amount: 100000 } }),
    ]);
  });

  it.each([
    ['transfer.failed', 'failed'],
    ['transfer.reversed', 'reversed'],
  ] as const)('gives %s the default reason, never the narration Paystack echoes', (event, status) => {
    const { deliveryId, events } = adapter().eventsOf(delivery(transferEvent(event)));
    expect(deliveryId).toBe(`paystack:${event}:860703114`);
    expect(events).toEqual([
      {
        type: 'TransferSettled',
        partner: 'paystack',
        reference: 'acv_9ee55786-2323-4760-98e2-6380c9cb3f68',
        outcome: { status, reason: 'The receiving bank did not complete the transfer', amount: 100000 },
      },
    ]);
  });

  it("gives a failed transfer Paystack's failure message when it carries one", () => {
    const [event] = eventsOf(
      transferEvent('transfer.failed', { gateway_response: 'Beneficiary account is dormant' }),
    );
    expect(event).toMatchObject({ outcome: { status: 'failed', reason: 'Beneficiary account is dormant' } });
    // Text a merchant's customer reads: well-formed, whatever Paystack sent.
    const [odd] = eventsOf(transferEvent('transfer.failed', { gateway_response: 'Dormant\ud83d\u0007' }));
    expect(odd).toMatchObject({ outcome: { status: 'failed', reason: 'Dormant\uFFFD' } });
  });

  it('gives transfer.success and transfer.reversed of one transfer different delivery ids', () => {
    const success = adapter().eventsOf(delivery(transferEvent('transfer.success')));
    const reversed = adapter().eventsOf(delivery(transferEvent('transfer.reversed')));
    expect(success.deliveryId).not.toBe(reversed.deliveryId);
  });

  it('lists a bank.transfer.rejected as a rejected attempt of the email it names', () => {
    const { deliveryId, events } = adapter().eventsOf(delivery(bankTransferRejected()));
    expect(deliveryId).toBe('paystack:bank.transfer.rejected:3103959930');
    expect(events).toEqual([
      {
        type: 'PaymentRejected',
        partner: 'paystack',
        attempt_id: '3103959930',
        account_ids: [],
        alias_ids: ['email:test@amount.com'],
        amount: 30000,
        reason: 'incorrect amount sent',
        rejected_at: null,
      },
    ]);
  });

  it('puts the charge reference first when a rejection carries it, and lowercases the email', () => {
    const payload = bankTransferRejected({ reference: 'va-0123456789abcdef01234567' });
    ((payload.data as Json).customer as Json).email = 'Test@Amount.COM';
    expect(eventsOf(payload)[0]).toMatchObject({
      account_ids: ['charge:va-0123456789abcdef01234567'],
      alias_ids: ['email:test@amount.com'],
    });
  });

  it('keeps a rejection without an amount for operators, listing nothing', () => {
    expect(eventsOf(bankTransferRejected({}, { amount: 'thirty' }))).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        partner_id: 'rejected:3103959930',
        reason: 'bank.transfer.rejected cannot be listed: no amount',
      }),
    ]);
  });

  it('keeps a transfer verdict without a reference for operators, settling nothing', () => {
    const payload = transferEvent('transfer.failed', { reference: undefined });
    expect(eventsOf(payload)).toEqual([
      expect.objectContaining({
        type: 'DeliveryUnusable',
        reason: 'transfer.failed cannot be settled: no reference',
      }),
    ]);
  });

  it.each([
    ['dedicatedaccount.assign.success', { customer: { customer_code: 'CUS_hp05n9khsqcesz2' } }],
    ['refund.processed', { id: 1 }],
    ['transfer.otp', { reference: 'np_x' }],
  ])('acknowledges and ignores %s', (event, data) => {
    const result = adapter().eventsOf(delivery({ event, data }));
    expect(result.events).toEqual([]);
    expect(result.deliveryId).toEqual(expect.stringMatching(/^paystack:/));
  });

  it('keeps JSON that is not an event for operators, with a delivery id from the body', () => {
    for (const body of ['[]', '"charge.success"', 'null', '{"data":{}}']) {
      const result = adapter().eventsOf(delivery(body));
      expect(result.events).toEqual([
        expect.objectContaining({
          type: 'DeliveryUnusable',
          partner_id: null,
          reason: expect.stringMatching(/^not an event/),
          body,
        }),
      ]);
      expect(result.deliveryId).toMatch(/^paystack:sha256:[0-9a-f]{64}$/);
    }
  });

  it('throws a validation error for a body that is not JSON', () => {
    expect(() => adapter().eventsOf(delivery('{"event":'))).toThrow(ValidationError);
  });
});

describe('Paystack transfer references', () => {
  const { transferReference } = adapter();

  it('are 16-50 characters of lowercase a-z, 0-9, - and _', () => {
    for (const [merchant, reference] of [
      ['mer_1', 'r'],
      ['MER_ABC', 'Payout #42 / Ünïcödé'],
      ['m'.repeat(200), 'x'.repeat(200)],
      ['', ''],
    ]) {
      expect(transferReference(merchant as string, reference as string)).toMatch(/^[a-z0-9_-]{16,50}$/);
    }
  });

  it('are deterministic, so a resend carries the same reference', () => {
    expect(transferReference('mer_1', 'payout-1')).toBe(transferReference('mer_1', 'payout-1'));
    expect(adapter().transferReference('mer_1', 'payout-1')).toBe(transferReference('mer_1', 'payout-1'));
  });

  it('differ for different merchants or references, however the parts are split', () => {
    const references = new Set<string>();
    const inputs: [string, string][] = [
      ['mer_1', 'payout-1'],
      ['mer_2', 'payout-1'],
      ['mer_1', 'payout-2'],
      ['mer_1', 'Payout-1'],
      ['ab', 'c'],
      ['a', 'bc'],
    ];
    for (let i = 0; i < 1000; i++) inputs.push(['mer_bulk', `ref-${i}`]);
    for (const [merchant, reference] of inputs) references.add(transferReference(merchant, reference));
    expect(references.size).toBe(inputs.length);
  });
});
