import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { generateKeyPair, hashSecret } from '#shared/api-keys/secrets.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll, queryPage } from '#shared/aws/query.ts';
import { wroteOnce } from '#shared/aws/written-once.ts';
import { NotFound } from '#shared/errors.ts';
import { nowIso } from '#shared/ids.ts';
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

/**
 * Creates a key pair for a merchant; the plain secret is returned once and never stored.
 * `beforeStoring` (the usage plan's registration on AWS) runs first: if it fails, nothing is
 * stored, so no key is ever active that nobody was shown and the usage plan does not know.
 */
export async function createApiKey(
  merchantId: string,
  options: {
    allowedIps?: string[];
    expiresAt?: string;
    beforeStoring?: (apiKey: string) => Promise<void>;
  } = {},
): Promise<{ record: ApiKeyRecord; apiSecret: string }> {
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
    async () => (await getApiKey(apiKey, { consistent: true }))?.secret_hash === record.secret_hash,
  );
  if (!stored) throw new Error('a new API key collided with a stored one');
  return { record, apiSecret };
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

/**
 * Sets when an active key stops working: only ever earlier (a roll shortens a key's life, never
 * extends it). Refused (`NotFound`) for an unknown or revoked key.
 */
export async function expireApiKeyAt(apiKey: string, expiresAt: string): Promise<ApiKeyRecord> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: tableName('apiKeys'),
        Key: { api_key: apiKey },
        UpdateExpression: 'SET expires_at = :at',
        ConditionExpression:
          'attribute_exists(api_key) AND #status = :active AND (attribute_not_exists(expires_at) OR expires_at > :at)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':at': expiresAt, ':active': 'active' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes as ApiKeyRecord;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const current = await getApiKey(apiKey);
    // Already expiring sooner: nothing to shorten.
    if (current?.status === 'active') return current;
    throw new NotFound('API key');
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
