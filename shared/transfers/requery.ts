import { config } from '#shared/config.ts';
import { OVERDUE_TRANSFER } from '#shared/definitions/alerts.ts';
import { PartnerUnavailable } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { partner } from '#shared/partners/registry.ts';
import { pendingTransfers, type TransactionRecord } from '#shared/transactions/store.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';

/** What one requery round did. */
export interface RequerySummary {
  checked: number;
  settled: number;
  /** Pending past TRANSFER_REQUERY_ALERT_HOURS: reported to operators, never settled by guess. */
  overdue: number;
  /** Asked but not answered (partner unavailable): asked again next round. */
  unanswered: number;
}

/** Transfers asked about at once: the partner's rate limits are not ours to spend. */
const CONCURRENCY = 4;

/**
 * Asks the partner about every transfer still pending `TRANSFER_REQUERY_AFTER_SECONDS` after it was
 * sent (API.md §7) and settles the final ones with exactly the code that settles webhooks, so a lost
 * webhook never leaves money held.
 */
export async function requeryPendingTransfers(now = Date.now()): Promise<RequerySummary> {
  const bank = partner();
  const cutoff = new Date(now - config.requery.afterSeconds * 1000).toISOString();
  const pending = await pendingTransfers(bank.name, cutoff);
  const summary: RequerySummary = { checked: 0, settled: 0, overdue: 0, unanswered: 0 };
  const alertMs = config.requery.alertHours * 3600 * 1000;

  const requery = async (transfer: TransactionRecord) => {
    summary.checked++;
    const reference =
      transfer.partner_reference ?? bank.transferReference(transfer.merchant_id, transfer.reference);
    /** Past the alert window, however the partner answered (or did not): an operator must look. */
    const reportIfOverdue = (knownToPartner: boolean | 'unanswered') => {
      if (now - Date.parse(transfer.created_at) < alertMs) return;
      summary.overdue++;
      // The alarm's metric filter matches this message.
      logger.error(OVERDUE_TRANSFER, {
        merchant_id: transfer.merchant_id,
        reference: transfer.reference,
        partner_reference: reference,
        known_to_partner: knownToPartner,
        created_at: transfer.created_at,
      });
    };
    try {
      const outcome = await bank.queryTransfer(reference);
      if (outcome && outcome.status !== 'pending') {
        const settled = await settleTransfer(transfer, outcome);
        summary.settled++;
        logger.info('transfer settled by requery', { reference: transfer.reference, status: settled.status });
        return;
      }
      reportIfOverdue(outcome !== undefined);
    } catch (error) {
      if (!(error instanceof PartnerUnavailable)) throw error;
      summary.unanswered++;
      // A partner that never answers (an outage, a revoked key) must not hide the money it holds.
      reportIfOverdue('unanswered');
    }
  };

  const queue = [...pending];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let transfer = queue.shift(); transfer; transfer = queue.shift()) await requery(transfer);
    }),
  );
  return summary;
}
