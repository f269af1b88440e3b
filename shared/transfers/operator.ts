import { logger } from '#shared/logger.ts';
import { getTransaction, type TransactionRecord } from '#shared/transactions/store.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';

/**
 * What an operator may do with a transfer the service cannot settle by itself (README, alarms
 * runbook): one the partner refuses to make and will not show, or one pending with a partner the
 * deployment no longer uses. The service never fails a transfer by guess; an operator who checked
 * with the partner that it was never made ends it `failed`, its money given back through the
 * ledger, as the partner's own refusal would.
 */

/** How long after its last hand-over to the partner a transfer may be failed: no send is still on its way. */
export const QUIET_AFTER_SEND_MS = 15 * 60 * 1000;

export class TransferOperatorError extends Error {
  constructor(
    readonly code: 'not_found' | 'not_pending' | 'recently_sent',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Ends a pending transfer `failed` with `reason` (shown to the merchant) and gives `amount + fee`
 * back, by exactly the code a partner's refusal takes. Refused while a send may still be on its way
 * (handed over less than `QUIET_AFTER_SEND_MS` ago; a Lambda lives 15 minutes at most), and if the
 * transfer is handed over again or settled while this runs (the change is conditional on both).
 */
export async function failTransfer(
  merchantId: string,
  reference: string,
  { reason, by, now = Date.now() }: { reason: string; by: string; now?: number },
): Promise<TransactionRecord> {
  const transfer = await getTransaction(merchantId, reference);
  if (transfer?.category !== 'transfer')
    throw new TransferOperatorError('not_found', `no transfer ${reference} of merchant ${merchantId}`);
  if (transfer.status !== 'pending')
    throw new TransferOperatorError(
      'not_pending',
      `transfer ${reference} is ${transfer.status}: only a pending transfer can be failed`,
    );
  const lastSent = Math.max(Date.parse(transfer.created_at), transfer.dispatched_at ?? 0);
  if (now - lastSent < QUIET_AFTER_SEND_MS)
    throw new TransferOperatorError(
      'recently_sent',
      `transfer ${reference} was handed to the partner at ${new Date(lastSent).toISOString()}: a send may still be on its way; try again after ${new Date(lastSent + QUIET_AFTER_SEND_MS).toISOString()}`,
    );
  const settled = await settleTransfer(
    transfer,
    { status: 'failed', reason },
    { dispatches: transfer.dispatches ?? 0 },
  );
  if (settled.status === 'pending')
    throw new TransferOperatorError(
      'recently_sent',
      `transfer ${reference} was handed to the partner again while this ran: nothing changed; try again later`,
    );
  if (settled.status !== 'failed' || settled.failure_reason !== reason)
    throw new TransferOperatorError(
      'not_pending',
      `transfer ${reference} was settled ${settled.status} while this ran: nothing changed`,
    );
  logger.warn('transfer failed by an operator', {
    merchant_id: merchantId,
    reference,
    partner: transfer.partner,
    partner_reference: transfer.partner_reference,
    reason,
    by,
  });
  return settled;
}
