import { PartnerAnswerUnreadable, PartnerUnavailable } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { EARLIER_SENDS_OVER_MS } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';
import {
  getTransaction,
  holdForOperator,
  resendsHeldUntil,
  type TransactionRecord,
} from '#shared/transactions/store.ts';
import { handedOverElsewhere } from '#shared/transfers/dispatch.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';

/**
 * What an operator may do with a transfer the service cannot settle by itself (README, alarms
 * runbook): one the partner refuses to make and will not show, or one pending with a partner the
 * deployment no longer uses. The service never fails a transfer by guess; an operator who checked
 * with the partner that it was never made ends it `failed`, its money given back through the
 * ledger, as the partner's own refusal would. The configured partner is asked too, where it can
 * see the transfer: one it has is never failed by hand.
 */

/** How long after its last hand-over to the partner a transfer may be failed: no send is still on its way. */
export const QUIET_AFTER_SEND_MS = EARLIER_SENDS_OVER_MS;

/** How long after that a transfer an operator means to fail is still not sent again: time to come back. */
export const OPERATOR_RETURN_MS = 15 * 60_000;

export class TransferOperatorError extends Error {
  constructor(
    readonly code:
      | 'not_found'
      | 'not_pending'
      | 'recently_sent'
      | 'known_to_partner'
      | 'partner_unavailable'
      | 'partner_not_asked',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Ends a pending transfer `failed` with `reason` (shown to the merchant) and gives `amount + fee`
 * back, by exactly the code a partner's refusal takes. Refused while a send may still be on its way
 * (handed over less than `QUIET_AFTER_SEND_MS` ago: a send starts within a minute of its count,
 * `SEND_START_WITHIN_MS`, and its calls are bounded by the partner timeout), and if the
 * transfer is handed over again or settled while this runs (the change is conditional on both).
 */
export async function failTransfer(
  merchantId: string,
  reference: string,
  {
    reason,
    by,
    now = Date.now(),
    partnerChecked = false,
  }: { reason: string; by: string; now?: number; partnerChecked?: boolean },
): Promise<{ transfer: TransactionRecord; partnerAsked: string }> {
  const transfer = await getTransaction(merchantId, reference);
  if (transfer?.category !== 'transfer')
    throw new TransferOperatorError('not_found', `no transfer ${reference} of merchant ${merchantId}`);
  if (transfer.status !== 'pending')
    throw new TransferOperatorError(
      'not_pending',
      `transfer ${reference} is ${transfer.status}: only a pending transfer can be failed`,
    );
  const lastSent = Math.max(Date.parse(transfer.created_at), transfer.dispatched_at ?? 0);
  if (now - lastSent < QUIET_AFTER_SEND_MS) {
    const quietFrom = lastSent + QUIET_AFTER_SEND_MS;
    // An operator means to end it: no resend (the requery's, a retry's) until then and a while after,
    // or each would start the wait again (resends come on a growing hold: the first time the
    // operator could end a transfer that kept failing was about half an hour on, for a minute).
    const until = quietFrom + OPERATOR_RETURN_MS;
    // The hold is the refusal's only write; one that fails is logged, and the refusal stands.
    const held = await holdForOperator(merchantId, reference, until).catch((error: unknown) => {
      logger.warn('resends of a transfer to fail not held', {
        merchant_id: merchantId,
        reference,
        error: String(error),
      });
      return false;
    });
    throw new TransferOperatorError(
      'recently_sent',
      `transfer ${reference} was ${transfer.dispatched_at === undefined ? 'made' : 'handed to the partner'} at ${new Date(lastSent).toISOString()}: a send may still be on its way; try again after ${new Date(quietFrom).toISOString()}${
        held || (transfer.operator_hold_until ?? 0) >= until
          ? ` (no resend until ${new Date(Math.max(until, resendsHeldUntil(transfer))).toISOString()})`
          : ''
      }`,
    );
  }
  const { said: asked, byOperator } = await askPartner(transfer, partnerChecked);
  const settled = await settleTransfer(
    transfer,
    { status: 'failed', reason },
    { dispatches: transfer.dispatches ?? 0, failedBy: by },
  );
  if (settled.status === 'pending')
    throw new TransferOperatorError(
      'recently_sent',
      `transfer ${reference} was handed to the partner again while this ran: nothing changed; try again later`,
    );
  // Failed meanwhile by another run (another operator's, even with the same reason): not this one.
  if (settled.status !== 'failed' || settled.failure_reason !== reason || settled.failed_by !== by)
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
    partner_asked: asked,
    // Only where the partner could not be asked does the operator's own check decide.
    ...(byOperator ? { partner_checked: true } : {}),
  });
  return { transfer: settled, partnerAsked: asked };
}

/**
 * Asks the configured partner about the transfer; what it said. Throws when the partner has the
 * transfer, whatever its status (the requery settles it by the partner's word, never by hand), or
 * does not answer; and when it cannot be asked (the transfer went through another partner, or
 * another account of it, which this one cannot see: a shell without the service's `PARTNER` or key
 * looks just so) unless the operator checked that partner themselves (`partnerChecked`).
 */
async function askPartner(
  transfer: TransactionRecord,
  partnerChecked: boolean,
): Promise<{ said: string; byOperator: boolean }> {
  const bank = partner();
  const reference =
    transfer.partner_reference ?? bank.transferReference(transfer.merchant_id, transfer.reference);
  const cannotAsk = (why: string, checked: string) => {
    if (partnerChecked)
      return { said: `not asked: ${why}; ${checked} checked by the operator`, byOperator: true };
    throw new TransferOperatorError(
      'partner_not_asked',
      `transfer ${transfer.reference} was ${why}, which this command cannot ask: nothing changed. If the service sends through it, give this command the service's partner settings (locally PARTNER and PAYSTACK_SECRET_KEY in your shell; with --stage they are the stage's); if not, look the transfer up there (${reference}) and add --partner-checked`,
    );
  };
  if (transfer.partner && transfer.partner !== bank.name)
    return cannotAsk(`sent through ${transfer.partner}, not the configured ${bank.name}`, transfer.partner);
  // Another key of the partner may still see the transfer (a rotated key of the same business
  // does): asked all the same, and only a transfer it does not show needs the operator's check.
  let elsewhere = false;
  try {
    elsewhere = handedOverElsewhere(transfer, await bank.accountTag?.());
    const outcome = await bank.queryTransfer(reference);
    if (outcome)
      throw new TransferOperatorError(
        'known_to_partner',
        `${bank.name} has transfer ${transfer.reference} (${reference}) as ${outcome.status}: nothing changed; the requery settles it by ${bank.name}'s word, never by hand`,
      );
  } catch (error) {
    if (!(error instanceof PartnerUnavailable)) throw error;
    if (error instanceof PartnerAnswerUnreadable) {
      throw new TransferOperatorError(
        'partner_unavailable',
        `${bank.name} answered about transfer ${transfer.reference} (${reference}), but in a way that settles nothing (${error.problem}): nothing changed; asking again gives the same answer, so reconcile it with ${bank.name} (its money stays held)`,
      );
    }
    throw new TransferOperatorError(
      'partner_unavailable',
      `${bank.name} did not answer about transfer ${transfer.reference} (${reference}): nothing changed; try again`,
    );
  }
  if (elsewhere)
    return cannotAsk(
      `handed over through another ${bank.name} account (${transfer.partner_account}), which this one does not show`,
      `that ${bank.name} account`,
    );
  return { said: `${bank.name} has no transfer ${reference}`, byOperator: false };
}
