import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { generateKeyPair, hashSecret } from '#shared/api-keys/secrets.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll, queryPage } from '#shared/aws/query.ts';
import { backoff, retryingConflicts } from '#shared/aws/transactions.ts';
import { LimitReached, NotFound } from '#shared/errors.ts';
import { nowIso } from '#shared/ids.ts';
import { decodeCursor, encodeCursor, ownList } from '#shared/pagination.ts';
import { apiKeyPepper } from '#shared/secrets.ts';

export type ApiKeyStatus = 'active' | 'revoked';

/** An API key as stored. The secret itself is never stored, only `secret_hash`. */
export interface ApiKeyRecord {
  api_key: string;
  merchant_id: string;
  secret_hash: string;
  status: ApiKeyStatus;
  /** CIDR blocks (IPv4 or IPv6) the key may be used from; absent = anywhere. */
  allowed_ips?: string[];
  expires_at?: string;
  created_at: string;
  last_used_at?: string;
  revoked_at?: string;
}

/** How often `last_used_at` is written at most, per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

type NewKeyOptions = {
  allowedIps?: string[];
  expiresAt?: string;
  beforeStoring?: (apiKey: string) => Promise<void>;
};

/** A new key pair's record, registered by `beforeStoring` (not stored yet), and its plain secret. */
async function newKey(merchantId: string, options: NewKeyOptions) {
  const { apiKey, apiSecret } = generateKeyPair();
  await options.beforeStoring?.(apiKey);
  const record: ApiKeyRecord = {
    api_key: apiKey,
    merchant_id: merchantId,
    secret_hash: hashSecret(apiSecret, await apiKeyPepper()),
    status: 'active',
    allowed_ips: options.allowedIps?.length ? options.allowedIps : undefined,
    expires_at: options.expiresAt,
    created_at: nowIso(),
  };
  return { record, apiSecret };
}

/**
 * At most this many of a merchant's keys work at once: every key created or rolled and not yet
 * revoked or expired, an old key in its overlap after a roll included. API Gateway holds 10,000
 * keys per account and Region for every merchant and stage, and cannot be asked for more.
 */
export const MAX_USABLE_KEYS = 10;

/**
 * The item that holds which of a merchant's keys may still work (key id → its expiry, `''` for
 * none), rewritten by every create and roll on the version it read, so the limit holds under
 * concurrency. Its id is no key id (`pk_…`), which the authorizer and the key routes refuse
 * before any read, and without `merchant_id` it is in no listing.
 */
const inUseId = (merchantId: string) => `in-use:${merchantId}`;

interface InUse {
  version: number;
  keys: Record<string, string>;
}

/** A roll's side of storing its new key: the old key as read, and its chosen expiry. */
type Roll = { rolled: ApiKeyRecord; expiresAt: string };

/** The keys in use once there is room for one more, and those found expired on the way. */
type Room = { keys: Record<string, string>; expired: string[] };

/** Whether an expiry, as a key record (`undefined`: none) or `InUse` (`''`: none) holds it, is still ahead at `now`. */
const ahead = (expiry: string | undefined, now: Date) => !expiry || Date.parse(expiry) > now.getTime();

async function inUseOf(merchantId: string, now: Date): Promise<InUse> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('apiKeys'),
      Key: { api_key: inUseId(merchantId) },
      ConsistentRead: true,
    }),
  );
  if (Item) return { version: Number(Item.version), keys: (Item.keys as Record<string, string>) ?? {} };
  // The merchant's first key made since the limit: the keys stored before it.
  const usable = (await listApiKeys(merchantId)).filter((key) => usableAt(key, now));
  return { version: 0, keys: Object.fromEntries(usable.map((key) => [key.api_key, key.expires_at ?? ''])) };
}

/**
 * The keys in use that leave room for one more (with `rolled` given its new expiry), or
 * `LimitReached`. Keys that expired are dropped (`expired`: the caller takes them out of the usage
 * plan); at the limit, the records are read, and keys revoked since they were added are dropped too.
 * A roll that ends now an old key that had no expiry takes one working key out for the one it adds:
 * it passes whatever the count (so a merchant with more keys than the limit, made before it, can
 * still rotate them). A key a roll already gave an expiry gets no such pass: two rolls of one key
 * would otherwise each add a key for the one they take out.
 */
