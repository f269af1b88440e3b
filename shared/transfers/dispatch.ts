import { PartnerUnavailable, TransferNotSent } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import type { TransferOutcome } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';
import {
  type Dispatch,
  getTransaction,
  holdResends,
  keepRefusal,
  markUnposted,
  recordDispatch,
  type TransactionRecord,
} from '#shared/transactions/store.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';

/**
 * How long after the partner's first pending answer a retry does not send a transfer again: a
 * resend could only be refused as a duplicate. A minute, so a merchant polling by retrying costs
 * the partner at most one call a minute per transfer. Each further hand-over doubles it, up to an
 * hour (`resendHoldMs`): a transfer the partner keeps refusing to show (the requery resends those)
 * is not sent every round for ever.
 */
const RESEND_HOLD_MS = 60_000;
const MAX_RESEND_HOLD_MS = 64 * RESEND_HOLD_MS;

/** The hold after the `dispatch`-th hand-over answered pending: 1, 2, 4 … 64 minutes. */
export function resendHoldMs(dispatch: number): number {
  return Math.min(RESEND_HOLD_MS * 2 ** Math.max(0, dispatch - 1), MAX_RESEND_HOLD_MS);
}

/**
 * Hands a debited transfer to the partner under its permanent reference and settles it with the
 * answer; returns the transfer as it then stands. The partner is idempotent on that reference, so
 * a resend can never pay twice. Each hand-over is counted first (`recordDispatch`, only while the
 * transfer is pending), and an answer that gives the money back applies only if no other
 * hand-over was counted since: a refusal of one send never refunds a transfer another send may
 * still be making. A resend (a hand-over after one that may have reached the partner, i.e. not
 * marked as never sent: `markUnposted`) also tells the partner, so a refusal it cannot back with
 * the transfer's own state leaves it pending (`TransferOrder.resend`). A retry
 * does not resend within a hold after a hand-over that the partner answered pending or that failed
 * (a timeout, a 5xx: `resendHoldMs`); after a send that crashed it resends at once. Otherwise it
 * answers the transfer as it stands. Unknown outcome: the transfer stays pending until a webhook or the requery
 * settles it.
 */
export async function dispatchTransfer(
  transfer: TransactionRecord,
  { retry = false } = {},
): Promise<TransactionRecord> {
  return (await handOver(transfer, { retry })).transfer;
}

/**
 * A pending transfer the partner says it does not know, handed to it again as a retry would (the
 * requery: API.md §7, "a lost webhook never leaves money held"; it was never sent, or its send was
 * lost on the way). `sent` is false when nothing was sent (held, settled meanwhile, or sent through
 * another partner).
 */
export function resendTransfer(
  transfer: TransactionRecord,
): Promise<{ transfer: TransactionRecord; sent: boolean }> {
  return handOver(transfer, { retry: true });
}

async function handOver(
  transfer: TransactionRecord,
  { retry }: { retry: boolean },
): Promise<{ transfer: TransactionRecord; sent: boolean }> {
  const bank = partner();
  const { merchant_id: merchantId, reference } = transfer;
  if (transfer.partner && transfer.partner !== bank.name) {
    // Sent through another partner before PARTNER changed: only that partner knows whether it
    // paid, so sending it through this one could pay it twice. It stays pending for an operator
    // (the requery reports it every round, alarmed).
    logger.warn('transfer not sent again: it was sent through another partner', {
      merchant_id: merchantId,
      reference,
      partner: transfer.partner,
      configured_partner: bank.name,
    });
    return { transfer, sent: false };
  }
  if (keptRefusal(transfer)) return { transfer: await applyRefusal(transfer), sent: false };
  let counted: Dispatch | undefined;
  let account: string | undefined;
  try {
    account = await bank.accountTag?.();
    if (handedOverElsewhere(transfer, account)) {
      logNotSentElsewhere(transfer, account);
      return { transfer, sent: false };
    }
    // Only if no hand-over was counted since `transfer` was read: of concurrent retries (or a retry
    // and the requery), one sends and the others answer the transfer as it stands.
    counted = await recordDispatch(merchantId, reference, {
      idleOnly: retry,
      account,
      seen: transfer.dispatches ?? 0,
    });
  } catch (error) {
    // Debited, not sent (its hand-over could not be counted, or the partner's key read): answered
    // pending (a 5xx would invite a second transfer under another reference), and the requery
    // sends it, as the partner does not know it.
    logger.error('transfer not sent: its hand-over could not be counted', {
      reference,
      error: String(error),
    });
    return { transfer, sent: false };
  }
  if (counted === undefined) {
    // Settled since it was read (a webhook, the requery, another request), handed over since by
    // another request, the partner has it and said so a moment ago, another account's hand-over
    // was counted first, or its refusal is kept: nothing to send.
    let now: TransactionRecord;
    try {
      now = (await getTransaction(merchantId, reference)) ?? transfer;
    } catch (error) {
      logger.warn('transfer not read again after a refused hand-over count', {
        reference,
        error: String(error),
      });
      return { transfer, sent: false };
    }
    if (now.status === 'pending' && keptRefusal(now))
      return { transfer: await applyRefusal(now), sent: false };
    if (now.status === 'pending' && handedOverElsewhere(now, account)) logNotSentElsewhere(now, account);
    return { transfer: now, sent: false };
  }
  return { transfer: await send(transfer, counted, account), sent: true };
}

/**
 * Handed over through another account of the partner than `account`, the one this deployment now
 * sends through (`BankingPartner.accountTag`; Paystack's secret key changed, from test to live or
 * to another business): that account alone can tell whether it paid, so sending it through this
 * one could pay it twice. It stays pending for an operator (the requery reports it every round).
 */
