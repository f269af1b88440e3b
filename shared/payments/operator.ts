import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type AccountOwner, ownerOf } from '#shared/accounts/owners.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { scanAll } from '#shared/aws/scan.ts';
import { retryingConflicts } from '#shared/aws/transactions.ts';
import { config } from '#shared/config.ts';
import {
  BalanceCeiling,
  CompanionConflict,
  claimItem,
  credit,
  EntryClaimed,
  getEntry,
  type LedgerEntry,
  PastExactIntegers,
} from '#shared/ledger/ledger.ts';
import { logger } from '#shared/logger.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import type { PaymentReceived } from '#shared/partners/partner.ts';
import {
  creditedPaymentItems,
  creditIntoVirtualAccount,
  paymentEntryId,
  paymentReference,
  REUSED_PAYMENT_ID,
  REUSED_RETURNED_ID,
} from '#shared/payments/credit.ts';
import {
  creditedUnder,
  findUnmatched,
  type Resolution,
  resolutionUpdate,
  returnedTwinOf,
  statusOf,
  surelyAnotherPayment,
  type UnmatchedRecord,
  unmatchedId,
} from '#shared/payments/unmatched.ts';

/**
 * What operators do with the payments nobody could be credited for (`unmatched-payments`): credit
 * one to a merchant through the ledger, or record that it was returned to the payer. Either is
 * done once, with the operator's reason, and only while the payment is still unresolved.
 */

export type OperatorRefusal =
  | 'not_found'
  | 'ambiguous'
  | 'already_resolved'
  | 'already_credited'
  | 'already_returned'
  | 'unknown_merchant'
  | 'not_creditable'
  | 'over_max_balance'
  | 'not_the_owner'
  | 'past_exact_integers'
  | 'reason_required';

