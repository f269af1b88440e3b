import { PartnerUnavailable } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { partner } from '#shared/partners/registry.ts';
import type { TransactionRecord } from '#shared/transactions/store.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';

/**
 * Hands a debited transfer to the partner under its permanent reference and settles it with the
 * answer; returns the transfer as it then stands. The partner is idempotent on that reference, so
 * a resend (a retry after a crash between debit and partner call) can never pay twice, and a
 * refused resend is never final while the partner does not show the transfer
 * (`TransferOrder.resend`). Unknown outcome: the transfer stays pending until a webhook or the
 * requery settles it.
 */
export async function dispatchTransfer(
  transfer: TransactionRecord,
  { resend = false } = {},
): Promise<TransactionRecord> {
  const bank = partner();
  try {
    const outcome = await bank.sendTransfer({
      resend,
      reference:
        transfer.partner_reference ?? bank.transferReference(transfer.merchant_id, transfer.reference),
      amount: transfer.amount,
      bank_code: transfer.counterparty.bank_code,
      account_number: transfer.counterparty.account_number,
      account_name: transfer.counterparty.account_name,
      narration: transfer.narration,
    });
    return await settleTransfer(transfer, outcome);
  } catch (error) {
    if (!(error instanceof PartnerUnavailable)) throw error;
    logger.warn('transfer left pending: partner unavailable', { reference: transfer.reference });
    return transfer;
  }
}
