import { createHash } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { openWithIssuedNumber } from '#shared/accounts/issue.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import { findBank } from '#shared/banks/index.ts';
import { DuplicateReference } from '#shared/errors.ts';
import { newId } from '#shared/ids.ts';

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

function fingerprint(request: VirtualAccountRequest): string {
  const canonical = JSON.stringify([request.amount, request.expires_in_minutes, request.customer ?? null]);
  return createHash('sha256').update(canonical).digest('hex');
}

function bankOf(code: string) {
  return { code, name: findBank(code)?.name ?? code };
}

/** The virtual account as `POST /virtual-accounts` answers it. */
export function toApiVirtualAccount(account: VirtualAccount) {
  return {
    reference: account.reference,
    account_number: account.account_number,
    account_name: account.account_name,
    bank: bankOf(account.bank_code),
    amount: account.amount,
    currency: 'NGN',
    status: 'pending',
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

function asRetry(existing: VirtualAccount, request: VirtualAccountRequest): VirtualAccount {
  if (existing.fingerprint !== fingerprint(request)) throw new DuplicateReference();
  return existing;
}

/**
 * Opens a temporary virtual account for a fixed amount. The partner issues the number; the
 * service claims it in `account-numbers` in the same transaction as the account, so a number is
 * never issued twice and a late payment always finds its account. Idempotent on `reference`.
 */
export async function createVirtualAccount(
  merchantId: string,
  merchantName: string,
  request: VirtualAccountRequest,
): Promise<{ account: VirtualAccount; created: boolean }> {
  const reference = request.reference ?? newId('va', 12);
  if (request.reference) {
    const earlier = await getVirtualAccount(merchantId, reference);
    if (earlier) return { account: asRetry(earlier, request), created: false };
  }
  try {
    const account = await openWithIssuedNumber(
      'virtual_account',
      request.customer?.name ?? merchantName,
      (issued) => {
        const now = Date.now();
        const opened: VirtualAccount = {
          merchant_id: merchantId,
          reference,
          account_number: issued.account_number,
          account_name: issued.account_name,
          bank_code: issued.bank_code,
          amount: request.amount,
          amount_received: 0,
          payment_count: 0,
          customer: request.customer ?? null,
          expires_at: new Date(now + request.expires_in_minutes * 60_000).toISOString(),
          created_at: new Date(now).toISOString(),
          fingerprint: fingerprint(request),
        };
        return {
          owner: { merchant_id: merchantId, reference, created_at: opened.created_at },
          item: {
            Put: {
              TableName: tableName('virtualAccounts'),
              Item: opened,
              ConditionExpression: 'attribute_not_exists(#reference)',
              ExpressionAttributeNames: { '#reference': 'reference' },
            },
          },
          result: opened,
        };
      },
    );
    return { account, created: true };
  } catch (error) {
    const ownClaim =
      error instanceof TransactionCanceledException ? error.CancellationReasons?.[1] : undefined;
    if (ownClaim?.Code !== 'ConditionalCheckFailed') throw error;
    // A concurrent request with this reference won.
    const winner = await getVirtualAccount(merchantId, reference);
    if (!winner) throw error;
    return { account: asRetry(winner, request), created: false };
  }
}

/** Every payment received into a virtual account, oldest first. */
export async function paymentsOf(merchantId: string, reference: string): Promise<Payment[]> {
  const items = await queryAll<Payment>({
    TableName: tableName('payments'),
    KeyConditionExpression: 'virtual_account = :va',
    ExpressionAttributeValues: { ':va': paymentsKey(merchantId, reference) },
    ConsistentRead: true,
  });
  return items
    .map((item) => ({
      session_id: item.session_id,
      amount: item.amount,
      sender_name: item.sender_name,
      sender_account_number: item.sender_account_number,
      sender_bank_code: item.sender_bank_code,
      received_at: item.received_at,
    }))
    .sort((a, b) => a.received_at.localeCompare(b.received_at) || a.session_id.localeCompare(b.session_id));
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

/** A virtual account's payment status as `GET /payments/{reference}` shows it. */
export function toApiPayment(account: VirtualAccount, payments: readonly Payment[], now = Date.now()) {
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
  };
}