/** Why an operator's request was refused; nothing was written. */
export class OperatorError extends Error {
  constructor(
    readonly code: OperatorRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** Who did it and why: kept on the payment's record. */
export interface OperatorAction {
  reason: string;
  by: string;
}

/** The one kept payment an operator's id names, unresolved. */
async function openPayment(id: string, action: OperatorAction): Promise<UnmatchedRecord> {
  if (!action.reason.trim())
    throw new OperatorError('reason_required', 'a reason is required (the audit trail)');
  const found = await findUnmatched(id);
  const [record] = found;
  if (!record) throw new OperatorError('not_found', `no unmatched payment ${id}`);
  if (found.length > 1) {
    throw new OperatorError(
      'ambiguous',
      `${id} names ${found.length} different payments (the partner reused its id): give one of ${found
        .map(unmatchedId)
        .join(', ')}`,
    );
  }
  return assertOpen(record);
}

function assertOpen(record: UnmatchedRecord): UnmatchedRecord {
  if (record.status) {
    throw new OperatorError(
      'already_resolved',
      `${unmatchedId(record)} was ${record.status} already (${record.resolved_at}, by ${record.resolved_by}: ${record.resolution_reason})`,
    );
  }
  return record;
}

/** Throws if the payment was resolved since it was read (by another operator). */
async function assertStillOpen(record: UnmatchedRecord): Promise<void> {
  const [now] = await findUnmatched(unmatchedId(record));
  if (now) assertOpen(now);
}

/**
 * The ledger entry id and reference a kept payment is credited under: the payment's usual ones, or
 * for a payment that reused the partner id of another, ones of their own: `payment-reused:` and its
 * fingerprint. Not `payment:`, whose ids the partner's own ids make: a partner payment whose id
 * happened to be `<id>#<fingerprint>` would be taken for it. A payment reused the id when it was
 * kept for that (the other credited or returned by then), or when the usual id was since taken by
 * surely another payment (`takenByTwin`): two payments both kept, say, the first resolved taking
 * the usual id. A usual id the consumer credited for this payment's amount stays this payment's own.
 */
async function creditEntryOf(record: UnmatchedRecord, event: PaymentReceived) {
  const usual = { entryId: paymentEntryId(event), reference: paymentReference(event), reused: false };
  if (!isReuse(record) && !(await takenByTwin(event, usual.entryId))) return usual;
  return {
    entryId: `${REUSED_PREFIX}${event.partner}:${event.payment_id}#${record.variant}`,
    reference: `${REUSED_PREFIX}${event.payment_id}#${record.variant}`,
    reused: true,
  };
}

/** Kept because its partner id was another payment's, credited or returned. */
function isReuse(record: UnmatchedRecord): boolean {
  return record.reason.startsWith(REUSED_PAYMENT_ID) || record.reason.startsWith(REUSED_RETURNED_ID);
}

/**
 * Whether another payment surely took `entryId`: a credit of another amount, or an operator's credit
 * or return of a kept payment that is surely another (`surelyAnotherPayment`). A credit the consumer
 * made of the same amount may be this payment's own (a redelivery naming its account otherwise):
 * taken as such, never risked as a second credit.
 */
async function takenByTwin(event: PaymentReceived, entryId: string): Promise<boolean> {
  try {
    const entry = await getEntry(entryId);
    if (!entry) return false;
    if (entry.amount !== event.amount) return true;
    for (const credited of await creditedUnder(event, entryId)) {
      if (await surelyAnotherPayment(credited.event, event)) return true;
    }
    return false;
  } catch (error) {
    if (!(error instanceof EntryClaimed)) throw error;
    return (await returnedTwinOf(event, error.claim)) !== undefined;
  }
}

/** What the entry ids and references of reused partner ids' payments begin with. */
const REUSED_PREFIX = 'payment-reused:';

/**
 * The ledger entry id under which a kept payment would be credited, by an operator or by a
 * redelivery (`entryFor`): what returning it claims, so that it is never credited as well. An
 * unreadable delivery that names a payment id: that payment's usual id (a readable redelivery
 * would be credited under it). None where no money can be credited: a refused attempt, a delivery
 * about a transfer or naming nothing.
 */
async function creditIdOf(record: UnmatchedRecord): Promise<string | undefined> {
  const { event } = record;
  if (event.type === 'PaymentReceived') return (await creditEntryOf(record, event)).entryId;
  if (
    event.type === 'DeliveryUnusable' &&
    event.partner_id &&
    !/^(transfer|rejected):/.test(event.partner_id)
  )
    return paymentEntryId({ partner: event.partner, payment_id: event.partner_id });
  return undefined;
}

/**
 * The ledger entry and reference of an operator's credit: the payment's usual entry id
 * (`payment:<partner>:<id>`), so that a later redelivery of the same payment finds it applied and
 * credits nothing. Only a payment kept because the partner reused the id of another, credited
 * payment gets one of its own, `payment-reused:…` with its fingerprint (`creditEntryOf`). A kept
 * payment whose entry exists was credited since (a redelivery, or another operator): never credited
 * again, whichever merchant the operator names.
 */
async function entryFor(record: UnmatchedRecord, event: PaymentReceived) {
  const entry = await creditEntryOf(record, event);
  const existing = await getEntry(entry.entryId);
  if (!existing) return entry;
  // Another operator's credit of this very record, committed since it was read: say so.
  await assertStillOpen(record);
  throw new OperatorError(
    'already_credited',
    `${entry.entryId} credited ${existing.amount} kobo to ${existing.merchant_id} already (${existing.created_at}): not credited twice; return it or investigate`,
  );
}

/** Whose account a kept payment was paid into, as an operator reads it. */
export interface AccountOwnerView {
  merchant_id: string;
  kind: AccountOwner['kind'];
  virtual_account_reference: string | null;
}

/**
 * The merchant whose wallet or virtual account a kept payment was paid into, when the service knows
 * the account (a payment held by a bound, a reused id's twin); null when nobody's (an unknown
 * account number), and for refused attempts and unusable deliveries.
 */
export async function accountOwnerOf(record: UnmatchedRecord): Promise<AccountOwnerView | null> {
  const { event } = record;
  return event.type === 'PaymentReceived' ? viewOf(await ownerOf(event.partner, event.account_ids)) : null;
}

function viewOf(owner: AccountOwner | undefined): AccountOwnerView | null {
  return owner
    ? { merchant_id: owner.merchant_id, kind: owner.kind, virtual_account_reference: owner.reference ?? null }
    : null;
}

/** An account as an operator reads it: `mer_… (wallet)`, `mer_… (virtual account va-…)`. */
export function ownerText(owner: AccountOwnerView): string {
  return owner.kind === 'wallet'
    ? `${owner.merchant_id} (wallet)`
    : `${owner.merchant_id} (virtual account ${owner.virtual_account_reference ?? ''})`;
}

/**
 * Credits a kept payment to a merchant, once: one ledger transaction puts the entry, the
 * transaction record in the merchant's history, its `payment.received` event, and the payment's
 * resolution (conditional on it being unresolved); for a payment into the merchant's own virtual
 * account, also the payment on the account, its total and `virtual_account.paid` (`accountPaid`).
 * Amounts must be whole kobo within exact integers; a credit that would take the balance past
 * MAX_BALANCE is refused unless `allowPastMaxBalance`; a payment into another merchant's account
 * unless `notTheOwner` (there is no operator debit to take a slip back).
 */
export async function creditUnmatched(
  id: string,
  request: OperatorAction & { merchantId: string; allowPastMaxBalance?: boolean; notTheOwner?: boolean },
): Promise<{ record: UnmatchedRecord; entry: LedgerEntry }> {
  const record = await openPayment(id, request);
  const event = record.event;
  if (event.type === 'DeliveryUnusable') {
    throw new OperatorError(
      'not_creditable',
      `${unmatchedId(record)} is a delivery the service could not read (${event.reason}): confirm the payment with the partner, who must deliver it again, or mark it returned`,
    );
  }
  if (event.type !== 'PaymentReceived') {
    throw new OperatorError(
      'not_creditable',
      `${unmatchedId(record)} is a payment the partner refused and returned to the payer: nothing arrived to credit (mark it returned)`,
    );
  }
  if (!Number.isSafeInteger(event.amount) || event.amount <= 0) {
    throw new OperatorError(
      'not_creditable',
      `${unmatchedId(record)} has no whole positive amount (${event.amount})`,
    );
  }
  if (!(await getMerchant(request.merchantId)))
    throw new OperatorError('unknown_merchant', `no merchant ${request.merchantId}`);
  // Paid into a known merchant's account: crediting someone else is a decision said out loud, never
  // a slip of the merchant id (there is no operator debit to take it back).
  // Read once: the same owner says whose account it is and, theirs, which account to write it to.
  const owner = await ownerOf(event.partner, event.account_ids);
  const view = viewOf(owner);
  if (view && view.merchant_id !== request.merchantId && !request.notTheOwner) {
    throw new OperatorError(
      'not_the_owner',
      `${unmatchedId(record)} was paid into an account of ${ownerText(view)}, not of ${request.merchantId}`,
    );
  }
  const { entryId, reference, reused } = await entryFor(record, event).catch((error: unknown) =>
    returnedMeanwhile(record, error),
  );
  const resolution: Resolution = {
    status: 'credited',
    at: new Date().toISOString(),
    by: request.by,
    reason: request.reason,
    merchant_id: request.merchantId,
    entry_id: entryId,
  };
  const resolutionItem = { Update: resolutionUpdate(record, resolution) };
  const into = reused ? undefined : accountPaid(owner, request.merchantId);
  try {
    const { entry, applied } = into
      ? await creditIntoVirtualAccount(event, into, {
          allowPastMaxBalance: request.allowPastMaxBalance,
          first: () => [resolutionItem],
        })
      : await credit({
          entryId,
          merchantId: request.merchantId,
          amount: event.amount,
          category: 'payment',
          reference,
          allowPastMaxBalance: request.allowPastMaxBalance,
          companions: (posted) => [
            ...creditedPaymentItems(posted, event, { reference, virtualAccount: null }),
            resolutionItem,
          ],
        });
    if (!applied) {
      // Another operator's credit of this payment, or a redelivery of it, was applied first.
      await assertStillOpen(record);
      throw new OperatorError(
        'already_credited',
        `${entryId} was credited to ${entry.merchant_id} meanwhile: not credited twice`,
      );
    }
    logger.info('unmatched payment credited by an operator', {
      payment: unmatchedId(record),
      merchant_id: request.merchantId,
      entry_id: entryId,
      by: request.by,
    });
    return { record: resolved(record, resolution), entry };
  } catch (error) {
    if (error instanceof BalanceCeiling) {
      throw new OperatorError(
        'over_max_balance',
        `crediting ${event.amount} kobo would take the balance of ${request.merchantId} to ${error.balanceAfter}, past MAX_BALANCE (${config.limits.maxBalance})`,
      );
    }
    if (error instanceof PastExactIntegers) {
      throw new OperatorError(
        'past_exact_integers',
        `crediting ${event.amount} kobo would take the balance of ${request.merchantId} to ${error.balanceAfter}, past exact integers: never posted`,
      );
    }
    // The resolution's condition failed: another operator resolved it first.
    if (error instanceof CompanionConflict) await assertStillOpen(record);
    return returnedMeanwhile(record, error);
  }
}

/**
 * The virtual account a kept payment paid, when it is credited to the merchant that owns it: the
 * account then shows it, as if the consumer had credited it. Not for a reused id's twin (the account
 * has the first payment under that id), nor for another merchant (the money goes to their wallet).
 */
function accountPaid(owner: AccountOwner | undefined, merchantId: string): AccountOwner | undefined {
  return owner?.kind === 'virtual_account' && owner.merchant_id === merchantId ? owner : undefined;
}

/**
 * A credit that found its entry id claimed: another operator returned the payment meanwhile (this
 * one, or a record naming the same payment). Refused, as a credit of a returned payment is.
 */
async function returnedMeanwhile(record: UnmatchedRecord, error: unknown): Promise<never> {
  if (!(error instanceof EntryClaimed)) throw error;
  await assertStillOpen(record);
  throw new OperatorError('already_returned', `${error.message}: not credited`);
}

/**
 * Records that a kept payment was returned to the payer (outside the service): no money moves; once,
 * and only while it is unresolved and was never credited. In the same transaction the ledger id it
 * would be credited under is claimed (`claimItem`): a payment credited since it was kept (a
 * redelivery once its account was known, or its merchant's balance lower) is refused here, and a
 * payment returned here is never credited by a later redelivery. Either way it cannot be both.
 */
export async function returnUnmatched(id: string, action: OperatorAction): Promise<UnmatchedRecord> {
  const record = await openPayment(id, action);
  const resolution: Resolution = { status: 'returned', at: new Date().toISOString(), ...action };
  const claimed = await creditIdOf(record);
  try {
    // A credit of the same payment at the same moment cancels this with TransactionConflict, unwritten.
    await retryingConflicts(() =>
      dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: resolutionUpdate(record, resolution) },
            ...(claimed
              ? [
                  claimItem(claimed, {
                    reason: `returned to its payer (${unmatchedId(record)}): ${action.reason}`,
                    at: resolution.at,
                    by: action.by,
                  }),
                ]
              : []),
          ],
        }),
      ),
    );
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    const [resolutionReason, claimReason] = error.CancellationReasons ?? [];
    if (claimReason?.Code === 'ConditionalCheckFailed' && claimed) {
      await assertStillOpen(record);
      // Claimed by the return of another record naming the same payment: returned already.
      const entry = await getEntry(claimed).catch((claim: unknown) => returnedMeanwhile(record, claim));
      throw new OperatorError(
        'already_credited',
        `${claimed} was credited ${entry?.amount} kobo to ${entry?.merchant_id} (${entry?.created_at}) ${creditedBy(entry?.created_at, record).when}: it is the merchant's now, not to be returned`,
      );
    }
    if (resolutionReason?.Code === 'ConditionalCheckFailed') {
      await assertStillOpen(record);
      throw new OperatorError('not_found', `no unmatched payment ${id}`);
    }
    throw error;
  }
  logger.info('unmatched payment marked returned by an operator', {
    payment: unmatchedId(record),
    by: action.by,
  });
  return resolved(record, resolution);
}

