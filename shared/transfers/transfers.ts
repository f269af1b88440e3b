import { createHash } from 'node:crypto';
import { accountNamedBy, namesAccount } from '#shared/accounts/destination.ts';
import { BeneficiaryNotFound, getBeneficiary } from '#shared/beneficiaries/store.ts';
import { DuplicateReference, PartnerUnavailable, ValidationError } from '#shared/errors.ts';
import { CompanionConflict, debit, reverse } from '#shared/ledger/ledger.ts';
import { logger } from '#shared/logger.ts';
import { transferFee } from '#shared/money.ts';
import { sendTransfer, type TransferOutcome } from '#shared/partner/client.ts';
import {
  type Counterparty,
  changeStatus,
  getTransaction,
  putTransactionItem,
  statusChangeItem,
  type TransactionRecord,
  transactionRecord,
} from '#shared/transactions/store.ts';

export interface TransferRequest {
  reference: string;
  amount: number;
  beneficiary_id?: string;
  session_id?: string;
  account_number?: string;
  bank_code?: string;
  narration?: string;
}

/** The ledger entry id of a merchant's transfer: permanent, from the merchant's own reference. */
export function transferEntryId(merchantId: string, reference: string): string {
  return `transfer:${merchantId}:${reference}`;
}

/** The reference the partner knows a transfer by (merchant ids have no dot; references may). */
export function partnerReference(merchantId: string, reference: string): string {
  return `${merchantId}.${reference}`;
}

/** The merchant and reference behind a partner reference, or undefined if it is not one of ours. */
export function parsePartnerReference(value: string): { merchantId: string; reference: string } | undefined {
  const dot = value.indexOf('.');
  if (dot <= 0 || !value.startsWith('mer_')) return undefined;
  return { merchantId: value.slice(0, dot), reference: value.slice(dot + 1) };
}

/** The reference of the transaction that gives a failed transfer's money back. */
export function reversalReference(reference: string): string {
  return `reversal:${reference}`;
}

/** Identifies a request's parameters: the same reference with another fingerprint is a 409. */
function fingerprint(request: TransferRequest): string {
  const fields = [
    'amount',
    'beneficiary_id',
    'session_id',
    'account_number',
    'bank_code',
    'narration',
  ] as const;
  const canonical = JSON.stringify(fields.map((field) => [field, request[field] ?? null]));
  return createHash('sha256').update(canonical).digest('hex');
}

/** Exactly one destination form: a beneficiary, a validation session, or account + bank. */
async function destinationOf(merchantId: string, request: TransferRequest): Promise<Counterparty> {
  if (request.beneficiary_id !== undefined && namesAccount(request)) {
    throw new ValidationError([
      {
        field: 'beneficiary_id',
        message: 'Give exactly one of beneficiary_id, session_id, or account_number with bank_code',
      },
    ]);
  }
  const account =
    request.beneficiary_id !== undefined
      ? await getBeneficiary(merchantId, request.beneficiary_id)
      : await accountNamedBy(merchantId, request);
  if (!account) throw new BeneficiaryNotFound();
  return {
    account_name: account.account_name,
    account_number: account.account_number,
    bank_code: account.bank.code,
  };
}

/** A stored transfer for this reference, if the request is a retry of it; a 409 if it is not. */
function asRetry(existing: TransactionRecord, request: TransferRequest): TransactionRecord {
  if (existing.category !== 'transfer' || existing.fingerprint !== fingerprint(request))
    throw new DuplicateReference();
  return existing;
}

/**
 * Settles a pending transfer with the partner's verdict: success, or failed with its money given
 * back by a reversal entry in the same transaction as the status change. A transfer that is no
 * longer pending is left as it is, so a late or repeated verdict changes nothing.
 */
