import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, fund } from '#test/support/merchants.ts';
import { nipSessionId, pay } from '#test/support/payments.ts';

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
// biome-ignore lint/suspicious/noExplicitAny: event data is checked against the OpenAPI document by `call`.
type Event = { id: string; type: string; created_at: string; data: Record<string, any> };
const ref = () => `ev-${Math.random().toString(36).slice(2, 10)}`;
const balanceOf = async (m: Merchant) => (await getMerchant(m.merchant.merchant_id))?.balance ?? -1;
const waitForBalance = (m: Merchant, balance: number) =>
  expect.poll(() => balanceOf(m), { timeout: 15_000, interval: 100 }).toBe(balance);
const eventsOf = async (m: Merchant, query = '') =>
  data<Event[]>(await call(gateway, 'GET', `/events${query}`, { headers: m.headers }));
const ofType = (events: Event[], type: string) => events.filter((event) => event.type === type);

async function aVirtualAccount(m: Merchant, amount: number) {
  const reference = ref();
  const created = await call(gateway, 'POST', '/virtual-accounts', {
    body: { amount, reference },
    headers: m.headers,
  });
  return { reference, accountNumber: data<{ account_number: string }>(created).account_number };
}

describe('events of payments (API.md §8)', () => {
  it('makes one payment.received per payment and one virtual_account.paid when the account is first paid', async () => {
    const m = await aMerchant();
    const { reference, accountNumber } = await aVirtualAccount(m, 10_000);
    const first = nipSessionId();
    await pay(gateway, accountNumber, 4_000, first);
    await waitForBalance(m, 4_000);
    await pay(gateway, accountNumber, 6_000);
    await waitForBalance(m, 10_000);
    // A redelivery of the first payment, and an excess payment after the account was paid.
    await pay(gateway, accountNumber, 4_000, first);
    await pay(gateway, accountNumber, 1_000);
    await waitForBalance(m, 11_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const events = await eventsOf(m);
    const received = ofType(events, 'payment.received');
    expect(received).toHaveLength(3);
    expect(events.map((e) => e.created_at)).toEqual([...events.map((e) => e.created_at)].sort().reverse());
    const oldest = received.at(-1) as Event;
    expect(oldest.data.transaction).toMatchObject({
      reference: `payment:${first}`,
      category: 'payment',
      amount: 4_000,
      virtual_account_reference: reference,
    });
    expect(oldest.data.virtual_account).toMatchObject({
      reference,
      status: 'partially_paid',
      amount_received: 4_000,
    });
    expect(received.map((e) => e.data.virtual_account.status).reverse()).toEqual([
      'partially_paid',
      'paid',
      'overpaid',
    ]);
    const paid = ofType(events, 'virtual_account.paid');
    expect(paid).toHaveLength(1);
    expect(paid[0]?.data.virtual_account).toMatchObject({
      reference,
      status: 'paid',
      amount_received: 10_000,
    });
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    // Newest first, and the account's paid event right after the payment that paid it.
    expect(events.map((e) => `${e.type}:${e.data.transaction?.amount ?? ''}`)).toEqual([
      'payment.received:1000',
      'virtual_account.paid:',
      'payment.received:6000',
      'payment.received:4000',
    ]);
  });

  it('makes payment.received with no virtual account for a wallet top-up', async () => {
    const m = await aMerchant();
    await pay(gateway, m.merchant.account_number, 2_500);
    await waitForBalance(m, 2_500);
    const [event] = await eventsOf(m);
    expect(event).toMatchObject({ type: 'payment.received', data: { virtual_account: null } });
    expect(event?.data.transaction).toMatchObject({ amount: 2_500, virtual_account_reference: null });
  });
});

describe('events of transfers', () => {
  it('makes transfer.success and transfer.failed (with its reason) once each, filterable by type', async () => {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 50_000);
    const ok = ref();
    const no = ref();
    await call(gateway, 'POST', '/transfers', {
      body: { reference: ok, amount: 5_000, account_number: anAccount('058'), bank_code: '058' },
      headers: m.headers,
    });
    const refused = {
      reference: no,
      amount: 5_000,
      account_number: anAccount('058', '77777'),
      bank_code: '058',
    };
    await call(gateway, 'POST', '/transfers', { body: refused, headers: m.headers });
    await call(gateway, 'POST', '/transfers', { body: refused, headers: m.headers });

    const success = await eventsOf(m, '?type=transfer.success');
    expect(success.map((e) => e.data.transaction.reference)).toEqual([ok]);
    expect(success[0]?.data.transaction).toMatchObject({ status: 'success', fee: 1_000 });
    const failed = await eventsOf(m, '?type=transfer.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.data.transaction).toMatchObject({
      reference: no,
      status: 'failed',
      reason: 'Beneficiary bank rejected the transfer',
    });
  });
});