/** The record as a resolution leaves it. */
function resolved(record: UnmatchedRecord, { at, by, reason, ...rest }: Resolution): UnmatchedRecord {
  return { ...record, ...rest, resolved_at: at, resolved_by: by, resolution_reason: reason };
}

/** A kept payment as operators see it (the CLI's `--json` output). */
export function toOperatorView(record: UnmatchedRecord) {
  const { event } = record;
  return {
    id: unmatchedId(record),
    status: statusOf(record),
    reason: record.reason,
    kind:
      event.type === 'PaymentReceived'
        ? 'payment'
        : event.type === 'PaymentRejected'
          ? 'refused_attempt'
          : 'unusable_delivery',
    partner: event.partner,
    // An unusable delivery has no amount or account the service could read: its body is kept.
    amount: event.type === 'DeliveryUnusable' ? null : event.amount,
    account_number: event.type === 'PaymentReceived' ? event.account_number : null,
    // A refused attempt's aliases too (the customer's email): often all that names its account.
    account_ids:
      event.type === 'DeliveryUnusable'
        ? []
        : [...event.account_ids, ...(event.type === 'PaymentRejected' ? (event.alias_ids ?? []) : [])],
    sender: event.type === 'PaymentReceived' ? event.sender : null,
    // What an operator reads an unusable delivery by, to confirm it with the partner.
    delivery:
      event.type === 'DeliveryUnusable'
        ? {
            partner_event: event.partner_event,
            body: event.body,
            body_bytes: event.body_bytes,
            body_sha256: event.body_sha256,
          }
        : null,
    received_at: record.received_at,
    resolved_at: record.resolved_at ?? null,
    resolved_by: record.resolved_by ?? null,
    resolution_reason: record.resolution_reason ?? null,
    merchant_id: record.merchant_id ?? null,
    entry_id: record.entry_id ?? null,
  };
}

