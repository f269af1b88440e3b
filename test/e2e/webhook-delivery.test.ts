import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { deliveriesOf } from '#shared/merchant-webhooks/deliveries.ts';
import { failSqsSends } from '#test/support/faults.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { pay } from '#test/support/payments.ts';
import { startReceiver } from '#test/support/receiver.ts';

/**
 * Deliveries of events to merchants' endpoints, end to end: payment webhook → credit → event →
 * stream fan-out → deliveries queue → signed POST to the endpoint. The test run's schedule is
 * MERCHANT_WEBHOOK_RETRY_SCHEDULE=1,1,2 (four attempts), its timeout 5 s (a loaded machine must not time out a healthy endpoint).
 */
let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
type Delivery = {
  endpoint_id: string;
  status: string;
  attempts: { status_code: number | null; error: string | null }[];
};
const register = async (m: Merchant, url: string, events?: string[]) =>
  data<{ id: string; secret: string }>(
    await call(gateway, 'POST', '/webhook-endpoints', {
      body: { url, ...(events ? { events } : {}) },
      headers: m.headers,
    }),
  );
const eventWithDeliveries = async (m: Merchant, id: string) =>
  data<{ id: string; deliveries: Delivery[] }>(
    await call(gateway, 'GET', `/events/${id}`, { headers: m.headers }),
  );
/** A delivery's status read from the store: polling the API would spend the key's rate limit. */
const deliveryStatus = async (m: Merchant, eventId: string) =>
  (await deliveriesOf(m.merchant.merchant_id, eventId))[0]?.status;
const firstEvent = async (m: Merchant, type: string) => {
  await expect
    .poll(
      async () =>
        data<unknown[]>(await call(gateway, 'GET', `/events?type=${type}`, { headers: m.headers })).length,
      {
        timeout: 15_000,
      },
    )
    .toBeGreaterThan(0);
  return data<{ id: string }[]>(
    await call(gateway, 'GET', `/events?type=${type}`, { headers: m.headers }),
  )[0] as {
    id: string;
  };
};