describe('GET /events/{id} and isolation', () => {
  it("shows one event with its deliveries, and another merchant's event id as 404", async () => {
    const m = await aMerchant();
    const other = await aMerchant();
    await pay(gateway, m.merchant.account_number, 700);
    await waitForBalance(m, 700);
    const [event] = await eventsOf(m);
    const one = await call(gateway, 'GET', `/events/${event?.id}`, { headers: m.headers });
    expect(one.status).toBe(200);
    expect(data(one)).toMatchObject({ ...event, deliveries: [] });
    const foreign = await call(gateway, 'GET', `/events/${event?.id}`, { headers: other.headers });
    expect([foreign.status, foreign.body?.code]).toEqual([404, 'not_found']);
    expect(await eventsOf(other)).toEqual([]);
  });

  it('pages events newest first with a cursor, and refuses an unknown type', async () => {
    const m = await aMerchant();
    for (let i = 1; i <= 3; i++) await pay(gateway, m.merchant.account_number, i * 100);
    await waitForBalance(m, 600);
    const first = await call(gateway, 'GET', '/events?limit=2', { headers: m.headers });
    const cursor = (first.body?.meta as { next_cursor: string } | undefined)?.next_cursor;
    expect(cursor).toEqual(expect.any(String));
    const second = await call(gateway, 'GET', `/events?limit=2&cursor=${cursor}`, { headers: m.headers });
    const ids = [...data<Event[]>(first), ...data<Event[]>(second)].map((e) => e.id);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    const bad = await call(gateway, 'GET', '/events?type=payment.sent', { headers: m.headers });
    expect([bad.status, bad.body?.code]).toEqual([400, 'validation_error']);
  });
});

describe('GET /virtual-accounts', () => {
  it('lists virtual accounts newest first, as GET /payments shows them without payments, filtered by status', async () => {
    const m = await aMerchant();
    const a = await aVirtualAccount(m, 5_000);
    const b = await aVirtualAccount(m, 8_000);
    await pay(gateway, a.accountNumber, 5_000);
    await waitForBalance(m, 5_000);
    const all = data<{ reference: string; status: string }[]>(
      await call(gateway, 'GET', '/virtual-accounts', { headers: m.headers }),
    );
    expect(all.map((va) => [va.reference, va.status])).toEqual([
      [b.reference, 'pending'],
      [a.reference, 'paid'],
    ]);
    const payment = data<Record<string, unknown>>(
      await call(gateway, 'GET', `/payments/${a.reference}`, { headers: m.headers }),
    );
    const { payments: _payments, ...withoutPayments } = payment;
    expect(all[1]).toEqual(withoutPayments);
    const filtered = await call(gateway, 'GET', '/virtual-accounts?status=paid', { headers: m.headers });
    expect(filtered.status, JSON.stringify(filtered.body)).toBe(200);
    const paid = data<{ reference: string }[]>(filtered);
    expect(paid.map((va) => va.reference)).toEqual([a.reference]);
  });

  it('filters by every status, expired included', async () => {
    const m = await aMerchant();
    const partial = await aVirtualAccount(m, 5_000);
    const over = await aVirtualAccount(m, 5_000);
    const expired = await aVirtualAccount(m, 5_000);
    const pending = await aVirtualAccount(m, 5_000);
    await pay(gateway, partial.accountNumber, 1_000);
    await pay(gateway, over.accountNumber, 9_000);
    await waitForBalance(m, 10_000);
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName('virtualAccounts'),
        Key: { merchant_id: m.merchant.merchant_id, reference: expired.reference },
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': '2020-01-01T00:00:00.000Z' },
      }),
    );
    const expected = {
      pending: pending.reference,
      partially_paid: partial.reference,
      overpaid: over.reference,
      expired: expired.reference,
    };
    for (const [status, reference] of Object.entries(expected)) {
      const listed = data<{ reference: string; status: string }[]>(
        await call(gateway, 'GET', `/virtual-accounts?status=${status}`, { headers: m.headers }),
      );
      expect(listed.map((va) => [va.reference, va.status])).toEqual([[reference, status]]);
    }
    const none = data<unknown[]>(
      await call(gateway, 'GET', '/virtual-accounts?status=paid', { headers: m.headers }),
    );
    expect(none).toEqual([]);
  });
});
