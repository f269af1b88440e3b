import { CONTRADICTED_SETTLEMENT } from '#shared/definitions/alerts.ts';
import { eventItem, newEvent } from '#shared/events/events.ts';
import { CompanionConflict, reverse } from '#shared/ledger/ledger.ts';
import { logger } from '#shared/logger.ts';
import { traceKeys } from '#shared/partner-webhooks/trace.ts';
import type { QueuedEvent, TransferOutcome, TransferSettled } from '#shared/partners/partner.ts';
import {
  afterStatusChange,
  changeStatus,
  getTransaction,
  putTransactionItem,
  type StatusChange,
  statusChangeItem,
  type TransactionRecord,
  type TransactionStatus,
  toApiTransaction,
  transactionRecord,
} from '#shared/transactions/store.ts';
import { transferOwner } from '#shared/transfers/references.ts';

/**
 * Settling transfers: the partner's final word on a transfer, from its answer to the send, a
 * webhook, or a requery, all through `settleTransfer`. Each status change is conditional on the
 * status it leaves, and a reversal's ledger entry is keyed by the transfer's own entry, so a late,
 * repeated or racing verdict changes nothing twice.
 */

/** The reference of the transaction that gives a failed or returned transfer's money back. */
export function reversalReference(reference: string): string {
  return `reversal:${reference}`;
}

/** The `transfer.<status>` event of a transfer's status change, written in the change's transaction. */
function transferEvent(
  transfer: TransactionRecord,
  change: StatusChange & { to: 'success' | 'failed' | 'reversed' },
) {
  const after = afterStatusChange(transfer, change);
  return eventItem(
    newEvent(
      transfer.merchant_id,
      `transfer.${change.to}`,
      { transaction: toApiTransaction(after) },
      change.at,
    ),
  );
}

/** The transfer as it is stored now (someone else settled it in the meantime). */
async function current(transfer: TransactionRecord): Promise<TransactionRecord> {
  return (await getTransaction(transfer.merchant_id, transfer.reference)) ?? transfer;
}

/**
 * Ends a transfer `to` failed or reversed, from one of `from`, giving `amount + fee` back by a
 * reversal entry in the same transaction as the status change.
 */
async function giveBack(
  transfer: TransactionRecord,
  change: {
    from: readonly TransactionStatus[];
    to: 'failed' | 'reversed';
    reason: string;
    dispatches?: number;
    failedBy?: string;
  },
): Promise<TransactionRecord> {
  if (!change.from.includes(transfer.status)) return transfer;
  const { merchant_id: merchantId, reference } = transfer;
  try {
    const { entry, applied } = await reverse(transfer.entry_id, {
      reference: reversalReference(reference),
      companions: (posted) => [
        statusChangeItem(merchantId, reference, { ...change, at: posted.created_at }),
        transferEvent(transfer, { ...change, at: posted.created_at }),
        putTransactionItem(
          transactionRecord(posted, {
            reference: reversalReference(reference),
            amount: posted.amount,
            fee: 0,
            status: 'success',
            narration: `Reversal of ${reference}: ${change.reason}`,
            counterparty: transfer.counterparty,
            partner: transfer.partner,
          }),
        ),
      ],
    });
    if (!applied) return current(transfer);
    return afterStatusChange(transfer, { ...change, at: entry.created_at });
  } catch (error) {
    // Settled by someone else in the meantime (a webhook, a requery, a retry), or handed to the
    // partner again since this answer (`dispatches`): nothing to do here.
    if (!(error instanceof CompanionConflict)) throw error;
    logger.info('transfer already settled, or sent again since', { reference });
    return current(transfer);
  }
}

/**
 * Whether the partner's word contradicts a settled status: paid after the transfer failed (its money
 * given back), or failed after it succeeded. Success after `reversed` is no contradiction: the two
 * verdicts of a returned transfer can arrive in either order (the queue does not keep order).
 */
