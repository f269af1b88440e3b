import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll, queryPage } from '#shared/aws/query.ts';
import { retryingConflicts } from '#shared/aws/transactions.ts';
import { writtenOnce } from '#shared/aws/written-once.ts';
import type { EntryCategory, LedgerEntry } from '#shared/ledger/ledger.ts';
import { decodeCursor, encodeCursor, ownList } from '#shared/pagination.ts';
import type { PartnerName } from '#shared/partners/partner.ts';

export type TransactionType = 'credit' | 'debit';
export type TransactionStatus = 'pending' | 'success' | 'failed' | 'reversed';

export interface Counterparty {
  account_name: string;
  account_number: string;
  bank_code: string;
}

/** A transaction as stored: the API's fields plus the bookkeeping the service needs. */
export interface TransactionRecord {
  merchant_id: string;
  reference: string;
  type: TransactionType;
  category: EntryCategory;
  amount: number;
  fee: number;
  currency: 'NGN';
  status: TransactionStatus;
  narration: string | null;
  counterparty: Counterparty;
  balance_after: number;
  created_at: string;
  updated_at: string;
  /** The ledger entry that moved the money. */
  entry_id: string;
  /** Hash of the request that created it: the same reference with another body is a 409. */
  fingerprint?: string;
  /** Why a transfer failed or was reversed, in words a merchant can show a customer. */
  failure_reason?: string;
  /** The operator who failed a transfer by hand (`ops transfers fail --by`); never shown to the merchant. */
  failed_by?: string;
  /** The partner that moved the money (payments and transfers). */
  partner?: PartnerName;
  /** A transfer's reference at its partner. */
  partner_reference?: string;
  /** Set while a transfer is pending (the requery's sparse index), removed when it settles. */
  pending_partner?: PartnerName;
  /** For a payment: the virtual account it paid (null for wallet top-ups). */
  virtual_account_reference?: string | null;
  /**
   * How many times a transfer was handed to the partner (`recordDispatch`): a refusal may give its
   * money back only if no other hand-over could still be on its way (`StatusChange.dispatches`).
   */
  dispatches?: number;
  /** Epoch ms of the last hand-over (`recordDispatch`): an operator's `transfers fail` waits past it. */
  dispatched_at?: number;
  /** Epoch ms of the hand-over before the last (0: none), and the last count's own random id. */
  previous_dispatched_at?: number;
  count_id?: string;
  /**
   * The partner account a transfer was handed over through (`BankingPartner.accountTag`): never
   * sent through another once a hand-over may have reached the partner. Absent for partners with
   * one account, and for transfers handed over before it was recorded.
   */
  partner_account?: string;
  /** The hand-overs (their `dispatches` numbers) known never to have reached the partner. */
  unposted_dispatches?: Set<number>;
  /**
   * The partner's final refusal of the `dispatch`-th hand-over, kept when its refund could not be
   * written (`keepRefusal`): no further hand-over is counted, and the next retry or requery that
   * finds the transfer unknown to the partner gives the money back with it.
   */
  refusal?: { reason: string; dispatch: number };
  /**
   * Epoch ms before which a retry does not send the transfer again: the partner answered that it
   * has it (`holdResends`). Absent: a retry resends at once.
   */
  resend_after?: number;
  /**
   * Epoch ms before which no resend is made: an operator asked to fail the transfer while a send
   * may still be on its way (`holdForOperator`). Kept apart from `resend_after`, which each send's
   * answer sets again: that would cut the operator's hold short.
   */
  operator_hold_until?: number;
}

