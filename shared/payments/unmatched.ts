import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type AccountOwner, ownerOf } from '#shared/accounts/owners.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import { sha256Hex } from '#shared/crypto/digest.ts';
import { UNMATCHED_PAYMENT } from '#shared/definitions/alerts.ts';
import { logger } from '#shared/logger.ts';
import { traceKeys } from '#shared/partner-webhooks/trace.ts';
import type {
  DeliveryUnusable,
  PaymentReceived,
  PaymentRejected,
  QueuedEvent,
} from '#shared/partners/partner.ts';

/** What is kept for operators: payments nobody can be credited for, refused attempts, unusable deliveries. */
export type Kept = PaymentReceived | PaymentRejected | DeliveryUnusable;

/** A kept payment as stored; `status` and the resolution fields are set once, by an operator. */
export interface UnmatchedRecord {
  payment_key: string;
  variant: string;
  /** Why it was kept (`held: …` when a bound held it for operators). */
  reason: string;
  event: QueuedEvent & Kept;
  received_at: string;
  status?: 'credited' | 'returned';
  resolved_at?: string;
  resolved_by?: string;
  /** The operator's reason for the resolution (the audit trail). */
  resolution_reason?: string;
  /** Who was credited, and the ledger entry that credited them. */
  merchant_id?: string;
  entry_id?: string;
}

/** Open: nobody could be credited; held: a bound held it; credited and returned: resolved by an operator. */
export type UnmatchedStatus = 'open' | 'held' | 'credited' | 'returned';
export const UNMATCHED_STATUSES: readonly UnmatchedStatus[] = ['open', 'held', 'credited', 'returned'];

export function statusOf(record: UnmatchedRecord): UnmatchedStatus {
  return record.status ?? (record.reason.startsWith('held:') ? 'held' : 'open');
}

/** How operators name a kept payment: its key and the fingerprint of what the delivery said. */
export function unmatchedId(record: Pick<UnmatchedRecord, 'payment_key' | 'variant'>): string {
  return `${record.payment_key}#${record.variant}`;
}

/**
 * The key of a kept payment, attempt or delivery: the partner's own id, qualified by the partner;
 * a delivery whose id could not be read is kept under its body's hash.
 */
export function unmatchedKey(event: Kept): string {
  const id =
    event.type === 'PaymentReceived'
      ? event.payment_id
      : event.type === 'PaymentRejected'
        ? `rejected:${event.attempt_id}`
        : (event.partner_id ?? `body:${event.body_sha256}`);
  return `${event.partner}:${id}`;
}

/**
 * What tells two deliveries under one partner id apart: the fields that move money (an unusable
 * delivery: its whole body). A redelivery has the same; another payment reusing the id has
 * another, and is kept beside the first.
 */
function variantOf(event: Kept): string {
  const fields =
    event.type === 'DeliveryUnusable'
      ? [event.partner, event.body_sha256, event.type]
      : [
          event.partner,
          event.account_ids,
          event.amount,
          event.type,
          ...(event.type === 'PaymentRejected' && event.alias_ids ? [event.alias_ids] : []),
        ];
  return sha256Hex(JSON.stringify(fields)).slice(0, 24);
}

/** Everything kept under one payment key (`<partner>:<id>`). */
function keptUnder(paymentKey: string): Promise<UnmatchedRecord[]> {
  return queryAll<UnmatchedRecord>({
    TableName: tableName('unmatchedPayments'),
    KeyConditionExpression: 'payment_key = :k',
    ExpressionAttributeValues: { ':k': paymentKey },
    ConsistentRead: true,
  });
}

/** Everything kept under one partner id, for operators and tests. */
export function unmatchedOf(partner: string, id: string): Promise<UnmatchedRecord[]> {
  return keptUnder(`${partner}:${id}`);
}

/**
 * Keeps a payment (or a refused attempt, or a delivery the service cannot act on) nobody can be
 * credited for, for operators: never credited, never dropped. A redelivery finds it kept already.
 */
