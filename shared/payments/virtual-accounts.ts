import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll, queryPage } from '#shared/aws/query.ts';
import { findBank } from '#shared/banks/index.ts';
import { decodeCursor, encodeCursor, ownList } from '#shared/pagination.ts';
import type { PartnerName } from '#shared/partners/partner.ts';

export interface VirtualAccountRequest {
  amount: number;
  reference?: string;
  expires_in_minutes: number;
  customer?: { name: string; email: string };
}

/** A virtual account as stored; `amount_received` and `payment_count` move with each credit. */
export interface VirtualAccount {
  merchant_id: string;
  reference: string;
  /** The partner that issued the account number. */
  partner: PartnerName;
  account_number: string;
  account_name: string;
  bank_code: string;
  amount: number;
  amount_received: number;
  payment_count: number;
  customer: { name: string; email: string } | null;
  expires_at: string;
  created_at: string;
  fingerprint: string;
}

/** One payment into a virtual account, as `GET /payments/{reference}` lists it. */
export interface Payment {
  session_id: string;
  amount: number;
  sender_name: string | null;
  sender_account_number: string | null;
  sender_bank_code: string | null;
  received_at: string;
}

export type PaymentStatus = 'pending' | 'partially_paid' | 'paid' | 'overpaid' | 'expired';

/** The partition of a virtual account's payments. */
export function paymentsKey(merchantId: string, reference: string): string {
  return `${merchantId}#${reference}`;
}

function bankOf(code: string) {
  return { code, name: findBank(code)?.name ?? code };
}

/**
 * The virtual account as `POST /virtual-accounts` answers it: `pending` when just opened, and as it
 * stands now when the request is repeated (paid, expired…), never a stale `pending`.
 */
export function toApiVirtualAccount(account: VirtualAccount) {
  return {
    reference: account.reference,
    account_number: account.account_number,
    account_name: account.account_name,
    bank: bankOf(account.bank_code),
    amount: account.amount,
    currency: 'NGN',
    status: paymentStatus(account),
    expires_at: account.expires_at,
    created_at: account.created_at,
  };
}

export async function getVirtualAccount(
  merchantId: string,
  reference: string,
): Promise<VirtualAccount | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('virtualAccounts'),
      Key: { merchant_id: merchantId, reference },
      ConsistentRead: true,
    }),
  );
  return Item as VirtualAccount | undefined;
}

/** A payment the partner refused and returned to the payer (e.g. a wrong amount). */
export interface RejectedAttempt {
  amount: number;
  reason: string;
  received_at: string;
}

/** The sort key of a payment in its virtual account's partition. */
function paymentSk(paymentId: string): string {
  return `payment#${paymentId}`;
}

/** A companion write: a payment into a virtual account, once per partner payment id. */
export function paymentItem(merchantId: string, reference: string, payment: Payment) {
  return {
    Put: {
      TableName: tableName('payments'),
      Item: {
        virtual_account: paymentsKey(merchantId, reference),
        sk: paymentSk(payment.session_id),
        ...payment,
      },
      ConditionExpression: 'attribute_not_exists(sk)',
    },
  };
}

/**
 * A companion write that adds payments to a virtual account's totals, only if the total is still
 * `before` (what the events of these payments were computed from).
 */
export function accountTotalItem(
  merchantId: string,
  reference: string,
  change: { amount: number; count: number; before: number },
) {
  return {
    Update: {
      TableName: tableName('virtualAccounts'),
      Key: { merchant_id: merchantId, reference },
      UpdateExpression: 'ADD amount_received :amount, payment_count :count',
      ConditionExpression: 'attribute_exists(merchant_id) AND amount_received = :before',
      ExpressionAttributeValues: {
        ':amount': change.amount,
        ':count': change.count,
        ':before': change.before,
      },
    },
  };
}

