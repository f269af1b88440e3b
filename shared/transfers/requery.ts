import { config } from '#shared/config.ts';
import { OVERDUE_TRANSFER } from '#shared/definitions/alerts.ts';
import { PartnerAnswerUnreadable, PartnerUnavailable } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { PARTNER_NAMES } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';
import { pendingTransfers, type TransactionRecord } from '#shared/transactions/store.ts';
import { handedOverElsewhere, resendTransfer } from '#shared/transfers/dispatch.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';

/** What one requery round did. */
export interface RequerySummary {
  checked: number;
  settled: number;
  /** Pending past TRANSFER_REQUERY_ALERT_HOURS: reported to operators, never settled by guess. */
  overdue: number;
  /**
   * Not known to the partner (never sent, or lost on the way) and handed to it again, under the same
   * reference (it can never pay twice); those the partner refuses again stay pending while an
   * earlier send may still be in the making (`EARLIER_SENDS_OVER_MS`), and end failed after.
   */
  resent: number;
  /** Asked but not answered (partner unavailable): asked again next round. */
  unanswered: number;
  /** Answered in a way that settles nothing (`PartnerAnswerUnreadable`): asked again next round. */
  unreadable: number;
  /** Not asked: the round's time ran out first (asked in a later round, in another order). */
  notAsked: number;
}

/** Transfers asked about at once: the partner's rate limits are not ours to spend. */
const CONCURRENCY = 4;
/** Partner calls a resend may make (bank list, recipient, transfer, a check of a refusal). */
const RESEND_CALLS = 4;

/**
 * Asks the partner about every transfer still pending `TRANSFER_REQUERY_AFTER_SECONDS` after it was
 * sent (API.md §7) and settles the final ones with exactly the code that settles webhooks, so a lost
 * webhook never leaves money held. One the partner does not know (a crash between the debit and the
 * send, a send that timed out before reaching it) is sent again, as the merchant's retry would:
 * never failed by guess, and never left held because nobody retried. In a random order, and no new question after `deadline` (epoch
 * ms; the function's time less one partner call): a round that cannot ask everyone (a partner slow
 * on many transfers) leaves others for the next, never always the same ones, and its function is
 * never killed mid-round. Overdue transfers it did not ask about are still reported.
 */
export async function requeryPendingTransfers(
  now = Date.now(),
  { deadline = Number.POSITIVE_INFINITY } = {},
): Promise<RequerySummary> {
  const bank = partner();
  const cutoff = new Date(now - config.requery.afterSeconds * 1000).toISOString();
  const pending = shuffled(await pendingTransfers(bank.name, cutoff));
  const summary: RequerySummary = {
    checked: 0,
    settled: 0,
    overdue: 0,
    resent: 0,
    unanswered: 0,
    unreadable: 0,
    notAsked: 0,
  };
  const alertMs = config.requery.alertHours * 3600 * 1000;

  const requery = async (transfer: TransactionRecord) => {
    const reference =
      transfer.partner_reference ?? bank.transferReference(transfer.merchant_id, transfer.reference);
    /** Past the alert window, however the partner answered (or did not): an operator must look. */
    const reportIfOverdue = (knownToPartner: boolean | string) => {
      if (now - Date.parse(transfer.created_at) < alertMs) return;
      reportOverdue(summary, transfer, { partner_reference: reference, known_to_partner: knownToPartner });
    };
    if (Date.now() >= deadline) {
      summary.notAsked++;
      reportIfOverdue('not asked');
      return;
    }
    summary.checked++;
    try {
      const outcome = await bank.queryTransfer(reference);
      if (outcome && outcome.status !== 'pending') {
        const settled = await settleTransfer(transfer, outcome);
        if (settled.status !== 'pending') {
          summary.settled++;
          logger.info('transfer settled by requery', {
            merchant_id: transfer.merchant_id,
            reference: transfer.reference,
            status: settled.status,
          });
          return;
        }
        // Not settled by that word (another amount, reported): still pending, reported once overdue.
      }
      // Unknown to the partner, and first handed over through another of its accounts (a secret key
      // changed): only that account can tell whether it paid. Never sent through this one; an
      // operator reconciles it there, reported every round whatever its age. (A rotated key of the
      // same account sees the transfer, and it settles above.)
      const account = outcome === undefined ? await bank.accountTag?.() : undefined;
      if (handedOverElsewhere(transfer, account)) {
        reportOverdue(summary, transfer, {
          partner_reference: reference,
          partner_account: transfer.partner_account,
          configured_account: account,
          known_to_partner: 'handed over through another account of the partner: reconcile it there',
        });
        return;
      }
      // Unknown to the partner: sent again unless resends are held (a send lately answered pending
      // or failed) or the round has no time left for one (the next round sends it).
      if (outcome === undefined && Date.now() + RESEND_CALLS * config.partner.timeoutMs <= deadline) {
        const { transfer: after, sent } = await resendTransfer(transfer);
        if (sent) {
          summary.resent++;
          logger.warn('transfer unknown to the partner: sent again', {
            merchant_id: transfer.merchant_id,
            reference: transfer.reference,
            partner_reference: reference,
            status: after.status,
          });
        }
        if (after.status !== 'pending') {
          summary.settled++;
          return;
        }
      }
      reportIfOverdue(outcome !== undefined);
    } catch (error) {
      if (!(error instanceof PartnerUnavailable)) throw error;
      if (error instanceof PartnerAnswerUnreadable) summary.unreadable++;
      else summary.unanswered++;
      // A partner that never answers (an outage, a revoked key) must not hide the money it holds;
      // one that answers in a way that settles nothing says how, for whoever reconciles it.
      reportIfOverdue(
        error instanceof PartnerAnswerUnreadable
          ? `answered, settling nothing: ${error.problem}`
          : 'unanswered',
      );
    }
  };

  // Transfers sent through another partner before PARTNER changed: this one cannot ask about
  // them, and neither a retry nor this round sends them again (`dispatchTransfer`). Their money stays held until
  // an operator settles them with that partner: reported every round, whatever their age.
  for (const other of PARTNER_NAMES.filter((name) => name !== bank.name)) {
    for (const transfer of await pendingTransfers(other, cutoff)) {
      reportOverdue(summary, transfer, {
        partner_reference: transfer.partner_reference,
        partner: other,
        configured_partner: bank.name,
        known_to_partner: 'sent through another partner: reconcile it there',
      });
    }
  }

  const queue = [...pending];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let transfer = queue.shift(); transfer; transfer = queue.shift()) await requery(transfer);
    }),
  );
  return summary;
}

/**
 * A transfer whose money an operator must look at, counted in the round's summary. The alarm's
 * metric filter matches the message (`OVERDUE_TRANSFER`).
 */
function reportOverdue(
  summary: RequerySummary,
  transfer: TransactionRecord,
  details: { partner_reference: string | undefined; known_to_partner: unknown } & Record<string, unknown>,
): void {
  summary.overdue++;
  logger.error(OVERDUE_TRANSFER, {
    merchant_id: transfer.merchant_id,
    reference: transfer.reference,
    ...details,
    created_at: transfer.created_at,
  });
}

/** The transfers in a random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const order = [...items];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j] as T, order[i] as T];
  }
  return order;
}
