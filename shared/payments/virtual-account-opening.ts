import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { openWithIssuedAccount } from '#shared/accounts/issue.ts';
import { tableName } from '#shared/aws/clients.ts';
import { sha256Hex } from '#shared/crypto/digest.ts';
import { DuplicateReference, ValidationError } from '#shared/errors.ts';
import { newId } from '#shared/ids.ts';
import { partner } from '#shared/partners/registry.ts';
import {
  getVirtualAccount,
  type VirtualAccount,
  type VirtualAccountRequest,
} from '#shared/payments/virtual-accounts.ts';

/**
 * Opening a virtual account: the only part of the virtual accounts that calls the partner, kept
 * apart so the consumer (which credits them) carries no partner adapter.
 */

function fingerprint(request: VirtualAccountRequest): string {
  const canonical = JSON.stringify([request.amount, request.expires_in_minutes, request.customer ?? null]);
  return sha256Hex(canonical);
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
  const minimum = partner().virtualAccountMinimum;
  if (minimum !== undefined && request.amount < minimum) {
    throw new ValidationError([
      {
        field: 'amount',
        message: `Must be at least ${minimum} (kobo) with this deployment's banking partner`,
      },
    ]);
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
    // concurrent request with this reference won. A retry that failed otherwise (the partner,
    // slow to issue for the first request, timed out for this one) while the first opened the
    // account is answered with it too, never with an error saying nothing was made.
    const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
    if (reasons.at(-1)?.Code !== 'ConditionalCheckFailed' && !request.reference) throw error;
    const winner = await getVirtualAccount(merchantId, reference).catch(() => undefined);
    if (!winner) throw error;
    return { account: asRetry(winner, request), created: false };
  }
}