function contradicts(status: TransactionStatus, outcome: TransferOutcome): boolean {
  if (outcome.status === 'success') return status === 'failed';
  return outcome.status === 'failed' && status === 'success';
}

function reportContradiction(
  transfer: TransactionRecord,
  outcome: TransferOutcome,
  amounts?: { amount: number; verdict_amount: number },
): void {
  logger.error(CONTRADICTED_SETTLEMENT, {
    merchant_id: transfer.merchant_id,
    reference: transfer.reference,
    partner_reference: transfer.partner_reference,
    status: transfer.status,
    verdict: outcome.status,
    ...amounts,
  });
}

/**
 * Settles a transfer with the partner's word and returns it as it now stands: `success` from
 * pending; `failed` from pending, and `reversed` from pending or success, each with the reversal.
 * A word that contradicts a settled status (also one found settled on the way), or that gives
 * another amount than the transfer's, changes nothing and is reported to operators. `dispatches`:
 * the answer came from that hand-over of the transfer (`recordDispatch`), so its money goes back
 * only if the transfer was not handed over again since. `failedBy`: the operator failing it by hand,
 * kept with it (`failed_by`).
 */
export async function settleTransfer(
  transfer: TransactionRecord,
  outcome: TransferOutcome,
  { dispatches, failedBy }: { dispatches?: number; failedBy?: string } = {},
): Promise<TransactionRecord> {
  if (outcome.status !== 'pending' && outcome.amount !== undefined && outcome.amount !== transfer.amount) {
    // Not the transfer we sent (a forged or garbled verdict): nothing changes by guess; the
    // requery asks again, and an operator looks.
    reportContradiction(transfer, outcome, { amount: transfer.amount, verdict_amount: outcome.amount });
    return transfer;
  }
  if (contradicts(transfer.status, outcome)) {
    reportContradiction(transfer, outcome);
    return transfer;
  }
  const settled = await settleFrom(transfer, outcome, { dispatches, failedBy });
  // The record given was stale (settled meanwhile by a webhook, the requery, a retry): checked again.
  if (settled.status !== transfer.status && contradicts(settled.status, outcome)) {
    reportContradiction(settled, outcome);
  }
  return settled;
}

async function settleFrom(
  transfer: TransactionRecord,
  outcome: TransferOutcome,
  { dispatches, failedBy }: { dispatches?: number; failedBy?: string },
): Promise<TransactionRecord> {
  switch (outcome.status) {
    case 'pending':
      return transfer;
    case 'success': {
      if (transfer.status !== 'pending') return transfer;
      const change = { from: ['pending'], to: 'success', at: new Date().toISOString() } as const;
      const changed = await changeStatus(transfer.merchant_id, transfer.reference, change, [
        transferEvent(transfer, change),
      ]);
      return changed ? afterStatusChange(transfer, change) : current(transfer);
    }
    case 'failed':
      return giveBack(transfer, {
        from: ['pending'],
        to: 'failed',
        reason: outcome.reason,
        dispatches,
        failedBy,
      });
    case 'reversed':
      return giveBack(transfer, {
        from: ['pending', 'success'],
        to: 'reversed',
        reason: outcome.reason,
        dispatches,
      });
  }
}

/** A partner's word on a transfer from its webhook: settles it once; a reference not ours is only logged. */
export function receiveTransferSettled(event: QueuedEvent & TransferSettled): Promise<void> {
  // Every line of the settlement, a contradiction's included, leads back to the delivery and the
  // webhook request that carried the verdict (the consumer's batch settles others beside it).
  return logger.withKeys(traceKeys(event), async () => {
    const owner = await transferOwner(event.partner, event.reference);
    const transfer = owner && (await getTransaction(owner.merchant_id, owner.reference));
    if (!transfer) {
      logger.warn('transfer verdict for an unknown reference');
      return;
    }
    await settleTransfer(transfer, event.outcome);
  });
}
