import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryPage } from '#shared/aws/query.ts';
import type { EventType } from '#shared/events/types.ts';
import { decodeCursor, encodeCursor, ownList } from '#shared/pagination.ts';

/**
 * Events for merchants (API.md §8): every state change a merchant cares about is one stored event,
 * written by the change's own DynamoDB transaction (an outbox item), so a change never happens
 * without its event and an event never exists without its change, whatever crashes in between.
 * The events table's stream then fans each new event out to the merchant's endpoints.
 */

/** An event as the API shows it and as endpoints receive it. */
export interface MerchantEvent {
  id: string;
  type: EventType;
  created_at: string;
  data: Record<string, unknown>;
}

/** An event as stored. */
export interface EventRecord extends MerchantEvent {
  merchant_id: string;
  event_id: string;
  ttl: number;
}

/** How long events are kept (API.md §8). */
export const EVENT_RETENTION_DAYS = 30;
const RETENTION_MS = EVENT_RETENTION_DAYS * 86_400_000;

/**
 * Whether an event made at `at` (ms) is still kept at `now`: for 30 days exactly, whenever DynamoDB's
 * TTL deletes it (lazily, up to days later on AWS; never in DynamoDB Local).
 */
function keptAt(at: number, now: number): boolean {
  return at > now - RETENTION_MS;
}

/** `evt_` and an event time as its id begins (12 hex digits of ms): ids sort by it. */
function idPrefixAt(at: number): string {
  return `evt_${at.toString(16).padStart(12, '0')}`;
}

/**
 * `evt_` + the time in ms (12 hex digits) + the event's rank among the events of one change made at
 * that time (2 hex digits) + randomness, so ids sort by time, and one change's events in the order
 * they happened (a payment's `payment.received` before the `virtual_account.paid` it caused).
 */
export function newEventId(at: string, rank = 0): string {
  return `${idPrefixAt(Date.parse(at))}${rank.toString(16).padStart(2, '0')}${randomBytes(7).toString('hex')}`;
}

/** The event a state change makes, to be written in that change's transaction. */
export function newEvent(
  merchantId: string,
  type: EventType,
  data: Record<string, unknown>,
  at: string,
  /** Its place among the events of one change made at `at` (0, 1…). */
  rank = 0,
): EventRecord {
  const id = newEventId(at, rank);
  return {
    merchant_id: merchantId,
    event_id: id,
    id,
    type,
    created_at: at,
    data,
    ttl: Math.ceil(Date.parse(at) / 1000) + EVENT_RETENTION_DAYS * 86_400,
  };
}

/** A companion write: the event of the change it is written with (a new id never exists yet). */
export function eventItem(event: EventRecord) {
  return {
    Put: {
      TableName: tableName('events'),
      Item: event,
      ConditionExpression: 'attribute_not_exists(event_id)',
    },
  };
}

/** The event as the API shows it. */
export function toApiEvent(event: EventRecord): MerchantEvent {
  return { id: event.id, type: event.type, created_at: event.created_at, data: event.data };
}

/** Where an event is stored: its table and key. */
export function eventItemKey(merchantId: string, eventId: string) {
  return { TableName: tableName('events'), Key: { merchant_id: merchantId, event_id: eventId } };
}

/**
 * One event of one merchant, while it is kept: another merchant's id, or an event older than 30
 * days, is simply not there.
 */
export async function getEvent(
  merchantId: string,
  eventId: string,
  now = Date.now(),
): Promise<EventRecord | undefined> {
  const { Item } = await dynamo.send(new GetCommand(eventItemKey(merchantId, eventId)));
  const event = Item as EventRecord | undefined;
  return event && keptAt(Date.parse(event.created_at), now) ? event : undefined;
}

const CURSOR_KEYS = ['event_id'] as const;

/**
 * A merchant's events of the last 30 days, newest first, optionally of one type, one page at a time:
 * the ids from the first millisecond still kept (ids begin with their time), whatever TTL has not
 * deleted yet.
 */
export async function listEvents(
  merchantId: string,
  filter: { type?: EventType; limit: number; cursor?: string },
  now = Date.now(),
): Promise<{ items: EventRecord[]; nextCursor: string | null }> {
  const list = ownList('events', merchantId);
  const position = decodeCursor(filter.cursor, list, CURSOR_KEYS);
  const kept = idPrefixAt(now - RETENTION_MS + 1);
  // A cursor at or past the oldest event kept (the last page's last event has aged out since, or a
  // made-up one): nothing older is kept. DynamoDB refuses a start key outside the key condition.
  if (position && String(position.event_id) < kept) return { items: [], nextCursor: null };
  const { items, after } = await queryPage<EventRecord>(
    {
      TableName: tableName('events'),
      KeyConditionExpression: 'merchant_id = :m AND event_id >= :kept',
      FilterExpression: filter.type ? '#type = :type' : undefined,
      ExpressionAttributeNames: filter.type ? { '#type': 'type' } : undefined,
      ExpressionAttributeValues: {
        ':m': merchantId,
        ':kept': kept,
        ...(filter.type ? { ':type': filter.type } : {}),
      },
      ScanIndexForward: false,
      ExclusiveStartKey: position && { merchant_id: merchantId, ...position },
    },
    filter.limit,
  );
  return { items, nextCursor: after ? encodeCursor(list, { event_id: after.event_id }) : null };
}
