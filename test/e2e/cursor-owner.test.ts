import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { createApiKey } from '#shared/api-keys/store.ts';
import type { PaymentReceived, QueuedEvent } from '#shared/partners/partner.ts';
import { receivePayments } from '#shared/payments/credit.ts';
import { aDashboardUser } from '#test/support/dashboard.ts';
import { queuedFromSandbox } from '#test/support/events.ts';
import { call, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount } from '#test/support/merchants.ts';
import { nipSessionId, paymentEvent } from '#test/support/payments.ts';

/**
 * A list's cursor belongs to its merchant, on every list of both APIs: given by another merchant it
 * is a 400, never a place in that merchant's own list (a leaked cursor would page it from there).
 */
let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

describe('a cursor given by another merchant', () => {
  it('is refused by each of the six lists, which page their own merchant with it', async () => {
    const a = await aMerchant();
    const b = await aMerchant();
    const m = a.merchant.merchant_id;
    const post = (path: string, body: unknown) => call(gateway, 'POST', path, { headers: a.headers, body });
    // Two of everything for A: two payments (two transactions, two events), two of each other item.
    const pay = () =>
      queuedFromSandbox(
        paymentEvent({
          account_number: a.merchant.account_number,
          amount: 1_000,
          session_id: nipSessionId(),
        }),
      ) as QueuedEvent & PaymentReceived;
    await receivePayments([pay(), pay()]);
    for (let i = 0; i < 2; i++) {
      expect(
        (await post('/beneficiaries', { account_number: anAccount('058'), bank_code: '058' })).status,
      ).toBe(201);
      expect((await post('/virtual-accounts', { amount: 10_000 })).status).toBe(201);
      expect((await post('/webhook-endpoints', { url: `http://127.0.0.1:9/hook-${i}` })).status).toBe(201);
    }
    await createApiKey(m);
    const userA = await aDashboardUser(m);
    const userB = await aDashboardUser(b.merchant.merchant_id);
    const lists = [
      ['/transactions', a.headers, b.headers],
      ['/beneficiaries', a.headers, b.headers],
      ['/events', a.headers, b.headers],
      ['/virtual-accounts', a.headers, b.headers],
      ['/webhook-endpoints', a.headers, b.headers],
      ['/api/v1/dashboard/keys', userA.headers, userB.headers],
    ] as const;
    for (const [list, own, other] of lists) {
      const first = await call(gateway, 'GET', `${list}?limit=1`, { headers: own });
      const cursor = (first.body?.meta as { next_cursor?: string } | undefined)?.next_cursor;
      expect(cursor, list).toEqual(expect.any(String));
      const query = `${list}?limit=1&cursor=${encodeURIComponent(cursor ?? '')}`;
      // Its own merchant pages on with it ...
      expect((await call(gateway, 'GET', query, { headers: own })).status, list).toBe(200);
      // ... another is refused.
      const refused = await call(gateway, 'GET', query, { headers: other });
      expect([refused.status, refused.body?.code, refused.body?.errors], list).toEqual([
        400,
        'validation_error',
        [{ field: 'query.cursor', message: 'Not a valid cursor' }],
      ]);
    }
  });
});
