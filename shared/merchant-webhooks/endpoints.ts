import { createHmac, randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  GetCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import { backoff, retryingConflicts } from '#shared/aws/transactions.ts';
import { wroteOnce } from '#shared/aws/written-once.ts';
import { config } from '#shared/config.ts';
import { sha256Base64url } from '#shared/crypto/digest.ts';
import { IdempotencyKeyReused, InvalidUrl, LimitReached, NotFound } from '#shared/errors.ts';
import { EVENT_TYPES, type EventType } from '#shared/events/types.ts';
import { IDEMPOTENCY_KEY_TTL_MS } from '#shared/http/idempotency.ts';
import { newId, nowIso } from '#shared/ids.ts';
import { checkWebhookUrl } from '#shared/merchant-webhooks/url-guard.ts';
import { merchantWebhookKey } from '#shared/secrets.ts';

/**
 * Merchants' webhook endpoints (API.md §8). A secret is never stored: it is derived from a master
 * key and the endpoint's secret version, so it can sign deliveries and be shown once, and a copy
 * of the table reveals none. Rotation starts a new version; the previous one keeps signing for
 * 24 hours.
 */

/** Endpoints a merchant may have enabled at once. */
export const MAX_ENDPOINTS = 5;
/** How long a rotated-out secret keeps signing deliveries. */
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
/**
 * Secrets that sign a delivery at most (the current one and those rotated out in the last 24 hours),
 * so the signature header stays small: past it, the oldest rotated-out secret stops signing early.
 * A rotation is never refused: a leaked secret can always be replaced.
 */
const MAX_SIGNING_SECRETS = 5;

export interface SecretVersion {
  version: number;
  /** When this version stops signing (set when a newer one replaces it). */
  retires_at?: string;
}

export interface EndpointRecord {
  merchant_id: string;
  endpoint_id: string;
  url: string;
  events: EventType[];
  description: string | null;
  status: 'enabled' | 'deleted';
  secrets: SecretVersion[];
  created_at: string;
  updated_at: string;
  /** The last rotation's own id, so that it tells itself apart from another made alike. */
  rotation_id?: string;
}

/** The item that counts a merchant's enabled endpoints (the limit holds under concurrency). */
const COUNTER = '#enabled';

/**
 * A transaction item that moves a merchant's count of enabled endpoints; an increase is refused at
 * the limit, so concurrent registrations can never pass it.
 */
function counterItem(merchantId: string, delta: 1 | -1) {
  return {
    Update: {
      TableName: tableName('webhookEndpoints'),
      Key: { merchant_id: merchantId, endpoint_id: COUNTER },
      UpdateExpression: 'ADD enabled :delta',
      ...(delta > 0 ? { ConditionExpression: 'attribute_not_exists(enabled) OR enabled < :max' } : {}),
      ExpressionAttributeValues: { ':delta': delta, ...(delta > 0 ? { ':max': MAX_ENDPOINTS } : {}) },
    },
  };
}

/** What a create or rotation did: the endpoint as it then was, its secret, and whether this is a replay. */
export interface EndpointChange {
  endpoint: EndpointRecord;
  secret: string;
  /** Answered from a request made earlier with the same `Idempotency-Key`, not done again. */
  replayed?: boolean;
}

/**
 * What a request sent with an `Idempotency-Key` did (`shared/http/idempotency.ts`), kept 24 hours
 * beside the merchant's endpoints, written in the same transaction as the change itself: the
 * endpoint as the answer showed it, and which secret version it showed (secrets are derived, so
 * none is stored). `request` names the operation and its parameters.
 */
interface ReplayRecord {
  merchant_id: string;
  endpoint_id: string;
  request: string;
  endpoint: EndpointRecord;
  secret_version: number;
  /** When the key is forgotten (ms); DynamoDB's TTL (`ttl`, s) deletes the item some time after. */
  expires_at: number;
  ttl: number;
}

/** Where a merchant's key is remembered: a digest, so any key fits and none is stored as sent. */
const replayItemKey = (merchantId: string, idempotencyKey: string) =>
  endpointItemKey(merchantId, `#key#${sha256Base64url(idempotencyKey)}`);

/** A request as its key remembers it: the operation and what it was given. */
const requestOf = (...parts: unknown[]) => sha256Base64url(JSON.stringify(parts));

/** The change a key's earlier request made, if the key is remembered; another request's key is 409. */
async function replayOf(merchantId: string, idempotencyKey: string, request: string) {
  const { Item } = await dynamo.send(
    new GetCommand({ ...replayItemKey(merchantId, idempotencyKey), ConsistentRead: true }),
  );
  const replay = Item as ReplayRecord | undefined;
  if (!replay || replay.expires_at <= Date.now()) return undefined;
  if (replay.request !== request) throw new IdempotencyKeyReused();
  const { endpoint, secret_version: version } = replay;
  return {
    endpoint,
    secret: await secretOf(endpoint.endpoint_id, version),
    replayed: true,
  } as EndpointChange;
}

/**
 * The transaction item that remembers a key's request with the change it made: refused while the
 * key is remembered, so that of two requests with one key only one makes the change.
 */
function replayPut(
  idempotencyKey: string,
  request: string,
  endpoint: EndpointRecord,
  version: number,
  now: number,
) {
  const expiresAt = now + IDEMPOTENCY_KEY_TTL_MS;
  const item: ReplayRecord = {
    ...replayItemKey(endpoint.merchant_id, idempotencyKey).Key,
    request,
    endpoint,
    secret_version: version,
    expires_at: expiresAt,
    ttl: Math.ceil(expiresAt / 1000),
  };
  return {
    Put: {
      TableName: tableName('webhookEndpoints'),
      Item: item,
      ConditionExpression: 'attribute_not_exists(endpoint_id) OR expires_at <= :now',
      ExpressionAttributeValues: { ':now': now },
    },
  };
}

/** The code of each item of a cancelled transaction, in the order the items were given. */
const cancellationCodes = (error: unknown): (string | undefined)[] | undefined =>
  error instanceof TransactionCanceledException
    ? (error.CancellationReasons ?? []).map((reason) => reason.Code)
    : undefined;

/** The secret of one version of an endpoint: `whsec_` + base64 of an HMAC of the master key. */
async function secretOf(endpointId: string, version: number): Promise<string> {
  const key = await merchantWebhookKey();
  return `whsec_${createHmac('sha256', key).update(`${endpointId}:${version}`).digest('base64')}`;
}

/** The secrets that sign deliveries to an endpoint now: the current one and any not yet retired. */
export async function signingSecrets(endpoint: EndpointRecord, now = Date.now()): Promise<string[]> {
  const active = endpoint.secrets.filter((s) => !s.retires_at || Date.parse(s.retires_at) > now);
  return Promise.all(active.map((s) => secretOf(endpoint.endpoint_id, s.version)));
}

/** The endpoint as the API shows it; `secret` only when it was just made. */
export function toApiEndpoint(endpoint: EndpointRecord, secret?: string) {
  return {
    id: endpoint.endpoint_id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    status: endpoint.status,
    ...(secret ? { secret } : {}),
    created_at: endpoint.created_at,
  };
}

/** Refuses a URL the service must never call (API.md §8: https, no user info, no private address). */
export async function checkedUrl(raw: string): Promise<string> {
  const check = await checkWebhookUrl(raw, { allowPrivate: config.merchantWebhooks.allowPrivate });
  if (!check.ok) throw new InvalidUrl(check.reason);
  return check.url.href;
}

/**
 * Registers an endpoint (at most 5 enabled per merchant); the answer carries its secret, once. With an
 * `Idempotency-Key` remembered from an earlier registration of the same request, nothing is made:
 * that registration's answer again.
 */
export async function createEndpoint(
  merchantId: string,
  request: { url: string; events?: EventType[]; description?: string },
  idempotencyKey?: string,
): Promise<EndpointChange> {
  const asked = requestOf('create', request.url, request.events ?? null, request.description ?? null);
  const earlier = idempotencyKey ? await replayOf(merchantId, idempotencyKey, asked) : undefined;
  if (earlier) return earlier;
  const url = await checkedUrl(request.url);
  const now = Date.now();
  const endpoint: EndpointRecord = {
    merchant_id: merchantId,
    endpoint_id: newId('we'),
    url,
    events: request.events?.length ? [...new Set(request.events)] : [...EVENT_TYPES],
    description: request.description ?? null,
    status: 'enabled',
    secrets: [{ version: 1 }],
    created_at: new Date(now).toISOString(),
    updated_at: new Date(now).toISOString(),
  };
  try {
    // The counter is shared by the merchant's creates and deletes: one at the same moment cancels
    // this with TransactionConflict, and nothing was written.
    await retryingConflicts(() =>
      dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            counterItem(merchantId, 1),
            {
              Put: {
                TableName: tableName('webhookEndpoints'),
                Item: endpoint,
                ConditionExpression: 'attribute_not_exists(endpoint_id)',
              },
            },
            ...(idempotencyKey ? [replayPut(idempotencyKey, asked, endpoint, 1, now)] : []),
          ],
        }),
      ),
    );
  } catch (error) {
    const [counter, , replay] = cancellationCodes(error) ?? [];
    // Another request with the same key made its endpoint meanwhile: its answer, not a second one.
    if (replay === 'ConditionalCheckFailed' && idempotencyKey) {
      const made = await replayOf(merchantId, idempotencyKey, asked);
      if (made) return made;
    }
    if (counter === 'ConditionalCheckFailed') {
      throw new LimitReached(`At most ${MAX_ENDPOINTS} webhook endpoints can be enabled; delete one first`);
    }
    throw error;
  }
  return { endpoint, secret: await secretOf(endpoint.endpoint_id, 1) };
}

