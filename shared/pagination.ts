import * as v from 'valibot';
import { sha256Base64url } from '#shared/crypto/digest.ts';
import { ValidationError } from '#shared/errors.ts';
import { isWellFormed } from '#shared/text.ts';

/** A schema built only in bundles that use it (as `built` in `shared/contract/requests.ts`). */
/* @__NO_SIDE_EFFECTS__ */
function built<T>(build: () => T): T {
  return build();
}

/** A list's page size when `?limit=` is not given (API.md §1). */
export const DEFAULT_LIMIT = 20;

/** `?limit=`'s text: exactly 1 to 100 (API.md §1), as a number. */
const limitValue = () =>
  v.pipe(
    v.string(),
    // Exactly 1 to 100, the query's text (leading zeros allowed: 05 is 5). The OpenAPI document
    // types it `integer` 1..100 (`LIMIT_PARAMETER`), whose every value as text passes this.
    v.regex(/^(?:0{0,2}[1-9]|0?[1-9]\d|100)$/, 'Must be a whole number from 1 to 100'),
    v.transform(Number),
    v.minValue(1, 'Must be at least 1'),
    v.maxValue(100, 'Must be at most 100'),
  );

/** `?limit=` 1..100, default 20 (API.md §1). */
export const limitSchema = built(() => v.optional(limitValue(), String(DEFAULT_LIMIT)));

/**
 * `?limit=` of the bank list: 1..100 as every list's, but without a default, since the bank list
 * without `limit` (or `cursor`) is the whole list in one page, as v1 answered it (API.md §4).
 */
export const bankLimitSchema = built(() => v.optional(limitValue()));

export const cursorSchema = built(() =>
  v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,512}$/, 'Not a valid cursor'))),
);

/**
 * The lists that page with a cursor. A cursor names its list, so one list's cursor given to another
 * of the same shape (transactions and virtual accounts, webhook endpoints and API keys) is a 400,
 * not a place in the wrong list.
 */
export type CursorList =
  | 'transactions'
  | 'virtual_accounts'
  | 'beneficiaries'
  | 'events'
  | 'api_keys'
  | 'webhook_endpoints';

declare const owned: unique symbol;

/**
 * A list of one merchant's: its cursors are refused by any other merchant's. Only `ownList` makes
 * one, and `pageOf` takes nothing else, so no merchant's list can page without its owner.
 */
export type OwnList = string & { readonly [owned]: CursorList };

/** The one list that is every caller's alike (`GET /banks`): its cursors are anyone's. */
export type PublicList = string & { readonly [owned]: 'public' };

/** The bank list's cursors: public, as the list is (no credentials), and no other list's. */
export const BANK_LIST = 'banks' as PublicList;

/**
 * `list` as `merchantId`'s: a cursor names it with a digest of the merchant (not the id itself), so
 * one merchant's cursor given by another is a 400, never a place in the second merchant's list.
 */
export function ownList(list: CursorList, merchantId: string): OwnList {
  return `${list}@${sha256Base64url(merchantId).slice(0, 16)}` as OwnList;
}

/**
 * An opaque cursor: its list (and whose, for a merchant's), and the position inside the caller's own
 * partition (never the partition key, which is always the caller's merchant id), base64url JSON.
 */
export function encodeCursor(list: OwnList | PublicList, position: object | undefined): string | null {
  return position ? Buffer.from(JSON.stringify({ list, ...position })).toString('base64url') : null;
}

/** A `created_at` as the service writes it (`toISOString`): the only kind a cursor of ours holds. */
const WRITTEN_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Reads a cursor of `list` back into the fields `keys` names; anything else is a 400 (another list's
 * cursor too), as is a `created_at` that no item has the shape of (a cursor made by hand would
 * otherwise page from anywhere), or a value that is not well-formed text.
 */
