import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { generateKeyPair, hashSecret } from '#shared/api-keys/secrets.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll, queryPage } from '#shared/aws/query.ts';
import { retryingConflicts } from '#shared/aws/transactions.ts';
import { wroteOnce } from '#shared/aws/written-once.ts';
import { NotFound } from '#shared/errors.ts';
import { nowIso } from '#shared/ids.ts';
import { logger } from '#shared/logger.ts';
import { decodeCursor, encodeCursor } from '#shared/pagination.ts';
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
 * Creates a key pair for a merchant; the plain secret is returned once and never stored.
 * `beforeStoring` (the usage plan's registration on AWS) runs first: if it fails, nothing is
 * stored, so no key is ever active that nobody was shown and the usage plan does not know.
 */
export async function createApiKey(
  merchantId: string,
  options: NewKeyOptions = {},
): Promise<{ record: ApiKeyRecord; apiSecret: string }> {
  const { record, apiSecret } = await newKey(merchantId, options);
  const stored = await wroteOnce(
    () =>
      dynamo.send(
        new PutCommand({
          TableName: tableName('apiKeys'),
          Item: record,
          ConditionExpression: 'attribute_not_exists(api_key)',
        }),
      ),
    // The SDK's retry of this put, its answer lost: the key is there with this secret's hash.
    async () => (await getApiKey(record.api_key, { consistent: true }))?.secret_hash === record.secret_hash,
  );
  if (!stored) throw new Error('a new API key collided with a stored one');
  return { record, apiSecret };
}

/** Times a roll reads the old key again when it changed between its read and the transaction. */
const ROLL_ATTEMPTS = 5;

/**
 * Rolls a key (`rolled`, as read): a new key pair for its merchant (registered first, as `createApiKey`'s) stored in
 * one transaction with the old key's life shortened to `expiresAt` (never lengthened: a key that
 * expires sooner keeps its expiry). The transaction holds only while the old key can still be used,
 * so a roll that meets a revocation or the key's expiry stores nothing (`NotFound`): never an active
 * key nobody was shown. Answers the new pair and the old key as it now stands.
 */
export async function rollApiKey(
  rolled: ApiKeyRecord,
  expiresAt: string,
  options: NewKeyOptions & {
    now?: Date;
    /** Told of a registered key the transaction refused to store (to take it out of the plan). */
    notStored?: (apiKey: string) => Promise<void>;
  } = {},
): Promise<{ record: ApiKeyRecord; apiSecret: string; old: ApiKeyRecord }> {
  const oldKey = rolled.api_key;
  let old: ApiKeyRecord | undefined = rolled;
  if (!usableAt(old, options.now ?? new Date())) throw new NotFound('API key');
  const { record, apiSecret } = await newKey(old.merchant_id, options);
  const putNew = {
    Put: {
      TableName: tableName('apiKeys'),
      Item: record,
      ConditionExpression: 'attribute_not_exists(api_key)',
    },
  };
  for (let attempt = 1; ; attempt++) {
    const shortens = old.expires_at === undefined || old.expires_at > expiresAt;
    const oldItem = shortens
      ? {
          Update: {
            TableName: tableName('apiKeys'),
            Key: { api_key: oldKey },
            UpdateExpression: 'SET expires_at = :at',
            ConditionExpression:
              '#status = :active AND (attribute_not_exists(expires_at) OR expires_at > :at)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':at': expiresAt, ':active': 'active' },
          },
        }
      : {
          // It expires sooner already: unchanged, and still active, when the new key is stored.
          ConditionCheck: {
            TableName: tableName('apiKeys'),
            Key: { api_key: oldKey },
            ConditionExpression: '#status = :active AND expires_at = :seen',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':active': 'active', ':seen': old.expires_at },
          },
        };
    try {
      await retryingConflicts(() =>
        dynamo.send(new TransactWriteCommand({ TransactItems: [putNew, oldItem] })),
      );
      return { record, apiSecret, old: shortens ? { ...old, expires_at: expiresAt } : old };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const [put, onOld] = (error.CancellationReasons ?? []).map((reason) => reason.Code);
      if (put === 'ConditionalCheckFailed') throw new Error('a new API key collided with a stored one');
      if (onOld !== 'ConditionalCheckFailed') throw error;
      // Revoked, expired or shortened meanwhile: read it again; a key that can no longer be used
      // has nothing left to roll.
      old = await getApiKey(oldKey, { consistent: true });
      if (!old || !usableAt(old, options.now ?? new Date()) || attempt >= ROLL_ATTEMPTS) {
        // Left registered it would only be an unused plan key that no record backs: worth a try.
        await options.notStored?.(record.api_key).catch((cause: unknown) =>
          logger.warn('a key registered for a roll that was refused is still in the usage plan', {
            api_key: record.api_key,
            error: String(cause),
          }),
        );
        throw new NotFound('API key');
      }
    }
  }
}

/** Whether a key can still authenticate at `now`: neither revoked nor past its expiry. */
export function usableAt(key: Pick<ApiKeyRecord, 'status' | 'expires_at'>, now: Date): boolean {
  const expired = key.expires_at !== undefined && Date.parse(key.expires_at) <= now.getTime();
  return key.status === 'active' && !expired;
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
  const after = decodeCursor(cursor, ['created_at', 'id']);
  const { items, more } = await queryPage<ApiKeyRecord>(
    {
      ...keysOf(merchantId),
      ExclusiveStartKey: after && {
        merchant_id: merchantId,
        created_at: after.created_at,
        api_key: after.id,
      },
    },
    limit,
  );
  const last = items.at(-1);
  return {
    items,
    nextCursor: more && last ? encodeCursor({ created_at: last.created_at, id: last.api_key }) : null,
  };
}

/** Revokes a key. Revoking a revoked key changes nothing; an unknown key is `NotFound`. */
export async function revokeApiKey(apiKey: string): Promise<ApiKeyRecord> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: tableName('apiKeys'),
        Key: { api_key: apiKey },
        UpdateExpression: 'SET #status = :revoked, revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(api_key)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':revoked': 'revoked', ':now': nowIso() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes as ApiKeyRecord;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new NotFound('API key');
    throw error;
  }
}

/** Replaces the IP allowlist of a key (empty: any address). Unknown key: `NotFound`. */
export async function setAllowedIps(apiKey: string, allowedIps: readonly string[]): Promise<ApiKeyRecord> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: tableName('apiKeys'),
        Key: { api_key: apiKey },
        ...(allowedIps.length > 0
          ? {
              UpdateExpression: 'SET allowed_ips = :ips',
              ExpressionAttributeValues: { ':ips': [...allowedIps] },
            }
          : { UpdateExpression: 'REMOVE allowed_ips' }),
        ConditionExpression: 'attribute_exists(api_key)',
        ReturnValues: 'ALL_NEW',
      }),
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
