import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { served as getEventServed } from '#functions/get-event.ts';
import { served as listEventsServed } from '#functions/list-events.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { ValidationError } from '#shared/errors.ts';
import { getEvent, listEvents, newEvent } from '#shared/events/events.ts';
import { ownList } from '#shared/pagination.ts';
import { aMerchant } from '#test/support/merchants.ts';

const DAY = 86_400_000;

/** An event of `merchantId` stored as made at `at` (whatever the clock says now). */
async function anEventAt(merchantId: string, at: number) {
  const event = newEvent(
    merchantId,
    'transfer.success',
    { reference: `r-${at}` },
    new Date(at).toISOString(),
  );
  await dynamo.send(new PutCommand({ TableName: tableName('events'), Item: event }));
  return event;
}

describe('events are kept 30 days (API.md §8), whether or not TTL has deleted them yet', () => {
  it('lists and shows an event until 30 days after it was made, and never after, whatever is still stored', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const now = Date.now();
    const recent = await anEventAt(m, now - DAY);
    const lastKept = await anEventAt(m, now - 30 * DAY + 1);
    const expired = await anEventAt(m, now - 30 * DAY);
    const older = await anEventAt(m, now - 45 * DAY);

    const { items, nextCursor } = await listEvents(m, { limit: 10 }, now);
    expect(items.map((event) => event.id)).toEqual([recent.id, lastKept.id]);
    expect(nextCursor).toBeNull();
    expect((await getEvent(m, lastKept.id, now))?.id).toBe(lastKept.id);
    expect(await getEvent(m, expired.id, now)).toBeUndefined();
    expect(await getEvent(m, older.id, now)).toBeUndefined();

    // Paged one at a time, the cursor never reaches past the 30 days either.
    const first = await listEvents(m, { limit: 1 }, now);
    expect(first.items.map((event) => event.id)).toEqual([recent.id]);
    const second = await listEvents(m, { limit: 1, cursor: first.nextCursor ?? undefined }, now);
    expect(second.items.map((event) => event.id)).toEqual([lastKept.id]);
    expect(second.nextCursor).toBeNull();

    // A day later, the one made 30 days less a millisecond ago is gone as well.
    const later = await listEvents(m, { limit: 10 }, now + DAY);
    expect(later.items.map((event) => event.id)).toEqual([recent.id]);

    // A cursor whose event has aged out since (the next page asked a day later), or one made up
    // below every kept id: an empty last page, never DynamoDB's refusal of the start key (a 500).
    const aged = await listEvents(m, { limit: 1, cursor: first.nextCursor ?? undefined }, now + 31 * DAY);
    expect(aged).toEqual({ items: [], nextCursor: null });
    // Half a surrogate pair sorts above `evt_` in JavaScript, below it in DynamoDB: refused (400).
    // (Cursors of this merchant's own list, as a page would give them: another's is refused first.)
    const list = ownList('events', m);
    for (const json of [
      `{"list":"${list}","event_id":"\\ud800"}`,
      `{"list":"${list}","event_id":"evt\\ud800"}`,
    ]) {
      const cursor = Buffer.from(json).toString('base64url');
      await expect(listEvents(m, { limit: 5, cursor }, now), json).rejects.toBeInstanceOf(ValidationError);
    }
    // Well-formed, the same cursors' position is read: that is what refused them above.
    const wellFormed = Buffer.from(`{"list":"${list}","event_id":"evt_"}`).toString('base64url');
    expect(await listEvents(m, { limit: 5, cursor: wellFormed }, now)).toMatchObject({ nextCursor: null });
    for (const eventId of ['evt_000000000000', 'a', expired.id]) {
      const cursor = Buffer.from(JSON.stringify({ list, event_id: eventId })).toString('base64url');
      expect(await listEvents(m, { limit: 5, cursor }, now), eventId).toEqual({
        items: [],
        nextCursor: null,
      });
    }
  });

  it('answers GET /events without, and GET /events/{id} 404 for, an event older than 30 days', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    const kept = await anEventAt(m, Date.now() - 29 * DAY);
    const expired = await anEventAt(m, Date.now() - 31 * DAY);
    const caller = { merchantId: m };
    const listed = await listEventsServed.handle({ query: { limit: 10 }, caller } as never);
    expect((listed.data as { id: string }[]).map((event) => event.id)).toEqual([kept.id]);
    const shown = await getEventServed.handle({ params: { id: kept.id }, caller } as never);
    expect((shown.data as { id: string }).id).toBe(kept.id);
    await expect(
      getEventServed.handle({ params: { id: expired.id }, caller } as never),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