async function roomForOneMore(current: InUse, now: Date, roll?: Roll): Promise<Room> {
  const keys = { ...current.keys };
  const rolled = roll?.rolled.api_key;
  const before = rolled === undefined ? undefined : keys[rolled];
  if (roll && rolled !== undefined) {
    keys[rolled] = before && before < roll.expiresAt ? before : roll.expiresAt;
  }
  const expired = Object.keys(keys).filter((apiKey) => !ahead(keys[apiKey], now));
  for (const apiKey of expired) delete keys[apiKey];
  if (rolled !== undefined && before === '' && expired.includes(rolled)) return { keys, expired };
  if (Object.keys(keys).length >= MAX_USABLE_KEYS) {
    // Only at the limit: one read per key in use.
    const ids = Object.keys(keys);
    const records = await Promise.all(ids.map((apiKey) => getApiKey(apiKey, { consistent: true })));
    ids.forEach((apiKey, i) => {
      const record = records[i];
      if (!record || !usableAt(record, now)) delete keys[apiKey];
    });
  }
  if (Object.keys(keys).length >= MAX_USABLE_KEYS) {
    throw new LimitReached(
      `At most ${MAX_USABLE_KEYS} API keys can work at once, a rolled key in its overlap included: revoke one first (or roll with the old key expiring now)`,
    );
  }
  return { keys, expired };
}

/** The transaction item that stores `keys` as in use, on the version they were read at. */
function inUseWrite(merchantId: string, current: InUse, keys: Record<string, string>) {
  return {
    Put: {
      TableName: tableName('apiKeys'),
      Item: { api_key: inUseId(merchantId), version: current.version + 1, keys },
      ConditionExpression: current.version === 0 ? 'attribute_not_exists(api_key)' : 'version = :seen',
      ...(current.version === 0 ? {} : { ExpressionAttributeValues: { ':seen': current.version } }),
    },
  };
}

/** What storing a new key is told besides the key: the usage plan's side of it. */
type StoreOptions = NewKeyOptions & {
  now?: Date;
  /** Told of a registered key the transaction refused to store (to take it out of the plan; never throws). */
  notStored?: (apiKey: string) => Promise<void>;
  /** Told of keys found expired, which no longer need to be in the plan (never throws). */
  expired?: (apiKeys: string[]) => Promise<void>;
};

/** Times a create or roll reads again what changed between its reads and its transaction. */
const STORE_ATTEMPTS = 12;

/**
 * Creates a key pair for a merchant; the plain secret is returned once and never stored.
 * `beforeStoring` (the usage plan's registration on AWS) runs first: if it fails, nothing is
 * stored, so no key is ever active that nobody was shown and the usage plan does not know. Refused
 * (`LimitReached`) when the merchant has MAX_USABLE_KEYS keys that work.
 */
export async function createApiKey(
  merchantId: string,
  options: StoreOptions = {},
): Promise<{ record: ApiKeyRecord; apiSecret: string }> {
  const { record, apiSecret } = await storeNewKey(merchantId, options);
  return { record, apiSecret };
}

/**
 * Rolls a key (`rolled`, as read): a new key pair for its merchant (registered first, as
 * `createApiKey`'s) with the old key's allowlist as it is when stored, stored in one transaction
 * with the old key's life shortened to `expiresAt` (never lengthened: a key that expires sooner
 * keeps its expiry). The transaction holds only while
 * the old key can still be used, so a roll that meets a revocation or the key's expiry stores
 * nothing (`NotFound`): never an active key nobody was shown. Answers the new pair and the old key
 * as it now stands.
 */
export async function rollApiKey(
  rolled: ApiKeyRecord,
  expiresAt: string,
  options: Omit<StoreOptions, 'allowedIps'> = {},
): Promise<{ record: ApiKeyRecord; apiSecret: string; old: ApiKeyRecord }> {
  if (!usableAt(rolled, options.now ?? new Date())) throw new NotFound('API key');
  const { record, apiSecret, old } = await storeNewKey(rolled.merchant_id, options, { rolled, expiresAt });
  return { record, apiSecret, old: old ?? rolled };
}

/**
 * The old key's side of a roll's transaction: its expiry shortened, or checked unchanged; and its
 * allowlist checked unchanged since it was read, as the new key carries it (an edit that came
 * between makes the roll read the key again, and the new key carry the edited list).
 */