/** Where an endpoint is stored: its table and key. */
export function endpointItemKey(merchantId: string, endpointId: string) {
  return {
    TableName: tableName('webhookEndpoints'),
    Key: { merchant_id: merchantId, endpoint_id: endpointId },
  };
}

/** One endpoint of one merchant (deleted ones included); another merchant's id is not there. */
export async function getEndpoint(
  merchantId: string,
  endpointId: string,
): Promise<EndpointRecord | undefined> {
  // The merchant's counter and remembered keys share the table: no endpoint id names them.
  if (!endpointId.startsWith('we_')) return undefined;
  const { Item } = await dynamo.send(
    new GetCommand({ ...endpointItemKey(merchantId, endpointId), ConsistentRead: true }),
  );
  return Item as EndpointRecord | undefined;
}

/** A merchant's enabled endpoints, oldest first. */
export async function listEndpoints(merchantId: string): Promise<EndpointRecord[]> {
  const items = await queryAll<EndpointRecord>({
    TableName: tableName('webhookEndpoints'),
    KeyConditionExpression: 'merchant_id = :m AND begins_with(endpoint_id, :we)',
    FilterExpression: '#status = :enabled',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':m': merchantId, ':we': 'we_', ':enabled': 'enabled' },
    ConsistentRead: true,
  });
  return items.sort((a, b) => a.created_at.localeCompare(b.created_at));
}

