import { accountNamedBy, namesAccount } from '#shared/accounts/destination.ts';
import { BeneficiaryNotFound, getBeneficiary } from '#shared/beneficiaries/store.ts';
import { sha256Hex } from '#shared/crypto/digest.ts';
import { DuplicateReference, ValidationError } from '#shared/errors.ts';
import { CompanionConflict, debit } from '#shared/ledger/ledger.ts';
import { transferFee } from '#shared/money.ts';
import { partner } from '#shared/partners/registry.ts';
import {
  type Counterparty,
  getTransaction,
  putTransactionItem,
  type TransactionRecord,
  transactionRecord,
} from '#shared/transactions/store.ts';
import { dispatchTransfer } from '#shared/transfers/dispatch.ts';
import { transferReferenceItem } from '#shared/transfers/references.ts';

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
  return sha256Hex(canonical);
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
 * A retried transfer as it stands now; a pending one is handed to the partner again, under the same
 * reference (the partner answers a resend with the transfer it has, never a second payment), unless
 * the partner said it has it a moment ago (`dispatchTransfer`).
 */
async function resumed(transfer: TransactionRecord): Promise<TransactionRecord> {
  return transfer.status === 'pending' ? dispatchTransfer(transfer, { retry: true }) : transfer;
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

  const bank = partner();
  let counterparty: Counterparty;
  try {
    counterparty = await destinationOf(merchantId, request);
    await bank.checkBank(counterparty.bank_code);
  } catch (error) {
    // A retry whose own checks failed (the partner, slow to name the account for the first request,
    // timed out for this one) while the first request, still running, made the transfer: answered
    // with the transfer as it stands, as the concurrent request below is, never with a 503 that
    // tells the client nothing was made (it would pay again under another reference).
    const made = await getTransaction(merchantId, request.reference).catch(() => undefined);
    if (made) return { transaction: asRetry(made, request), created: false };
    throw error;
  }
  const fee = transferFee(request.amount);
  const entryId = transferEntryId(merchantId, request.reference);
  const partnerReference = bank.transferReference(merchantId, request.reference);
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
          partner: bank.name,
          partner_reference: partnerReference,
          pending_partner: bank.name,
        });
        return [
          putTransactionItem(record),
          transferReferenceItem(bank.name, partnerReference, {
            merchant_id: merchantId,
            reference: request.reference,
          }),
        ];
      },
    }));
  } catch (error) {
    if (!(error instanceof CompanionConflict)) throw error;
    applied = false;
  }
  if (!applied || !record) {
    // A concurrent request with this reference got there first, and hands the transfer to the
    // partner itself: answered as it stands, never sent a second time alongside.
    const winner = await getTransaction(merchantId, request.reference);
    if (!winner) throw new Error(`transfer ${request.reference} applied without its record`);
    return { transaction: asRetry(winner, request), created: false };
  }

  return { transaction: await dispatchTransfer(record), created: true };
}