describe('merchant webhook deliveries (API.md §8)', () => {
  it('delivers payment.received once, signed so the reference standardwebhooks library verifies it', async () => {
    const receiver = await startReceiver();
    try {
      const m = await aMerchant();
      const { secret } = await register(m, receiver.url, ['payment.received']);
      await pay(gateway, m.merchant.account_number, 12_300);
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(1);
      const [delivery] = receiver.received;
      const verified = new Webhook(secret).verify(delivery?.body ?? '', {
        'webhook-id': String(delivery?.headers['webhook-id']),
        'webhook-timestamp': String(delivery?.headers['webhook-timestamp']),
        'webhook-signature': String(delivery?.headers['webhook-signature']),
      }) as { id: string; type: string; data: { transaction: { amount: number } } };
      expect(verified).toMatchObject({ type: 'payment.received', data: { transaction: { amount: 12_300 } } });
      expect(delivery?.headers['webhook-id']).toBe(verified.id);
      expect(delivery?.headers['content-type']).toBe('application/json');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(receiver.received).toHaveLength(1);
      const shown = await eventWithDeliveries(m, verified.id);
      expect(shown.deliveries).toEqual([
        {
          endpoint_id: expect.stringMatching(/^we_/),
          status: 'delivered',
          attempts: [expect.objectContaining({ status_code: 200, error: null })],
        },
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('signs with every secret rotated out in the last 24 hours (each rotation keeps its promise), at most 5', async () => {
    const receiver = await startReceiver();
    try {
      const m = await aMerchant();
      const { id, secret: first } = await register(m, receiver.url, ['payment.received']);
      const rotate = async () => {
        const rotated = await call(gateway, 'POST', `/webhook-endpoints/${id}/rotate-secret`, {
          headers: m.headers,
        });
        expect(rotated.status).toBe(200);
        return data<{ secret: string }>(rotated).secret;
      };
      const delivered = async (amount: number) => {
        const before = receiver.received.length;
        await pay(gateway, m.merchant.account_number, amount);
        await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(before + 1);
        const delivery = receiver.received.at(-1);
        const headers = {
          'webhook-id': String(delivery?.headers['webhook-id']),
          'webhook-timestamp': String(delivery?.headers['webhook-timestamp']),
          'webhook-signature': String(delivery?.headers['webhook-signature']),
        };
        const verifies = (secret: string) => {
          try {
            new Webhook(secret).verify(delivery?.body ?? '', headers);
            return true;
          } catch {
            return false;
          }
        };
        return { signatures: headers['webhook-signature'].split(' ').length, verifies };
      };
      const secrets = [first];
      for (let i = 0; i < 3; i++) secrets.push(await rotate());
      // Each of the four secrets alone verifies it: a receiver still on the first one misses nothing.
      const four = await delivered(4_500);
      expect(four.signatures).toBe(4);
      for (const secret of secrets) expect(four.verifies(secret)).toBe(true);
      // Two more rotations: never refused (a leaked secret can always be replaced); five sign at
      // most, so the oldest rotated-out secret stops first.
      for (let i = 0; i < 2; i++) secrets.push(await rotate());
      const five = await delivered(4_600);
      expect(five.signatures).toBe(5);
      expect(secrets.map((secret) => five.verifies(secret))).toEqual([false, true, true, true, true, true]);
    } finally {
      await receiver.close();
    }
  });

  it('retries a failing endpoint on the schedule until it answers 2xx, with every attempt visible', async () => {
    const receiver = await startReceiver((n) => (n <= 2 ? 503 : 200));
    try {
      const m = await aMerchant();
      await register(m, receiver.url);
      await pay(gateway, m.merchant.account_number, 5_000);
      await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(3);
      const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      const event = await firstEvent(m, 'payment.received');
      await expect
        .poll(() => deliveryStatus(m, event.id), { timeout: 10_000, interval: 250 })
        .toBe('delivered');
      const [delivery] = (await eventWithDeliveries(m, event.id)).deliveries;
      expect(delivery?.attempts.map((a) => a.status_code)).toEqual([503, 503, 200]);
    } finally {
      await receiver.close();
    }
  });

  it('gives up after the last retry (failed), and redelivers on request with the same webhook-id', async () => {
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? 200 : 500));
    try {
      const m = await aMerchant();
      const endpoint = await register(m, receiver.url);
      await pay(gateway, m.merchant.account_number, 800);
      const event = await firstEvent(m, 'payment.received');
      await expect.poll(() => deliveryStatus(m, event.id), { timeout: 30_000, interval: 250 }).toBe('failed');
      expect((await eventWithDeliveries(m, event.id)).deliveries[0]?.attempts).toHaveLength(4);
      healthy = true;
      const before = receiver.received.length;
      const queued = await call(gateway, 'POST', `/events/${event.id}/redeliver`, {
        body: { endpoint_id: endpoint.id },
        headers: m.headers,
      });
      expect(queued.status).toBe(202);
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(before + 1);
      expect(receiver.received.at(-1)?.headers['webhook-id']).toBe(event.id);
      const deliveries = (await eventWithDeliveries(m, event.id)).deliveries;
      expect(deliveries.map((d) => d.status).sort()).toEqual(['delivered', 'failed']);
      const other = await aMerchant();
      const foreign = await call(gateway, 'POST', `/events/${event.id}/redeliver`, {
        headers: other.headers,
      });
      expect(foreign.status).toBe(404);
      const unknownEndpoint = await call(gateway, 'POST', `/events/${event.id}/redeliver`, {
        body: { endpoint_id: 'we_nope' },
        headers: m.headers,
      });
      expect(unknownEndpoint.status).toBe(404);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it('leaves no delivery behind a redelivery that could not be queued; one queued whose answer was lost is delivered and recorded once', async () => {
    const receiver = await startReceiver();
    try {
      const m = await aMerchant();
      const endpoint = await register(m, receiver.url);
      await pay(gateway, m.merchant.account_number, 900);
      const event = await firstEvent(m, 'payment.received');
      await expect
        .poll(() => deliveryStatus(m, event.id), { timeout: 15_000, interval: 250 })
        .toBe('delivered');
      const redeliver = () =>
        call(gateway, 'POST', `/events/${event.id}/redeliver`, {
          body: { endpoint_id: endpoint.id },
          headers: m.headers,
        });
      const statuses = async () =>
        (await deliveriesOf(m.merchant.merchant_id, event.id)).map((d) => d.status);

      // SQS refuses the message: a 500, and no delivery (it stayed pending for good, nothing to end it).
      const refused = failSqsSends('before');
      try {
        expect((await redeliver()).status).toBe(500);
      } finally {
        refused.remove();
      }
      expect(await statuses()).toEqual(['delivered']);

      // SQS takes it but its answer is lost: a 500 all the same, and the attempt records and makes it.
      const lost = failSqsSends('after');
      try {
        expect((await redeliver()).status).toBe(500);
      } finally {
        lost.remove();
      }
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(2);
      await expect.poll(statuses, { timeout: 15_000, interval: 250 }).toEqual(['delivered', 'delivered']);
      expect(receiver.received.map((delivery) => delivery.headers['webhook-id'])).toEqual([
        event.id,
        event.id,
      ]);

      // To two endpoints, the second's message refused: a 500 once the first's is queued and recorded.
      await register(m, receiver.url);
      const second = failSqsSends('before', { only: 2 });
      try {
        const everyEndpoint = await call(gateway, 'POST', `/events/${event.id}/redeliver`, {
          headers: m.headers,
        });
        expect(everyEndpoint.status).toBe(500);
      } finally {
        second.remove();
      }
      expect(await statuses()).toHaveLength(3);
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(3);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it("keeps delivering to a healthy merchant while another merchant's endpoint hangs and is retried", async () => {
    const dead = await startReceiver(() => 'hang');
    const healthy = await startReceiver();
    try {
      const slow = await aMerchant();
      const fine = await aMerchant();
      await register(slow, dead.url);
      await register(fine, healthy.url);
      for (let i = 0; i < 6; i++) await pay(gateway, slow.merchant.account_number, 100 + i);
      await expect.poll(() => dead.received.length, { timeout: 15_000 }).toBeGreaterThan(0);
      for (let i = 0; i < 4; i++) await pay(gateway, fine.merchant.account_number, 200 + i);
      await expect.poll(() => healthy.received.length, { timeout: 20_000, interval: 250 }).toBe(4);
      const healthyDone = Date.now();
      // The dead endpoint's deliveries were still being tried after the healthy ones were all done:
      // their attempts (each up to the timeout, then a retry) outlast them.
      const slowEvents = data<{ id: string }[]>(
        await call(gateway, 'GET', '/events', { headers: slow.headers }),
      );
      const lastAttempts = await Promise.all(
        slowEvents.map(async (e) => {
          await expect
            .poll(async () => (await deliveriesOf(slow.merchant.merchant_id, e.id))[0]?.status, {
              timeout: 60_000,
              interval: 500,
            })
            .toBe('failed');
          const [delivery] = await deliveriesOf(slow.merchant.merchant_id, e.id);
          return Date.parse(delivery?.attempts.at(-1)?.at ?? '');
        }),
      );
      expect(Math.max(...lastAttempts)).toBeGreaterThan(healthyDone);
    } finally {
      await dead.close();
      await healthy.close();
    }
  }, 90_000);

  it('redelivers by default to the enabled endpoints subscribed to the type only (API.md §8)', async () => {
    const subscribed = await startReceiver();
    const other = await startReceiver();
    try {
      const m = await aMerchant();
      const wanted = await register(m, subscribed.url, ['payment.received']);
      await register(m, other.url, ['transfer.success']);
      expect((await pay(gateway, m.merchant.account_number, 700)).status).toBe(200);
      const event = await firstEvent(m, 'payment.received');
      await expect.poll(() => subscribed.received.length, { timeout: 15_000 }).toBe(1);
      const queued = await call(gateway, 'POST', `/events/${event.id}/redeliver`, { headers: m.headers });
      expect(queued.status).toBe(202);
      const queuedTo = data<{ deliveries: { endpoint_id: string }[] }>(queued).deliveries;
      expect(queuedTo.map((d) => d.endpoint_id)).toEqual([wanted.id]);
      await expect.poll(() => subscribed.received.length, { timeout: 15_000 }).toBe(2);
      expect(other.received).toEqual([]);
    } finally {
      await subscribed.close();
      await other.close();
    }
  });

  it("never delivers to a deleted endpoint, while the merchant's live one gets the event", async () => {
    const deleted = await startReceiver();
    const live = await startReceiver();
    try {
      const m = await aMerchant();
      const gone = await register(m, deleted.url);
      await register(m, live.url);
      const removed = await call(gateway, 'DELETE', `/webhook-endpoints/${gone.id}`, { headers: m.headers });
      expect(removed.status).toBe(200);
      expect((await pay(gateway, m.merchant.account_number, 900)).status).toBe(200);
      const event = await firstEvent(m, 'payment.received');
      // The live endpoint's delivery is the proof the event went out: the deleted one had its chance.
      await expect.poll(() => live.received.length, { timeout: 15_000 }).toBe(1);
      expect(live.received[0]?.headers['webhook-id']).toBe(event.id);
      await expect.poll(() => deliveryStatus(m, event.id), { timeout: 15_000 }).toBe('delivered');
      expect((await deliveriesOf(m.merchant.merchant_id, event.id)).map((d) => d.endpoint_id)).not.toContain(
        gone.id,
      );
      // Redelivered to it by id (API.md §8): not an enabled endpoint of the merchant's, 404, nothing queued.
      const again = await call(gateway, 'POST', `/events/${event.id}/redeliver`, {
        body: { endpoint_id: gone.id },
        headers: m.headers,
      });
      expect(again.status).toBe(404);
      expect((await deliveriesOf(m.merchant.merchant_id, event.id)).map((d) => d.endpoint_id)).not.toContain(
        gone.id,
      );
      expect(deleted.received).toEqual([]);
    } finally {
      await deleted.close();
      await live.close();
    }
  });
});