export async function keepUnmatched(event: QueuedEvent & Kept, reason: string): Promise<void> {
  const paymentKey = unmatchedKey(event);
  const variant = variantOf(event);
  logger.warn(UNMATCHED_PAYMENT, { payment_key: paymentKey, variant, reason, ...traceKeys(event) });
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName('unmatchedPayments'),
        Item: { payment_key: paymentKey, variant, reason, event, received_at: event.received_at },
        ConditionExpression: 'attribute_not_exists(variant)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/**
 * Whether a kept payment is surely another payment than `event`: another amount, another receiving
 * account number (both given), or accounts both known and different (the merchant's wallet, or
 * which of its virtual accounts). Partner ids alone do not say
 * it: a redelivery may name its account by fewer or other ids (Paystack's optional receiver fields:
 * a NUBAN in one delivery, a customer code in the next), and is the same payment.
 */
export async function surelyAnotherPayment(kept: Kept, event: PaymentReceived): Promise<boolean> {
  if (kept.type !== 'PaymentReceived') return false;
  if (kept.amount !== event.amount) return true;
  if (kept.account_number && event.account_number && kept.account_number !== event.account_number)
    return true;
  const [keptInto, paidInto] = await Promise.all([
    ownerOf(kept.partner, kept.account_ids),
    ownerOf(event.partner, event.account_ids),
  ]);
  // One account is reached by each of its ids (a Paystack wallet: its NUBAN and its customer code),
  // each an owner item of its own: the account itself is compared, not the id's item.
  const account = (owner: AccountOwner) => `${owner.merchant_id}/${owner.kind}/${owner.reference ?? ''}`;
  return keptInto !== undefined && paidInto !== undefined && account(keptInto) !== account(paidInto);
}

/** Another payment than `event` kept under the same partner id, resolved as `resolvedAs` says. */
async function twinOf(
  event: PaymentReceived,
  resolvedAs: (record: UnmatchedRecord) => boolean,
): Promise<UnmatchedRecord | undefined> {
  for (const record of await keptUnder(unmatchedKey(event))) {
    if (resolvedAs(record) && (await surelyAnotherPayment(record.event, event))) return record;
  }
  return undefined;
}

/** The other kept payments (whatever they are) an operator credited under `entryId`. */
export async function creditedUnder(event: PaymentReceived, entryId: string): Promise<UnmatchedRecord[]> {
  const variant = variantOf(event);
  return (await keptUnder(unmatchedKey(event))).filter(
    (record) => record.variant !== variant && record.status === 'credited' && record.entry_id === entryId,
  );
}

/**
 * The other payment kept under the same partner id whose return to its payer made `claim` (a
 * return's claim and resolution are written together, with one time and operator): another
 * payment than `event`, which then reused the id. Undefined when the claim is not such a return (a
 * return of an unreadable delivery, which may be this very payment).
 */
export function returnedTwinOf(event: PaymentReceived, claim: { at: string; by: string }) {
  return twinOf(
    event,
    (record) =>
      record.status === 'returned' && record.resolved_at === claim.at && record.resolved_by === claim.by,
  );
}

/**
 * The other payment kept under the same partner id that an operator credited under `entryId`:
 * another payment than `event`, which then reused the id.
 */
export function creditedTwinOf(event: PaymentReceived, entryId: string) {
  return twinOf(event, (record) => record.status === 'credited' && record.entry_id === entryId);
}

/**
 * The kept payments an operator's id names: `<partner>:<id>#<variant>` names one; `<partner>:<id>`
 * names every payment kept under that partner id (one, unless a partner reused the id).
 */
export async function findUnmatched(id: string): Promise<UnmatchedRecord[]> {
  // A partner's id may hold a `#` itself: `<partner>:<X>#<fingerprint>` names X's kept payment of
  // that fingerprint when there is one (what is kept under the partner id `<X>#<fingerprint>` is
  // named by its own full ids); else it is a payment key like any other.
  const named = /^(.+)#([0-9a-f]{24})$/.exec(id);
  if (named) {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName('unmatchedPayments'),
        Key: { payment_key: named[1], variant: named[2] },
        ConsistentRead: true,
      }),
    );
    if (Item) return [Item as UnmatchedRecord];
  }
  return keptUnder(id);
}

/** How an operator resolved a kept payment. */
export type Resolution = { at: string; by: string; reason: string } & (
  | { status: 'credited'; merchant_id: string; entry_id: string }
  | { status: 'returned' }
);

/**
 * A write that records a resolution, only if the payment is still unresolved: a transaction item
 * (beside a credit's entry, or a return's claim).
 */
export function resolutionUpdate(
  record: Pick<UnmatchedRecord, 'payment_key' | 'variant'>,
  resolution: Resolution,
) {
  const credited = resolution.status === 'credited';
  return {
    TableName: tableName('unmatchedPayments'),
    Key: { payment_key: record.payment_key, variant: record.variant },
    UpdateExpression: `SET #status = :status, resolved_at = :at, resolved_by = :by, resolution_reason = :reason${
      credited ? ', merchant_id = :merchant, entry_id = :entry' : ''
    }`,
    ConditionExpression: 'attribute_exists(variant) AND attribute_not_exists(#status)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':status': resolution.status,
      ':at': resolution.at,
      ':by': resolution.by,
      ':reason': resolution.reason,
      ...(credited ? { ':merchant': resolution.merchant_id, ':entry': resolution.entry_id } : {}),
    },
  };
}