export function decodeCursor(
  cursor: string | undefined,
  list: OwnList | PublicList,
  keys: readonly string[],
): Record<string, string> | undefined {
  if (cursor === undefined) return undefined;
  const invalid = () => new ValidationError([{ field: 'query.cursor', message: 'Not a valid cursor' }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { list?: unknown }).list !== list) {
    throw invalid();
  }
  const position: Record<string, string> = {};
  for (const key of keys) {
    const value = (parsed as Record<string, unknown>)[key];
    if (typeof value !== 'string' || value.length === 0 || value.length > 200) throw invalid();
    // Half a surrogate pair (a `\ud800` escape) is no text: JavaScript orders it above every ASCII
    // character, DynamoDB otherwise, so a start key could fall outside a key condition (a 500).
    if (!isWellFormed(value)) throw invalid();
    // Of that shape and a real time: `2026-02-30T00:00:00.000Z` is no item's, and would page from
    // nowhere (an empty last page, read as the list's end).
    if (key === 'created_at' && !(WRITTEN_TIME.test(value) && isRealTime(value))) throw invalid();
    position[key] = value;
  }
  if (Object.keys(parsed).length !== keys.length + 1) throw invalid();
  return position;
}

/** Whether a written time names a real instant: it reads back as itself. */
function isRealTime(value: string): boolean {
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString() === value;
}

/** Where an item of a list held whole in memory sits: newest first by `created_at`, then by `id`. */
export interface ListPosition {
  created_at: string;
  id: string;
}

/** Code-unit order (as DynamoDB orders string keys), not a locale's. */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const newestFirst = (a: ListPosition, b: ListPosition) =>
  compare(b.created_at, a.created_at) || compare(b.id, a.id);

/** How a list held whole in memory is ordered, and what of an item its cursors hold. */
interface Order<T, P extends object> {
  /** The position's fields, as a cursor holds them. */
  keys: readonly (keyof P & string)[];
  positionOf: (item: T) => P;
  /** The list's order on positions: below 0 when `a` comes first. */
  compare: (a: P, b: P) => number;
}

/**
 * One page of a list held whole in memory, `sorted` in `order`, as every list of API.md §1 pages:
 * up to `limit` items after the cursor's position. The cursor holds the last item's position, not
 * its index, so an item added or removed between pages skips or repeats none of the others.
 */
function pageIn<T, P extends object>(
  list: OwnList | PublicList,
  sorted: readonly T[],
  order: Order<T, P>,
  limit: number,
  cursor: string | undefined,
): { items: T[]; next_cursor: string | null } {
  const after = decodeCursor(cursor, list, order.keys) as P | undefined;
  const rest = after ? sorted.filter((item) => order.compare(after, order.positionOf(item)) < 0) : sorted;
  const page = rest.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page,
    next_cursor: rest.length > limit && last ? encodeCursor(list, order.positionOf(last)) : null,
  };
}

/**
 * One page of a short list of a merchant's read whole (its enabled webhook endpoints, at most 5),
 * newest first by `created_at`, then by `id`.
 */
export function pageOf<T>(
  list: OwnList,
  items: readonly T[],
  positionOf: (item: T) => ListPosition,
  limit: number,
  cursor: string | undefined,
): { items: T[]; next_cursor: string | null } {
  const sorted = [...items].sort((a, b) => newestFirst(positionOf(a), positionOf(b)));
  return pageIn(
    list,
    sorted,
    { keys: ['created_at', 'id'], positionOf, compare: newestFirst },
    limit,
    cursor,
  );
}

/**
 * One page of the public list (`BANK_LIST`, the same for every caller), whose items come already
 * sorted in its own `order` (`listBanks()` sorts once per container).
 */
export function pageOfPublic<T, P extends object>(
  list: PublicList,
  items: readonly T[],
  order: Order<T, P>,
  limit: number,
  cursor: string | undefined,
): { items: T[]; next_cursor: string | null } {
  return pageIn(list, items, order, limit, cursor);
}