/** The transaction as API.md §4 shows it. */
export function toApiTransaction(record: TransactionRecord) {
  return {
    reference: record.reference,
    type: record.type,
    category: record.category,
    amount: record.amount,
    fee: record.fee,
    currency: record.currency,
    status: record.status,
    narration: record.narration,
    // In one order, however DynamoDB returned the item's map: a 201 and a later GET read alike.
    counterparty: {
      account_name: record.counterparty.account_name,
      account_number: record.counterparty.account_number,
      bank_code: record.counterparty.bank_code,
    },
    balance_after: record.balance_after,
    reason: record.failure_reason ?? null,
    virtual_account_reference: record.virtual_account_reference ?? null,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** A transaction record for a posted entry, to be put in the entry's own transaction. */
export function transactionRecord(
  entry: LedgerEntry,
  fields: Pick<TransactionRecord, 'reference' | 'amount' | 'fee' | 'status' | 'narration' | 'counterparty'> &
    Partial<
      Pick<
        TransactionRecord,
        'fingerprint' | 'partner' | 'partner_reference' | 'pending_partner' | 'virtual_account_reference'
      >
    >,
): TransactionRecord {
  return {
    merchant_id: entry.merchant_id,
    type: entry.amount < 0 ? 'debit' : 'credit',
    category: entry.category,
    currency: 'NGN',
    balance_after: entry.balance_after,
    created_at: entry.created_at,
    updated_at: entry.created_at,
    entry_id: entry.entry_id,
    ...fields,
  };
}

/** A companion write: puts a new transaction record, failing if the reference is taken. */
export function putTransactionItem(record: TransactionRecord) {
  return {
    Put: {
      TableName: tableName('transactions'),
      Item: record,
      ConditionExpression: 'attribute_not_exists(#reference)',
      ExpressionAttributeNames: { '#reference': 'reference' },
    },
  };
}

/** A status change: from one of `from` to `to`, with the reason of a failure or return. */
export interface StatusChange {
  from: TransactionStatus | readonly TransactionStatus[];
  to: TransactionStatus;
  at: string;
  reason?: string;
  /** The operator who failed it by hand (`failed_by`): written only with a change to `failed`. */
  failedBy?: string;
  /**
   * Only if the transfer was handed to the partner exactly this many times (no other send since);
   * 0: never handed over.
   */
  dispatches?: number;
}

/** The operator a change records (`failed_by`): only a change to `failed` records one. */
const failedByOf = (change: StatusChange) => (change.to === 'failed' ? change.failedBy : undefined);

/**
 * A companion write: moves a transaction to `to` status, only if it is still one of `from`. A
 * transfer leaving `pending` leaves the requery's index too.
 */
export function statusChangeItem(merchantId: string, reference: string, change: StatusChange) {
  const from = typeof change.from === 'string' ? [change.from] : change.from;
  const fromValues = Object.fromEntries(from.map((status, i) => [`:from${i}`, status]));
  const failedBy = failedByOf(change);
  const set = [
    '#status = :to',
    'updated_at = :at',
    ...(change.reason ? ['failure_reason = :reason'] : []),
    ...(failedBy ? ['failed_by = :by'] : []),
  ];
  return {
    Update: {
      TableName: tableName('transactions'),
      Key: { merchant_id: merchantId, reference },
      UpdateExpression: `SET ${set.join(', ')}${change.to === 'pending' ? '' : ' REMOVE pending_partner'}`,
      ConditionExpression: `#status IN (${Object.keys(fromValues).join(', ')})${
        change.dispatches === undefined
          ? ''
          : change.dispatches === 0
            ? ' AND attribute_not_exists(dispatches)'
            : ' AND dispatches = :dispatches'
      }`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':to': change.to,
        ':at': change.at,
        ...fromValues,
        ...(change.reason ? { ':reason': change.reason } : {}),
        ...(failedBy ? { ':by': failedBy } : {}),
        ...(change.dispatches ? { ':dispatches': change.dispatches } : {}),
      },
    },
  };
}

/** A hand-over as counted: which it is (1 for the first), and how many before it never reached the partner. */
export interface Dispatch {
  dispatch: number;
  /** Earlier hand-overs known never to have reached the partner (`markUnposted`). */
  unposted: number;
  /** Epoch ms when it was counted. */
  at: number;
  /** Epoch ms when the hand-over before it was counted; undefined for the first. */
  previousAt?: number;
}

/**
 * Counts one hand-over of a pending transfer to the partner; undefined when nothing may be sent: the
 * transfer is pending no more (settled meanwhile), for a resend (`idleOnly`) the partner answered
 * that it has the transfer less than a while ago (`resend_after`, see `holdResends`), it was handed
 * over through another `account` of the partner than the one given (the account of the hand-overs
 * that may have reached it; taken over while none did), the partner's refusal of its last
 * hand-over is kept to be applied (`refusal`), or, given `seen` (the count read with the transfer),
 * another hand-over was counted since that read: concurrent retries of one transfer send it once.
 */
export async function recordDispatch(
  merchantId: string,
  reference: string,
  { idleOnly = false, account, seen }: { idleOnly?: boolean; account?: string; seen?: number } = {},
): Promise<Dispatch | undefined> {
  const unchanged =
    seen === undefined
      ? ''
      : seen === 0
        ? ' AND attribute_not_exists(dispatches)'
        : ' AND dispatches = :seen';
  const idle = idleOnly
    ? ' AND (attribute_not_exists(resend_after) OR resend_after <= :at) AND (attribute_not_exists(operator_hold_until) OR operator_hold_until <= :at)'
    : '';
  // Every earlier hand-over known not to have reached the partner: the account is not yet bound.
  const sameAccount = account
    ? ' AND (attribute_not_exists(partner_account) OR partner_account = :account OR size(unposted_dispatches) = dispatches)'
    : '';
  // A kept refusal of the last hand-over blocks the next (one of an earlier count does not).
  const unrefused = ' AND (attribute_not_exists(refusal) OR refusal.#dispatch <> dispatches)';
  const at = Date.now();
  // This count's own mark: the SDK's retry of it, its answer lost, must not count it twice (`writtenOnce`).
  const countId = randomUUID();
  const key = { merchant_id: merchantId, reference };
  return writtenOnce(
    async () => {
      const { Attributes } = await retryingConflicts(() =>
        dynamo.send(
          new UpdateCommand({
            TableName: tableName('transactions'),
            Key: key,
            // The time before this count's is kept too, for the retry that finds this count done.
            UpdateExpression: `ADD dispatches :one SET dispatched_at = :at, count_id = :count, previous_dispatched_at = if_not_exists(dispatched_at, :none)${
              account ? ', partner_account = :account' : ''
            }`,
            // Never back in time: a count slow to land (retried, say) after a later one must not make
            // the last hand-over look older than it is (`TransferOrder.lastHandOverAt`).
            ConditionExpression: `#status = :pending${unchanged}${idle}${sameAccount}${unrefused} AND (attribute_not_exists(dispatched_at) OR dispatched_at <= :at) AND (attribute_not_exists(count_id) OR count_id <> :count)`,
            ExpressionAttributeNames: { '#status': 'status', '#dispatch': 'dispatch' },
            ExpressionAttributeValues: {
              ':one': 1,
              ':at': at,
              ':count': countId,
              ':none': 0,
              ':pending': 'pending',
              ...(account ? { ':account': account } : {}),
              ...(seen ? { ':seen': seen } : {}),
            },
            // The item as it was: the hand-over before this one's time, which the update overwrites.
            ReturnValues: 'ALL_OLD',
          }),
        ),
      );
      return dispatchOf(Number(Attributes?.dispatches ?? 0) + 1, Attributes, at, Attributes?.dispatched_at);
    },
    async () => {
      const stored = await getTransaction(merchantId, reference);
      // Ours, and no count since: a later count of this code writes its own id, one of code from
      // before count_id (a deploy's mixed versions) its own time. Else this count stays uncounted
      // as sent (a cautious extra count: what follows goes as a resend).
      if (stored?.count_id !== countId || stored.dispatched_at !== at) return undefined;
      return dispatchOf(Number(stored.dispatches), stored, at, stored.previous_dispatched_at || undefined);
    },
  );
}

/** A count as `recordDispatch` answers it, from the transaction item as it was or is. */
function dispatchOf(
  dispatch: number,
  item: Pick<TransactionRecord, 'unposted_dispatches'> | undefined,
  at: number,
  previousAt: unknown,
): Dispatch {
  return {
    dispatch,
    unposted: item?.unposted_dispatches?.size ?? 0,
    at,
    ...(typeof previousAt === 'number' ? { previousAt } : {}),
  };
}

/**
 * Marks the `dispatch`-th hand-over as one that never reached the partner (`TransferNotSent`): a
 * later send is then a resend only if another hand-over may have reached it, and the account of a
 * transfer none reached may still change. Idempotent (a number set), so a retried write never
 * marks another hand-over; and a fact about that hand-over whatever was counted since.
 */
export function markUnposted(merchantId: string, reference: string, dispatch: number): Promise<boolean> {
  return setWhilePending(merchantId, reference, 'ADD unposted_dispatches :dispatch', {
    ':dispatch': new Set([dispatch]),
  });
}

/** The condition that `dispatch` is still the last hand-over counted. */
function countIs(dispatch: number) {
  return { condition: 'dispatches = :dispatch', values: { ':dispatch': dispatch } };
}

/**
 * Keeps the partner's final refusal of the `dispatch`-th hand-over of a pending transfer whose refund
 * could not be written, for the next retry or requery to apply (`TransactionRecord.refusal`); only
 * if no other hand-over was counted since. False if it was not kept.
 */
export function keepRefusal(
  merchantId: string,
  reference: string,
  refusal: { reason: string; dispatch: number },
): Promise<boolean> {
  return setWhilePending(
    merchantId,
    reference,
    'SET refusal = :refusal',
    { ':refusal': refusal },
    countIs(refusal.dispatch),
  );
}

/**
 * The partner answered that it has a pending transfer: retries do not send it again before `until`
 * (epoch ms). Written only after an answer, never before a send, so a send that crashed or lost its
 * answer leaves nothing that would stop a retry. False if the transfer is no longer pending (its
 * webhook settled it before the answer came).
 */
export function holdResends(merchantId: string, reference: string, until: number): Promise<boolean> {
  return setWhilePending(merchantId, reference, 'SET resend_after = :until', { ':until': until });
}

/**
 * Until when (epoch ms) retries and the requery do not send a transfer again: the later of the
 * partner's hold (`holdResends`) and an operator's (`holdForOperator`), as the resend's condition
 * reads them; 0 when neither holds it.
 */
export function resendsHeldUntil(
  record: Pick<TransactionRecord, 'resend_after' | 'operator_hold_until'>,
): number {
  return Math.max(record.resend_after ?? 0, record.operator_hold_until ?? 0);
}

/**
 * An operator asked to fail a pending transfer while a send may still be on its way: retries do not
 * send it again before `until` (epoch ms), so that it can be failed then. Only ever lengthened.
 * False if the transfer is no longer pending, or already held as long.
 */
export function holdForOperator(merchantId: string, reference: string, until: number): Promise<boolean> {
  return setWhilePending(
    merchantId,
    reference,
    'SET operator_hold_until = :until',
    { ':until': until },
    { condition: '(attribute_not_exists(operator_hold_until) OR operator_hold_until < :until)', values: {} },
  );
}

/** Updates a transaction by `update` while it is pending (and `also` holds); false if it was not. */
async function setWhilePending(
  merchantId: string,
  reference: string,
  update: string,
  values: Record<string, unknown>,
  also?: { condition: string; values: Record<string, unknown> },
): Promise<boolean> {
  try {
    await retryingConflicts(() =>
      dynamo.send(
        new UpdateCommand({
          TableName: tableName('transactions'),
          Key: { merchant_id: merchantId, reference },
          UpdateExpression: update,
          ConditionExpression: `#status = :pending${also ? ` AND ${also.condition}` : ''}`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ...values, ...also?.values, ':pending': 'pending' },
        }),
      ),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return false;
  }
}

/**
 * Changes a status (no money moves), with `companions` written in the same transaction (the
 * change's event); false if the transaction was no longer in one of `from`.
 */
export async function changeStatus(
  merchantId: string,
  reference: string,
  change: StatusChange,
  companions: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [],
): Promise<boolean> {
  try {
    await retryingConflicts(() =>
      dynamo.send(
        new TransactWriteCommand({
          TransactItems: [statusChangeItem(merchantId, reference, change), ...companions],
        }),
      ),
    );
    return true;
  } catch (error) {
    const [status] = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
    if (status?.Code === 'ConditionalCheckFailed') return false;
    throw error;
  }
}

/** A transaction as it is after a status change (the record a status change writes). */
export function afterStatusChange(record: TransactionRecord, change: StatusChange): TransactionRecord {
  const { pending_partner: _left, ...rest } = record;
  const failedBy = failedByOf(change);
  return {
    ...(change.to === 'pending' ? record : rest),
    status: change.to,
    updated_at: change.at,
    ...(change.reason ? { failure_reason: change.reason } : {}),
    ...(failedBy ? { failed_by: failedBy } : {}),
  };
}

/** Pending transfers of a partner created at or before `createdBefore` (ISO), oldest first. */
export function pendingTransfers(partner: PartnerName, createdBefore: string): Promise<TransactionRecord[]> {
  return queryAll<TransactionRecord>({
    TableName: tableName('transactions'),
    IndexName: 'pending-transfers',
    KeyConditionExpression: 'pending_partner = :partner AND created_at <= :before',
    ExpressionAttributeValues: { ':partner': partner, ':before': createdBefore },
  });
}

/** One transaction of one merchant: another merchant's reference is simply not there. */
export async function getTransaction(
  merchantId: string,
  reference: string,
): Promise<TransactionRecord | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('transactions'),
      Key: { merchant_id: merchantId, reference },
      ConsistentRead: true,
    }),
  );
  return Item as TransactionRecord | undefined;
}