export async function settleTransfer(
  merchantId: string,
  reference: string,
  outcome: TransferOutcome,
): Promise<void> {
  if (outcome.status === 'pending') return;
  if (outcome.status === 'success') {
    await changeStatus(merchantId, reference, { from: 'pending', to: 'success' });
    return;
  }
  const transfer = await getTransaction(merchantId, reference);
  if (transfer?.status !== 'pending') return;
  try {
    await reverse(transfer.entry_id, {
      reference: reversalReference(reference),
      companions: (entry) => [
        statusChangeItem(merchantId, reference, {
          from: 'pending',
          to: 'failed',
          at: entry.created_at,
          reason: outcome.reason,
        }),
        putTransactionItem(
          transactionRecord(entry, {
            reference: reversalReference(reference),
            amount: entry.amount,
            fee: 0,
            status: 'success',
            narration: `Reversal of ${reference}: ${outcome.reason}`,
            counterparty: transfer.counterparty,
          }),
        ),
      ],
    });
  } catch (error) {
    // Settled by someone else in the meantime (the webhook, or a concurrent retry): nothing to do.
    if (!(error instanceof CompanionConflict)) throw error;
    logger.info('transfer already settled', { reference });
  }
}

/**
 * Hands a debited transfer to the partner under its permanent reference and settles it with the
 * answer. The partner is idempotent on that reference, so calling this again (a retry after a crash
 * between debit and partner call) can never pay twice. Unknown outcome: the transfer stays pending.
 */
async function dispatch(transfer: TransactionRecord): Promise<void> {
  if (transfer.status !== 'pending') return;
  const { merchant_id: merchantId, reference } = transfer;
  try {
    const outcome = await sendTransfer({
      reference: partnerReference(merchantId, reference),
      amount: transfer.amount,
      bank_code: transfer.counterparty.bank_code,
      account_number: transfer.counterparty.account_number,
      account_name: transfer.counterparty.account_name,
      narration: transfer.narration,
    });
    await settleTransfer(merchantId, reference, outcome);
  } catch (error) {
    if (!(error instanceof PartnerUnavailable)) throw error;
    logger.warn('transfer left pending: partner unavailable', { reference });
  }
}

/** A retried transfer as it stands now; a pending one is handed to the partner again first. */
async function resumed(transfer: TransactionRecord): Promise<TransactionRecord> {
  if (transfer.status !== 'pending') return transfer;
  await dispatch(transfer);
  return (await getTransaction(transfer.merchant_id, transfer.reference)) ?? transfer;
}

/**
 * Sends money out of a merchant's wallet. The reference is the idempotency key: a retry with the
 * same body returns the same transaction and never debits twice. The debit of amount + fee comes
 * first (atomic with its cover check), then the partner is asked, with our permanent reference.
 */
export async function createTransfer(
  merchantId: string,
  request: TransferRequest,
): Promise<{ transaction: TransactionRecord; created: boolean }> {
  const earlier = await getTransaction(merchantId, request.reference);
  if (earlier) return { transaction: await resumed(asRetry(earlier, request)), created: false };

  const counterparty = await destinationOf(merchantId, request);
  const fee = transferFee(request.amount);
  const entryId = transferEntryId(merchantId, request.reference);
  let applied: boolean;
  // The record as written with the debit (the last attempt's): handed to the partner without a re-read.
  let record: TransactionRecord | undefined;
  try {
    ({ applied } = await debit({
      entryId,
      merchantId,
      amount: request.amount + fee,
      category: 'transfer',
      reference: request.reference,
      companions: (entry) => {
        record = transactionRecord(entry, {
          reference: request.reference,
          amount: request.amount,
          fee,
          status: 'pending',
          narration: request.narration ?? null,
          counterparty,
          fingerprint: fingerprint(request),
        });
        return [putTransactionItem(record)];
      },
    }));
  } catch (error) {
    if (!(error instanceof CompanionConflict)) throw error;
    applied = false;
  }
  if (!applied || !record) {
    // A concurrent request with this reference got there first.
    const winner = await getTransaction(merchantId, request.reference);
    if (!winner) throw new Error(`transfer ${request.reference} applied without its record`);
    return { transaction: await resumed(asRetry(winner, request)), created: false };
  }

  await dispatch(record);
  const transaction = await getTransaction(merchantId, request.reference);
  if (!transaction) throw new Error(`transfer ${request.reference} vanished`);
  return { transaction, created: true };
}