function rolledItem(old: ApiKeyRecord, expiresAt: string) {
  const shortens = old.expires_at === undefined || old.expires_at > expiresAt;
  // As stored: a list (an empty one too, were one ever written) compared as it was read.
  const ips =
    old.allowed_ips === undefined
      ? { condition: 'attribute_not_exists(allowed_ips)', values: {} }
      : { condition: 'allowed_ips = :ips', values: { ':ips': old.allowed_ips } };
  const Key = { api_key: old.api_key };
  const item = shortens
    ? {
        Update: {
          TableName: tableName('apiKeys'),
          Key,
          UpdateExpression: 'SET expires_at = :at',
          ConditionExpression: `#status = :active AND (attribute_not_exists(expires_at) OR expires_at > :at) AND ${ips.condition}`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':at': expiresAt, ':active': 'active', ...ips.values },
        },
      }
    : {
        // It expires sooner already: unchanged, and still active, when the new key is stored (an
        // update that writes what is there, so the functions need no ConditionCheckItem).
        Update: {
          TableName: tableName('apiKeys'),
          Key,
          UpdateExpression: 'SET expires_at = :seen',
          ConditionExpression: `#status = :active AND expires_at = :seen AND ${ips.condition}`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':active': 'active', ':seen': old.expires_at, ...ips.values },
        },
      };
  return { item, after: shortens ? { ...old, expires_at: expiresAt } : old };
}

/**
 * A new key stored with the merchant's keys in use (and, for a roll, the old key's new expiry) in
 * one transaction, tried again on what changed meanwhile.
 */
async function storeNewKey(
  merchantId: string,
  options: StoreOptions,
  roll?: Roll,
): Promise<{ record: ApiKeyRecord; apiSecret: string; old?: ApiKeyRecord }> {
  const now = options.now ?? new Date();
  const inUse = await inUseOf(merchantId, now);
  // At the limit, nothing is registered.
  const room = await roomForOneMore(inUse, now, roll);
  const { record, apiSecret } = await newKey(merchantId, options);
  try {
    const stored = await storeRegistered(record, { inUse, room }, { merchantId, now, roll, options });
    return { record: stored.record, apiSecret, old: stored.old };
  } catch (error) {
    // Not stored (or its answer lost, and never shown to anyone): left registered, it would only
    // be an unused plan key that no record backs, taking a place in the account's quota.
    await options.notStored?.(record.api_key);
    throw error;
  }
}

/**
 * `storeNewKey`'s transaction for its registered key, from the keys in use it read first, and read
 * again on what changed meanwhile. Answers the new key as stored (a rolled key's carries the
 * allowlist the old key has then) and the rolled key as it now stands.
 */
async function storeRegistered(
  record: ApiKeyRecord,
  first: { inUse: InUse; room: Room },
  { merchantId, now, roll, options }: { merchantId: string; now: Date; roll?: Roll; options: StoreOptions },
): Promise<{ record: ApiKeyRecord; old?: ApiKeyRecord }> {
  let { inUse, room } = first;
  let old = roll?.rolled;
  for (let attempt = 1; ; attempt++) {
    const keys = { ...room.keys, [record.api_key]: record.expires_at ?? '' };
    const onOld = old && roll ? rolledItem(old, roll.expiresAt) : undefined;
    const stored = old
      ? { ...record, allowed_ips: old.allowed_ips?.length ? old.allowed_ips : undefined }
      : record;
    const putNew = {
      Put: {
        TableName: tableName('apiKeys'),
        Item: stored,
        ConditionExpression: 'attribute_not_exists(api_key)',
      },
    };
    try {
      await retryingConflicts(() =>
        dynamo.send(
          new TransactWriteCommand({
            TransactItems: [putNew, inUseWrite(merchantId, inUse, keys), ...(onOld ? [onOld.item] : [])],
          }),
        ),
      );
      if (room.expired.length > 0) await options.expired?.(room.expired);
      return { record: stored, old: onOld?.after };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const [put, keysCode, rolledCode] = (error.CancellationReasons ?? []).map((reason) => reason.Code);
      if (put === 'ConditionalCheckFailed') throw new Error('a new API key collided with a stored one');
      if (keysCode !== 'ConditionalCheckFailed' && rolledCode !== 'ConditionalCheckFailed') throw error;
      if (attempt >= STORE_ATTEMPTS) throw new Error('the keys in use kept changing');
      // Another create or roll of this merchant's keys, or a revocation or expiry of the rolled
      // key, came between: read again (after a jittered pause, so a burst goes through one by
      // one); a rolled key that can no longer be used has nothing to roll.
      await backoff(attempt);
      inUse = await inUseOf(merchantId, now);
      if (roll) {
        old = await getApiKey(roll.rolled.api_key, { consistent: true });
        if (!old || !usableAt(old, now)) throw new NotFound('API key');
      }
      room = await roomForOneMore(inUse, now, roll);
    }
  }
}

/** Whether a key can still authenticate at `now`: neither revoked nor past its expiry. */
export function usableAt(key: Pick<ApiKeyRecord, 'status' | 'expires_at'>, now: Date): boolean {
  return key.status === 'active' && ahead(key.expires_at, now);
}