export interface TransactionFilter {
  type?: TransactionType;
  status?: TransactionStatus;
  /** Inclusive ISO 8601 bounds on `created_at`. */
  from?: string;
  to?: string;
  limit: number;
  cursor?: string;
}

const CURSOR_KEYS = ['created_at', 'reference'] as const;

/** A merchant's transactions, newest first, filtered, one page at a time. */
export async function listTransactions(merchantId: string, filter: TransactionFilter) {
  const list = ownList('transactions', merchantId);
  let position = decodeCursor(filter.cursor, list, CURSOR_KEYS);
  // A cursor is a place in the newest-first order, kept when the dates asked change: the page after
  // it within them. DynamoDB refuses a start outside the key condition, so a place newer than `to`
  // starts at the newest in range, and one older than `from` has nothing after it.
  const at = position?.created_at ?? '';
  if (position && filter.from && at < filter.from) return { items: [], nextCursor: null };
  if (position && filter.to && at > filter.to) position = undefined;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':m': merchantId };
  let keyCondition = 'merchant_id = :m';
  // One bound alone is a one-sided condition: a stand-in for the other ('9999' for no `to`) would
  // sort before a `from` in the year 9999, and DynamoDB refuses a BETWEEN whose bounds are reversed.
  if (filter.from && filter.to) {
    keyCondition += ' AND created_at BETWEEN :from AND :to';
    values[':from'] = filter.from;
    values[':to'] = filter.to;
  } else if (filter.from) {
    keyCondition += ' AND created_at >= :from';
    values[':from'] = filter.from;
  } else if (filter.to) {
    keyCondition += ' AND created_at <= :to';
    values[':to'] = filter.to;
  }
  const filters: string[] = [];
  if (filter.type) {
    filters.push('#type = :type');
    names['#type'] = 'type';
    values[':type'] = filter.type;
  }
  if (filter.status) {
    filters.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = filter.status;
  }
  const { items, after } = await queryPage<TransactionRecord>(
    {
      TableName: tableName('transactions'),
      IndexName: 'by-created',
      KeyConditionExpression: keyCondition,
      FilterExpression: filters.length ? filters.join(' AND ') : undefined,
      ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      ExclusiveStartKey: position && { merchant_id: merchantId, ...position },
    },
    filter.limit,
  );
  return {
    items,
    nextCursor: after
      ? encodeCursor(list, { created_at: after.created_at, reference: after.reference })
      : null,
  };
}
