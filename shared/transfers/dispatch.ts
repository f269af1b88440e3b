import { PartnerUnavailable } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { partner } from '#shared/partners/registry.ts';
import {
  getTransaction,
  recordDispatch,
  releaseDispatch,
  type TransactionRecord,
} from '#shared/transactions/store.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';

/**
 * How long a hand-over holds resends off: longer than any send can take (every function that sends
 * stops within 30 s: create-transfer's Lambda timeout is 10 s, API Gateway's integration limit 29 s).
 * A new transfer is written with the hold already on (`createTransfer`), since its own request
 * sends it next: a retry landing in between does not send it alongside.
 */
export const SEND_HOLD_MS = 60_000;

/**
 * Hands a debited transfer to the partner under its permanent reference and settles it with the
 * answer; returns the transfer as it then stands. The partner is idempotent on that reference, so
 * a resend can never pay twice. Each hand-over is counted first (`recordDispatch`, only while the
 * transfer is pending), and an answer that gives the money back applies only if no other
 * hand-over was counted since: a refusal of one send never refunds a transfer another send may
 * still be making. A resend (`retry`, or any hand-over after the first) also tells the partner, so
 * a refusal it cannot back with the transfer's own state leaves it pending (`TransferOrder.resend`).
 * A retry resends only when it can help: not within `SEND_HOLD_MS` of an earlier send, which may
 * still be on its way or was answered (the partner has the transfer); at once after a send whose
 * answer never came (the partner unavailable). Otherwise it answers the transfer as it stands.
 * Unknown outcome: the transfer stays pending until a webhook or the requery settles it.
 */
export async function dispatchTransfer(
  transfer: TransactionRecord,
  { retry = false } = {},
): Promise<TransactionRecord> {
  const bank = partner();
  const { merchant_id: merchantId, reference } = transfer;
  const dispatch = await recordDispatch(merchantId, reference, {
    holdUntil: Date.now() + SEND_HOLD_MS,
    idleOnly: retry,
  });
  if (dispatch === undefined) {
    // Settled since it was read (a webhook, the requery, another request), or another send is on
    // its way or already answered: nothing to send.
    return (await getTransaction(merchantId, reference)) ?? transfer;
  }
  try {
    const outcome = await bank.sendTransfer({
      resend: retry || dispatch > 1,
      reference: transfer.partner_reference ?? bank.transferReference(merchantId, reference),
      amount: transfer.amount,
      bank_code: transfer.counterparty.bank_code,
      account_number: transfer.counterparty.account_number,
      account_name: transfer.counterparty.account_name,
      narration: transfer.narration,
    });
    return await settleTransfer(transfer, outcome, { dispatches: dispatch });
  } catch (error) {
    if (!(error instanceof PartnerUnavailable)) throw error;
    logger.warn('transfer left pending: partner unavailable', { reference });
    await releaseDispatch(merchantId, reference, dispatch);
    return transfer;
  }
}
