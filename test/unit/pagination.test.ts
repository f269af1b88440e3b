import { describe, expect, it } from 'vitest';
import { ValidationError } from '#shared/errors.ts';
import { decodeCursor, ownList, pageOf } from '#shared/pagination.ts';

// Paging a short list read whole (webhook endpoints, API keys), as every list of API.md §1.
const item = (id: string, created_at: string) => ({ id, created_at });
const ITEMS = [
  item('we_b', '2026-11-23T10:00:00.000Z'),
  item('we_d', '2026-11-23T10:00:02.000Z'),
  item('we_a', '2026-11-23T10:00:00.000Z'),
  item('we_c', '2026-11-23T10:00:01.000Z'),
  item('we_e', '2026-11-23T10:00:02.000Z'),
];
const position = (x: { id: string; created_at: string }) => x;
const ids = (page: { items: { id: string }[] }) => page.items.map((x) => x.id);
const WE = ownList('webhook_endpoints', 'mer_a');

describe('pageOf', () => {
  it('lists newest first, ties by id, and walks every item once page by page', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = pageOf(WE, ITEMS, position, 2, cursor);
      seen.push(...ids(page));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(['we_e', 'we_d', 'we_c', 'we_b', 'we_a']);
  });

  it('gives no cursor on the last page, nor when everything fits', () => {
    expect(pageOf(WE, ITEMS, position, 5, undefined).next_cursor).toBeNull();
    expect(pageOf(WE, [], position, 20, undefined)).toEqual({
      items: [],
      next_cursor: null,
    });
  });

  it('skips nothing when the item a cursor names was removed before the next page', () => {
    const first = pageOf(WE, ITEMS, position, 2, undefined);
    const without = ITEMS.filter((x) => x.id !== 'we_d');
    expect(ids(pageOf(WE, without, position, 2, first.next_cursor ?? undefined))).toEqual(['we_c', 'we_b']);
  });

  it('refuses a cursor that is not one of its own', () => {
    expect(() => pageOf(WE, ITEMS, position, 2, 'not-a-cursor')).toThrow(ValidationError);
    const foreign = Buffer.from(JSON.stringify({ list: WE, sk: 'x' })).toString('base64url');
    expect(() => pageOf(WE, ITEMS, position, 2, foreign)).toThrow(ValidationError);
    // The right keys, a time no item has: made by hand, not given by a page.
    const forged = (created_at: string) =>
      Buffer.from(JSON.stringify({ list: WE, created_at, id: 'we_b' })).toString('base64url');
    for (const time of ['x', '2026-11-24', '2026-11-24T10:00:00Z', ' 2026-11-24T10:00:00.000Z']) {
      expect(() => pageOf(WE, ITEMS, position, 2, forged(time))).toThrow(ValidationError);
    }
    expect(ids(pageOf(WE, ITEMS, position, 2, forged('9999-01-01T00:00:00.000Z')))).toEqual(['we_e', 'we_d']);
    // Its own keys and no other: the same position with one more is not a cursor it gave.
    const padded = Buffer.from(
      JSON.stringify({ list: WE, created_at: '9999-01-01T00:00:00.000Z', id: 'we_b', extra: 'x' }),
    ).toString('base64url');
    expect(() => pageOf(WE, ITEMS, position, 2, padded)).toThrow(ValidationError);
  });

  it("refuses another merchant's cursor of the same list, and a time that never was", () => {
    const mine = ownList('webhook_endpoints', 'mer_a');
    const second = pageOf(mine, ITEMS, position, 2, undefined).next_cursor ?? undefined;
    expect(ids(pageOf(mine, ITEMS, position, 2, second))).toEqual(['we_c', 'we_b']);
    expect(() => pageOf(ownList('webhook_endpoints', 'mer_b'), ITEMS, position, 2, second)).toThrow(
      ValidationError,
    );
    // The merchant's id is not in the cursor, only a digest of it.
    expect(Buffer.from(second ?? '', 'base64url').toString()).not.toContain('mer_a');
    const forged = Buffer.from(
      JSON.stringify({ list: mine, created_at: '2026-02-30T00:00:00.000Z', id: 'we_b' }),
    ).toString('base64url');
    expect(() => pageOf(mine, ITEMS, position, 2, forged)).toThrow(ValidationError);
  });

  it("refuses another list's cursor of the same shape (API keys'), and one that names no list", () => {
    const second = pageOf(WE, ITEMS, position, 2, undefined).next_cursor ?? undefined;
    expect(ids(pageOf(WE, ITEMS, position, 2, second))).toEqual(['we_c', 'we_b']);
    expect(() => pageOf(ownList('api_keys', 'mer_a'), ITEMS, position, 2, second)).toThrow(ValidationError);
    const untagged = Buffer.from(
      JSON.stringify({ created_at: '2026-11-23T10:00:02.000Z', id: 'we_d' }),
    ).toString('base64url');
    expect(() => pageOf(WE, ITEMS, position, 2, untagged)).toThrow(ValidationError);
  });

  it('pages no list without its owner: a cursor naming the bare list (the shape before owners) is refused', () => {
    const bare = Buffer.from(
      JSON.stringify({ list: 'webhook_endpoints', created_at: '2026-11-23T10:00:02.000Z', id: 'we_d' }),
    ).toString('base64url');
    expect(() => pageOf(WE, ITEMS, position, 2, bare)).toThrow(ValidationError);
    // @ts-expect-error A bare list name is no list: only `ownList` makes one.
    pageOf('webhook_endpoints', ITEMS, position, 2, undefined);
  });
});

describe('decodeCursor', () => {
  const cursorOf = (json: string) => Buffer.from(json).toString('base64url');
  const EV = ownList('events', 'mer_a');

  it('refuses a value holding half a surrogate pair, which no key of ours holds (400, never a start key DynamoDB refuses)', () => {
    for (const json of [
      `{"list":"${EV}","event_id":"\\ud800"}`,
      `{"list":"${EV}","event_id":"evt\\ud800"}`,
      `{"list":"${EV}","event_id":"evt_\\udfff0"}`,
    ]) {
      expect(() => decodeCursor(cursorOf(json), EV, ['event_id']), json).toThrow(ValidationError);
    }
    // A whole pair is text like any other.
    expect(
      decodeCursor(cursorOf(`{"list":"${EV}","event_id":"evt_\\ud83d\\ude00"}`), EV, ['event_id']),
    ).toEqual({
      event_id: 'evt_\u{1F600}',
    });
  });
});