async function enabledEndpoint(merchantId: string, endpointId: string): Promise<EndpointRecord> {
  const endpoint = await getEndpoint(merchantId, endpointId);
  if (endpoint?.status !== 'enabled') throw new NotFound('Webhook endpoint');
  return endpoint;
}

/**
 * How long a deleted endpoint's item is kept before DynamoDB's TTL removes it, with its secrets:
 * nothing reads it after (a delivery to a missing endpoint ends as to a deleted one), and every
 * merchant's list, fan-out and redelivery reads past the deleted endpoints it still holds.
 */
export const DELETED_ENDPOINT_KEPT_MS = 7 * 24 * 3600 * 1000;

/** Deletes an endpoint: nothing more is sent to it, and it no longer counts towards the limit. */
export async function deleteEndpoint(merchantId: string, endpointId: string): Promise<EndpointRecord> {
  const endpoint = await enabledEndpoint(merchantId, endpointId);
  const now = nowIso();
  const forgottenAt = Math.ceil((Date.parse(now) + DELETED_ENDPOINT_KEPT_MS) / 1000);
  try {
    // Another create, delete or rotation of the merchant's at the same moment cancels this with
    // TransactionConflict, and nothing was written.
    await retryingConflicts(() =>
      dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName('webhookEndpoints'),
                Key: { merchant_id: merchantId, endpoint_id: endpointId },
                UpdateExpression: 'SET #status = :deleted, updated_at = :now, #ttl = :ttl',
                ConditionExpression: '#status = :enabled',
                ExpressionAttributeNames: { '#status': 'status', '#ttl': 'ttl' },
                ExpressionAttributeValues: {
                  ':deleted': 'deleted',
                  ':enabled': 'enabled',
                  ':now': now,
                  ':ttl': forgottenAt,
                },
              },
            },
            counterItem(merchantId, -1),
          ],
        }),
      ),
    );
  } catch (error) {
    // Deleted by a concurrent request since it was read: the answer of a DELETE after it (404).
    const [stored] = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
    if (stored?.Code === 'ConditionalCheckFailed') throw new NotFound('Webhook endpoint');
    throw error;
  }
  return { ...endpoint, status: 'deleted', updated_at: now };
}

/** One item's update in a transaction (which a single `UpdateCommand` takes too). */
type TransactUpdate = NonNullable<NonNullable<TransactWriteCommandInput['TransactItems']>[number]['Update']>;

/** Another rotation of the endpoint's secrets was written since they were read. */
class RotatedMeanwhile extends Error {}