export function handedOverElsewhere(transfer: TransactionRecord, account: string | undefined): boolean {
  return (
    account !== undefined &&
    transfer.partner_account !== undefined &&
    transfer.partner_account !== account &&
    // Unless no hand-over can have reached it there (each one known never to have been sent).
    (transfer.unposted_dispatches?.size ?? 0) < (transfer.dispatches ?? 0)
  );
}

function logNotSentElsewhere(transfer: TransactionRecord, account: string | undefined): void {
  logger.warn('transfer not sent again: it was handed over through another account of the partner', {
    merchant_id: transfer.merchant_id,
    reference: transfer.reference,
    partner_account: transfer.partner_account,
    configured_account: account,
  });
}

/**
 * The `dispatch`-th hand-over of a transfer, counted (under the partner's `account`): sent, and
 * settled with the answer.
 */
async function send(
  transfer: TransactionRecord,
  { dispatch, unposted, at, previousAt }: Dispatch,
  account: string | undefined,
): Promise<TransactionRecord> {
  const bank = partner();
  const { merchant_id: merchantId, reference } = transfer;
  // Every hand-over is counted before it is sent, whoever makes it (the debit's request, a retry
  // after a crash, the requery); it is a resend only if an earlier one may have reached the partner
  // (not one marked as never sent).
  const resend = dispatch - 1 > unposted;
  let outcome: TransferOutcome;
  try {
    outcome = await bank.sendTransfer({
      resend,
      ...(resend && previousAt !== undefined ? { lastHandOverAt: previousAt } : {}),
      countedAt: at,
      account,
      reference: transfer.partner_reference ?? bank.transferReference(merchantId, reference),
      amount: transfer.amount,
      bank_code: transfer.counterparty.bank_code,
      account_number: transfer.counterparty.account_number,
      account_name: transfer.counterparty.account_name,
      narration: transfer.narration,
    });
  } catch (error) {
    if (error instanceof TransferNotSent) {
      // The partner was never given it (no time left, the recipient unavailable, its key changed):
      // marked, so the next send is what this one would have been. Unmarked, a first send would
      // go as a resend, whose refusal never ends the transfer.
      logger.warn('transfer left pending: not given to the partner', { reference, error: String(error) });
      await markUnposted(merchantId, reference, dispatch).catch((markError: unknown) =>
        logger.warn('hand-over not marked as never sent', { reference, error: String(markError) }),
      );
    } else if (error instanceof PartnerUnavailable) {
      logger.warn('transfer left pending: partner unavailable', { reference });
    } else {
      // An answer the adapter could not read, say: the partner may have the transfer all the same.
      logger.error('transfer left pending: its send failed', { reference, error: String(error) });
    }
    // Held like a pending answer: a send that fails the same way every time (the partner down, a
    // recipient it answers for another account) is not sent every round for ever, and an operator
    // can find it quiet (`ops transfers fail`).
    await holdResends(merchantId, reference, Date.now() + resendHoldMs(dispatch)).catch(
      (holdError: unknown) => logger.warn('resend hold not written', { reference, error: String(holdError) }),
    );
    return transfer;
  }
  // Once the partner answered, the transfer is answered as it stands, never with an error: the
  // merchant must not take a debited transfer for one that never happened and send it again under
  // another reference. An answer that could not be recorded leaves it pending for the requery.
  try {
    if (
      outcome.status === 'pending' &&
      !(await holdResends(merchantId, reference, Date.now() + resendHoldMs(dispatch)))
    ) {
      // Settled while the partner answered (its webhook came first): answered as it now stands.
      return (await getTransaction(merchantId, reference)) ?? transfer;
    }
    return await settleTransfer(transfer, outcome, { dispatches: dispatch });
  } catch (error) {
    logger.error('transfer left pending: the partner’s answer could not be recorded', {
      reference,
      answer: outcome.status,
      error: String(error),
    });
    // A refusal is final (the adapter answers failed only when the partner has no such transfer):
    // kept, so the next retry or requery gives the money back, never sending it again meanwhile.
    if (outcome.status === 'failed') {
      await keepRefusal(merchantId, reference, { reason: outcome.reason, dispatch }).then(
        (kept) => kept && logger.warn('transfer refusal kept for the requery', { reference }),
        (keepError: unknown) =>
          logger.warn('transfer refusal not kept', { reference, error: String(keepError) }),
      );
    }
    return transfer;
  }
}

/** The partner's refusal of the transfer's last hand-over, kept to be applied (`keepRefusal`). */
function keptRefusal(transfer: TransactionRecord): boolean {
  return transfer.refusal !== undefined && transfer.refusal.dispatch === transfer.dispatches;
}

/**
 * A pending transfer whose partner refused its last hand-over, the refund not written then
 * (`keepRefusal`): failed now with the reversal, as the refusal's own answer would have ended it,
 * unless another hand-over was counted since. No partner call.
 */
async function applyRefusal(transfer: TransactionRecord): Promise<TransactionRecord> {
  const refusal = transfer.refusal as NonNullable<TransactionRecord['refusal']>;
  try {
    const settled = await settleTransfer(
      transfer,
      { status: 'failed', reason: refusal.reason },
      { dispatches: refusal.dispatch },
    );
    logger.info('kept refusal applied', { reference: transfer.reference, status: settled.status });
    return settled;
  } catch (error) {
    // Still not written: kept for the next retry or round, the transfer answered as it stands.
    logger.error('transfer left pending: its kept refusal could not be applied', {
      reference: transfer.reference,
      error: String(error),
    });
    return transfer;
  }
}