/**
 * Every kept payment (a scan: the table holds exceptions only), oldest first. Operators only: no
 * function may scan (and none is granted Scan).
 */
export async function listUnmatched(): Promise<UnmatchedRecord[]> {
  const items = await scanAll<UnmatchedRecord>({
    TableName: tableName('unmatchedPayments'),
    ConsistentRead: true,
  });
  const shown = await Promise.all(items.map(asItStands));
  return shown.sort(
    (a, b) => a.received_at.localeCompare(b.received_at) || unmatchedId(a).localeCompare(unmatchedId(b)),
  );
}

/**
 * How a kept payment's ledger id came to be credited without an operator: by a delivery of the same
 * payment before it was kept (a redelivery the partner's reading took no longer, its id read under a
 * stricter rule since), or by a redelivery since; as a refusal says it, and as the list shows it.
 */
function creditedBy(creditedAt: string | undefined, record: UnmatchedRecord) {
  return creditedAt !== undefined && creditedAt < record.received_at
    ? {
        when: 'before it was kept, by an earlier delivery of the payment',
        by: 'an earlier delivery of the payment',
        reason: 'credited before this delivery was kept, by an earlier one of the same payment id',
      }
    : {
        when: 'since it was kept, by a redelivery of the payment',
        by: 'a redelivery of the payment',
        reason: 'credited when the partner delivered it again',
      };
}

/**
 * A kept payment as it stands: one still unresolved whose ledger id a redelivery has credited
 * since (its account became known, or its merchant's balance fell below MAX_BALANCE) is shown
 * credited, to whom and when, by a redelivery: there is nothing left to resolve (credit and return
 * both refuse it). Shown only; the record itself is an operator's to resolve and stays as kept.
 */
async function asItStands(record: UnmatchedRecord): Promise<UnmatchedRecord> {
  const entryId = record.status ? undefined : await creditIdOf(record);
  // A claim (a return's, committed since the scan) is no credit: the record then reads returned.
  const entry = entryId
    ? await getEntry(entryId).catch((error: unknown) => {
        if (error instanceof EntryClaimed) return undefined;
        throw error;
      })
    : undefined;
  if (!entry) return record;
  const { by, reason } = creditedBy(entry.created_at, record);
  return {
    ...record,
    status: 'credited',
    resolved_at: entry.created_at,
    resolved_by: by,
    resolution_reason: reason,
    merchant_id: entry.merchant_id,
    entry_id: entry.entry_id,
  };
}