/** A virtual account with everything it received: what its API views are made of. */
export interface VirtualAccountState {
  account: VirtualAccount;
  payments: Payment[];
  rejected: RejectedAttempt[];
}

/** A virtual account as it stands now, with its payments and refused attempts. */
export async function virtualAccountState(
  merchantId: string,
  reference: string,
): Promise<VirtualAccountState | undefined> {
  const [account, history] = await Promise.all([
    getVirtualAccount(merchantId, reference),
    paymentsOf(merchantId, reference),
  ]);
  return account && { account, ...history };
}

const LIST_CURSOR_KEYS = ['created_at', 'reference'] as const;

/** How each status reads as a filter on the stored totals (the status itself is derived). */
const STATUS_FILTERS: Record<PaymentStatus, string> = {
  pending: '#received = :zero AND #expires >= :now',
  expired: '#received = :zero AND #expires < :now',
  partially_paid: '#received > :zero AND #received < #amount',
  paid: '#received = #amount',
  overpaid: '#received > #amount',
};

/** A merchant's virtual accounts, newest first, optionally of one status, one page at a time. */
export async function listVirtualAccounts(
  merchantId: string,
  filter: { status?: PaymentStatus; limit: number; cursor?: string },
  now = Date.now(),
): Promise<{ items: VirtualAccountState[]; nextCursor: string | null }> {
  const list = ownList('virtual_accounts', merchantId);
  const position = decodeCursor(filter.cursor, list, LIST_CURSOR_KEYS);
  const expression = filter.status && STATUS_FILTERS[filter.status];
  // DynamoDB refuses names and values an expression does not use: pass only the ones it names.
  const used = <T>(entries: Record<string, T>) =>
    Object.fromEntries(Object.entries(entries).filter(([key]) => expression?.includes(key)));
  const names = used({ '#received': 'amount_received', '#amount': 'amount', '#expires': 'expires_at' });
  const { items, after } = await queryPage<VirtualAccount>(
    {
      TableName: tableName('virtualAccounts'),
      IndexName: 'by-created',
      KeyConditionExpression: 'merchant_id = :m',
      FilterExpression: expression,
      ExpressionAttributeNames: Object.keys(names).length > 0 ? names : undefined,
      ExpressionAttributeValues: {
        ':m': merchantId,
        ...used({ ':zero': 0, ':now': new Date(now).toISOString() }),
      },
      ScanIndexForward: false,
      ExclusiveStartKey: position && { merchant_id: merchantId, ...position },
    },
    filter.limit,
  );
  const states = await Promise.all(
    items.map(async (account) => ({ account, ...(await paymentsOf(merchantId, account.reference)) })),
  );
  return {
    items: states,
    nextCursor: after
      ? encodeCursor(list, { created_at: after.created_at, reference: after.reference })
      : null,
  };
}

/** The state after `payment` arrives. */
export function withPayment(state: VirtualAccountState, payment: Payment): VirtualAccountState {
  return {
    ...state,
    account: {
      ...state.account,
      amount_received: state.account.amount_received + payment.amount,
      payment_count: state.account.payment_count + 1,
    },
    payments: [...state.payments, payment].sort(
      (a, b) => a.received_at.localeCompare(b.received_at) || a.session_id.localeCompare(b.session_id),
    ),
  };
}

/**
 * Where a refused attempt named only by an alias went: a virtual account, or kept for operators
 * (`shared` when the alias is carried by accounts the refusal cannot be told between).
 */
export type RefusalDecision = { merchant_id: string; reference: string } | { kept: string; shared: boolean };

/**
 * Records where a partner's refused attempt goes, once (in its own partition of the payments
 * table, `refused:<partner>:<attempt id>`): the first decision stands and the stored one is
 * returned, so a redelivery follows it though accounts opened since would change its own.
 */
