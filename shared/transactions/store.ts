import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryPage } from '#shared/aws/query.ts';
import type { EntryCategory, LedgerEntry } from '#shared/ledger/ledger.ts';
import { decodeCursor, encodeCursor } from '#shared/pagination.ts';

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
  failure_reason?: string;
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
    counterparty: record.counterparty,
    balance_after: record.balance_after,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** A transaction record for a posted entry, to be put in the entry's own transaction. */
export function transactionRecord(
  entry: LedgerEntry,
  fields: Pick<TransactionRecord, 'reference' | 'amount' | 'fee' | 'status' | 'narration' | 'counterparty'> &
    Partial<Pick<TransactionRecord, 'fingerprint'>>,
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

/** A companion write: moves a transaction from `from` to `to` status, only if it is still `from`. */
export function statusChangeItem(
  merchantId: string,
  reference: string,
  change: { from: TransactionStatus; to: TransactionStatus; at: string; reason?: string },
) {
  return {
    Update: {
      TableName: tableName('transactions'),
      Key: { merchant_id: merchantId, reference },
      UpdateExpression: `SET #status = :to, updated_at = :at${change.reason ? ', failure_reason = :reason' : ''}`,
      ConditionExpression: '#status = :from',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':to': change.to,
        ':from': change.from,
        ':at': change.at,
        ...(change.reason ? { ':reason': change.reason } : {}),
      },
    },
  };
}

/** Changes a status on its own (no money moves); false if it was no longer `from`. */
export async function changeStatus(
  merchantId: string,
  reference: string,
  change: { from: TransactionStatus; to: TransactionStatus },
): Promise<boolean> {
  try {
    await dynamo.send(
      new UpdateCommand(
        statusChangeItem(merchantId, reference, { ...change, at: new Date().toISOString() }).Update,
      ),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
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
  const position = decodeCursor(filter.cursor, CURSOR_KEYS);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':m': merchantId };
  let keyCondition = 'merchant_id = :m';
  if (filter.from || filter.to) {
    keyCondition += ' AND created_at BETWEEN :from AND :to';
    values[':from'] = filter.from ?? '0000';
    values[':to'] = filter.to ?? '9999';
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
  const { items, more } = await queryPage<TransactionRecord>(
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
  const last = items.at(-1);
  return {
    items,
    nextCursor:
      more && last ? encodeCursor({ created_at: last.created_at, reference: last.reference }) : null,
  };
}
