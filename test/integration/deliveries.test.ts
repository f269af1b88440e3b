import { describe, expect, it } from 'vitest';
import {
  createDelivery,
  deliveriesOf,
  newDeliveryId,
  recordAttempt,
} from '#shared/merchant-webhooks/deliveries.ts';

describe('delivery records', () => {
  it('are created once: a repeated creation returns the stored delivery, attempts and all, in one call', async () => {
    const message = {
      merchant_id: 'mer_deliveries',
      event_id: `evt_${Date.now()}`,
      delivery_id: newDeliveryId(),
    };
    const first = await createDelivery(message, 'we_1');
    const attempt = { at: new Date().toISOString(), status_code: 503, error: null, duration_ms: 12 };
    expect(await recordAttempt(first, attempt, { status: 'pending', next_attempt_at: attempt.at })).toBe(
      true,
    );
    const again = await createDelivery(message, 'we_1');
    expect(again).toMatchObject({ delivery_id: message.delivery_id, status: 'pending', attempts: [attempt] });
    // The same attempt is never recorded twice (a duplicate message read the first state).
    expect(await recordAttempt(first, attempt, { status: 'delivered' })).toBe(false);
  });

  it("are listed oldest first, whatever their ids' order (GET /events/{id})", async () => {
    const message = { merchant_id: 'mer_deliveries', event_id: `evt_order_${Date.now()}` };
    // Ids against time: the table would list them z, m, a reversed.
    await createDelivery({ ...message, delivery_id: 'dlv_a' }, 'we_3', new Date('2026-11-23T10:00:02Z'));
    await createDelivery({ ...message, delivery_id: 'dlv_z' }, 'we_1', new Date('2026-11-23T10:00:00Z'));
    await createDelivery({ ...message, delivery_id: 'dlv_m' }, 'we_2', new Date('2026-11-23T10:00:01Z'));
    const listed = await deliveriesOf(message.merchant_id, message.event_id);
    expect(listed.map((delivery) => delivery.delivery_id)).toEqual(['dlv_z', 'dlv_m', 'dlv_a']);
  });
});