export async function getApiKey(
  apiKey: string,
  { consistent = false } = {},
): Promise<ApiKeyRecord | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('apiKeys'),
      Key: { api_key: apiKey },
      ...(consistent ? { ConsistentRead: true } : {}),
    }),
  );
  return Item as ApiKeyRecord | undefined;
}

/** The query of a merchant's keys, newest first (the `by-merchant` index). */
const keysOf = (merchantId: string) => ({
  TableName: tableName('apiKeys'),
  IndexName: 'by-merchant',
  KeyConditionExpression: 'merchant_id = :m',
  ExpressionAttributeValues: { ':m': merchantId },
  ScanIndexForward: false,
});

/** All of a merchant's keys, newest first, across DynamoDB's pages (the operator's `keys list`). */
export function listApiKeys(merchantId: string): Promise<ApiKeyRecord[]> {
  return queryAll<ApiKeyRecord>(keysOf(merchantId));
}

/**
 * One page of a merchant's keys, newest first, after `cursor` (API.md §1): read from the index a
 * page at a time, however many keys the merchant has made. The cursor is the last key's position.
 */
export async function listApiKeysPage(
  merchantId: string,
  limit: number,
  cursor: string | undefined,
): Promise<{ items: ApiKeyRecord[]; nextCursor: string | null }> {
  const list = ownList('api_keys', merchantId);
  const position = decodeCursor(cursor, list, ['created_at', 'id']);
  const { items, after } = await queryPage<ApiKeyRecord>(
    {
      ...keysOf(merchantId),
      ExclusiveStartKey: position && {
        merchant_id: merchantId,
        created_at: position.created_at,
        api_key: position.id,
      },
    },
    limit,
  );
  return {
    items,
    nextCursor: after ? encodeCursor(list, { created_at: after.created_at, id: after.api_key }) : null,
  };
}

/** Revokes a key. Revoking a revoked key changes nothing; an unknown key is `NotFound`. */
export async function revokeApiKey(apiKey: string): Promise<ApiKeyRecord> {
  try {
    // A roll of this key at the same moment (a transaction writing it) refuses this with
    // TransactionConflict, unwritten: tried again, as for the allowlist below.
    const { Attributes } = await retryingConflicts(() =>
      dynamo.send(
        new UpdateCommand({
          TableName: tableName('apiKeys'),
          Key: { api_key: apiKey },
          UpdateExpression: 'SET #status = :revoked, revoked_at = if_not_exists(revoked_at, :now)',
          ConditionExpression: 'attribute_exists(api_key)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':revoked': 'revoked', ':now': nowIso() },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return Attributes as ApiKeyRecord;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new NotFound('API key');
    throw error;
  }
}

/**
 * Replaces the IP allowlist of a key (empty: any address) while it can still be used: an unknown,
 * revoked or expired key is `NotFound` (a revocation that lands between a check and this write
 * included), as an allowlist on a key that can never be used again would mean nothing.
 */
export async function setAllowedIps(
  apiKey: string,
  allowedIps: readonly string[],
  now = new Date(),
): Promise<ApiKeyRecord> {
  const usable = { ':active': 'active', ':now': now.toISOString() };
  try {
    const { Attributes } = await retryingConflicts(() =>
      dynamo.send(
        new UpdateCommand({
          TableName: tableName('apiKeys'),
          Key: { api_key: apiKey },
          ...(allowedIps.length > 0
            ? {
                UpdateExpression: 'SET allowed_ips = :ips',
                ExpressionAttributeValues: { ':ips': [...allowedIps], ...usable },
              }
            : { UpdateExpression: 'REMOVE allowed_ips', ExpressionAttributeValues: usable }),
          ConditionExpression:
            'attribute_exists(api_key) AND #status = :active AND (attribute_not_exists(expires_at) OR expires_at > :now)',
          ExpressionAttributeNames: { '#status': 'status' },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return Attributes as ApiKeyRecord;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new NotFound('API key');
    throw error;
  }
}

/** Records a use of the key, at most once a minute so busy keys do not cost a write per request. */
export async function touchLastUsed(apiKey: string, now = new Date()): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName('apiKeys'),
        Key: { api_key: apiKey },
        UpdateExpression: 'SET last_used_at = :now',
        ConditionExpression:
          'attribute_exists(api_key) AND (attribute_not_exists(last_used_at) OR last_used_at < :stale)',
        ExpressionAttributeValues: {
          ':now': now.toISOString(),
          ':stale': new Date(now.getTime() - LAST_USED_RESOLUTION_MS).toISOString(),
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
