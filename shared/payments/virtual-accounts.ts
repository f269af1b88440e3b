import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { openWithIssuedAccount } from '#shared/accounts/issue.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import { findBank } from '#shared/banks/index.ts';
import { DuplicateReference } from '#shared/errors.ts';
import { newId } from '#shared/ids.ts';
import type { PartnerName } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';

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
  const now = Date.now();
  const expiresAt = new Date(now + request.expires_in_minutes * 60_000).toISOString();
  try {
    const account = await openWithIssuedAccount(
      'virtual_account',
      (bank) =>
        bank.openVirtualAccount({
          merchant_id: merchantId,
          reference,
          name: request.customer?.name ?? merchantName,
          amount: request.amount,
          expires_at: expiresAt,
          customer: request.customer,
        }),
      (issued) => {
        const opened: VirtualAccount = {
          merchant_id: merchantId,
          reference,
          partner: partner().name,
          account_number: issued.account_number,
          account_name: issued.account_name,
          bank_code: issued.bank_code,
          amount: request.amount,
          amount_received: 0,
          payment_count: 0,
          customer: request.customer ?? null,
          // The partner's own closing time where it has one (Paystack's `account_expires_at`).
          expires_at: issued.expires_at ?? expiresAt,
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
    // The account's own item comes last in the transaction: its condition failing means a
    // concurrent request with this reference won.
    const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
    if (reasons.at(-1)?.Code !== 'ConditionalCheckFailed') throw error;
    const winner = await getVirtualAccount(merchantId, reference);
    if (!winner) throw error;
    return { account: asRetry(winner, request), created: false };
  }
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

/** A companion write that adds payments to a virtual account's totals. */
export function accountTotalItem(merchantId: string, reference: string, amount: number, count: number) {
  return {
    Update: {
      TableName: tableName('virtualAccounts'),
      Key: { merchant_id: merchantId, reference },
      UpdateExpression: 'ADD amount_received :amount, payment_count :count',
      ConditionExpression: 'attribute_exists(merchant_id)',
      ExpressionAttributeValues: { ':amount': amount, ':count': count },
    },
  };
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