export async function decideRefusal(attemptKey: string, decision: RefusalDecision): Promise<RefusalDecision> {
  const key = { virtual_account: `refused:${attemptKey}`, sk: 'decision' };
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName('payments'),
        Item: { ...key, decision },
        ConditionExpression: 'attribute_not_exists(sk)',
      }),
    );
    return decision;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: tableName('payments'), Key: key, ConsistentRead: true }),
    );
    return (Item?.decision as RefusalDecision | undefined) ?? decision;
  }
}

/** Records a refused attempt on its virtual account, once per partner attempt id. */
export async function recordRejectedAttempt(
  merchantId: string,
  reference: string,
  attemptId: string,
  attempt: RejectedAttempt,
): Promise<void> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName('payments'),
        Item: {
          virtual_account: paymentsKey(merchantId, reference),
          sk: `rejected#${attemptId}`,
          ...attempt,
        },
        ConditionExpression: 'attribute_not_exists(sk)',
      }),
    );
  } catch (error) {
    // Recorded before: a redelivery.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** Every payment received into a virtual account and every refused attempt, oldest first. */
export async function paymentsOf(
  merchantId: string,
  reference: string,
): Promise<{ payments: Payment[]; rejected: RejectedAttempt[] }> {
  const items = await queryAll<Payment & RejectedAttempt & { sk: string }>({
    TableName: tableName('payments'),
    KeyConditionExpression: 'virtual_account = :va',
    ExpressionAttributeValues: { ':va': paymentsKey(merchantId, reference) },
    ConsistentRead: true,
  });
  const payments = items
    .filter((item) => item.sk.startsWith('payment#'))
    .map((item) => ({
      session_id: item.session_id,
      amount: item.amount,
      sender_name: item.sender_name,
      sender_account_number: item.sender_account_number,
      sender_bank_code: item.sender_bank_code,
      received_at: item.received_at,
    }))
    .sort((a, b) => a.received_at.localeCompare(b.received_at) || a.session_id.localeCompare(b.session_id));
  const rejected = items
    .filter((item) => item.sk.startsWith('rejected#'))
    .map((item) => ({ amount: item.amount, reason: item.reason, received_at: item.received_at }))
    .sort((a, b) => a.received_at.localeCompare(b.received_at));
  return { payments, rejected };
}

/** The status of a virtual account from what it received and the clock (API.md §4). */
export function paymentStatus(
  account: Pick<VirtualAccount, 'amount' | 'amount_received' | 'expires_at'>,
  now = Date.now(),
): PaymentStatus {
  if (account.amount_received === 0) return Date.parse(account.expires_at) < now ? 'expired' : 'pending';
  if (account.amount_received < account.amount) return 'partially_paid';
  return account.amount_received === account.amount ? 'paid' : 'overpaid';
}

/** When the payments first covered the amount, or null. */
export function paidAt(amount: number, payments: readonly Payment[]): string | null {
  let total = 0;
  for (const payment of payments) {
    total += payment.amount;
    if (total >= amount) return payment.received_at;
  }
  return null;
}

/** A virtual account as `GET /virtual-accounts` and events show it: `GET /payments` without `payments`. */
export function toApiVirtualAccountSummary(state: VirtualAccountState, now = Date.now()) {
  const { payments: _payments, ...summary } = toApiPayment(state.account, state, now);
  return summary;
}

/** A virtual account's payment status as `GET /payments/{reference}` shows it. */
export function toApiPayment(
  account: VirtualAccount,
  { payments, rejected }: { payments: readonly Payment[]; rejected: readonly RejectedAttempt[] },
  now = Date.now(),
) {
  return {
    reference: account.reference,
    status: paymentStatus(account, now),
    amount: account.amount,
    amount_received: account.amount_received,
    currency: 'NGN',
    account_number: account.account_number,
    bank: bankOf(account.bank_code),
    expires_at: account.expires_at,
    paid_at: paidAt(account.amount, payments),
    created_at: account.created_at,
    payments,
    rejected_attempts: rejected,
  };
}
