import { PartnerUnavailable } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { partner } from '#shared/partners/registry.ts';
import { getTransaction, recordDispatch, type TransactionRecord } from '#shared/transactions/store.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';

/**
 * Hands a debited transfer to the partner under its permanent reference and settles it with the
 * answer; returns the transfer as it then stands. The partner is idempotent on that reference, so
 * a resend can never pay twice. Each hand-over is counted first (`recordDispatch`, only while the
 * transfer is pending), and an answer that gives the money back applies only if no other
 * hand-over was counted since: a refusal of one send never refunds a transfer another send may
 * still be making. A resend (`retry`, or any hand-over after the first) also tells the partner, so
 * a refusal it cannot back with the transfer's own state leaves it pending (`TransferOrder.resend`).
 * Unknown outcome: the transfer stays pending until a webhook or the requery settles it.
 */
export async function dispatchTransfer(
  transfer: TransactionRecord,
  { retry = false } = {},
): Promise<TransactionRecord> {
  const bank = partner();
  const dispatch = await recordDispatch(transfer.merchant_id, transfer.reference);
  if (dispatch === undefined) {
    // Settled since it was read (a webhook, the requery, another request): nothing to send.
    return (await getTransaction(transfer.merchant_id, transfer.reference)) ?? transfer;
  }
  try {
    const outcome = await bank.sendTransfer({
      resend: retry || dispatch > 1,
      reference:
        transfer.partner_reference ?? bank.transferReference(transfer.merchant_id, transfer.reference),
      amount: transfer.amount,
      bank_code: transfer.counterparty.bank_code,
      account_number: transfer.counterparty.account_number,
      account_name: transfer.counterparty.account_name,
      narration: transfer.narration,
    });
    return await settleTransfer(transfer, outcome, { dispatches: dispatch });
  } catch (error) {
    if (!(error instanceof PartnerUnavailable)) throw error;
    logger.warn('transfer left pending: partner unavailable', { reference: transfer.reference });
    return transfer;
  }
}