/**
 * A new secret for an endpoint; the previous one keeps signing for 24 hours, as do those rotated out
 * before it within their own 24 hours (at most MAX_SIGNING_SECRETS sign at once, the oldest dropped).
 * With an `Idempotency-Key` remembered from an earlier rotation of the same endpoint, nothing is
 * rotated: that rotation's answer again, its secret the one it made.
 */
export async function rotateSecret(
  merchantId: string,
  endpointId: string,
  idempotencyKey?: string,
): Promise<EndpointChange> {
  const keyed = idempotencyKey
    ? { key: idempotencyKey, request: requestOf('rotate', endpointId) }
    : undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      const earlier = keyed ? await replayOf(merchantId, keyed.key, keyed.request) : undefined;
      return earlier ?? (await rotateOnce(await enabledEndpoint(merchantId, endpointId), keyed));
    } catch (error) {
      // A concurrent rotation won: rotate again from what it left (both secrets then sign for 24 h),
      // after a jittered pause, so that a burst of rotations goes through one by one. One with the
      // same key won: its answer, read on the next round.
      if (!(error instanceof RotatedMeanwhile) || attempt >= ROTATION_ATTEMPTS) throw error;
      await backoff(attempt);
    }
  }
}

/**
 * Tries of one rotation while others win: each round one of the concurrent rotations is written, so
 * this many concurrent rotations of one endpoint all go through (a merchant's key allows 100 a
 * minute; with the backoff's jitter, bursts far larger pass too). At most about 4 s of pauses.
 */
const ROTATION_ATTEMPTS = 20;

async function rotateOnce(
  endpoint: EndpointRecord,
  keyed?: { key: string; request: string },
): Promise<EndpointChange> {
  const { merchant_id: merchantId, endpoint_id: endpointId } = endpoint;
  const now = Date.now();
  const current = Math.max(...endpoint.secrets.map((s) => s.version));
  const retiresAt = new Date(now + ROTATION_OVERLAP_MS).toISOString();
  const rotation = randomUUID();
  // Secrets rotated out earlier keep signing until their own 24 hours are over (API.md §8: each
  // rotation's old secret signs for 24 hours, however soon the next rotation comes), the oldest
  // dropped first past MAX_SIGNING_SECRETS.
  const earlier = endpoint.secrets
    .filter((s) => s.version !== current && s.retires_at !== undefined && Date.parse(s.retires_at) > now)
    .sort((a, b) => a.version - b.version)
    .slice(-(MAX_SIGNING_SECRETS - 2));
  const secrets: SecretVersion[] = [
    ...earlier,
    { version: current, retires_at: retiresAt },
    { version: current + 1 },
  ];
  const rotated: EndpointRecord = { ...endpoint, secrets, updated_at: new Date(now).toISOString() };
  const update = {
    ...endpointItemKey(merchantId, endpointId),
    UpdateExpression: 'SET secrets = :secrets, updated_at = :now, rotation_id = :rotation',
    // A concurrent rotation from the same version: one of them wins, the other is refused.
    ConditionExpression: '#status = :enabled AND secrets = :before',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':secrets': secrets,
      ':before': endpoint.secrets,
      ':enabled': 'enabled',
      ':now': rotated.updated_at,
      ':rotation': rotation,
    },
  } satisfies TransactUpdate;
  const written = keyed
    ? await rotatedWithKey(update, replayPut(keyed.key, keyed.request, rotated, current + 1, now))
    : await wroteOnce(
        // A delete of the endpoint at the same moment refuses this with TransactionConflict, unwritten.
        () => retryingConflicts(() => dynamo.send(new UpdateCommand(update))),
        // The SDK's retry of this rotation, its answer lost: its own id, not another rotation's (two
        // made from the same state in the same millisecond write the same secrets).
        async () => (await getEndpoint(merchantId, endpointId))?.rotation_id === rotation,
      );
  // Another rotation won: the caller rotates again from what it left.
  if (!written) throw new RotatedMeanwhile();
  return { endpoint: rotated, secret: await secretOf(endpointId, current + 1) };
}

/**
 * A rotation and the key that remembers it, written together (a transaction: the SDK's retry of it
 * carries its idempotency token, so a lost answer is no refusal). Whether it was written; refused, a
 * rotation or a request with the same key won meanwhile (the caller reads which on its next round).
 */
async function rotatedWithKey(update: TransactUpdate, replay: ReturnType<typeof replayPut>) {
  try {
    await dynamo.send(new TransactWriteCommand({ TransactItems: [{ Update: update }, replay] }));
    return true;
  } catch (error) {
    if (cancellationCodes(error)) return false;
    throw error;
  }
}
