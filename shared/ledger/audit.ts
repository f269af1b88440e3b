import { tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import type { LedgerEntry } from '#shared/ledger/ledger.ts';
import { getMerchant, type Merchant } from '#shared/merchants/store.ts';

export interface AuditReport {
  merchantId: string;
  balance: number;
  /** The entries the balance as read covers (its version). */
  entries: number;
  sumOfEntries: number;
  /** Entries posted after the balance was read (a busy merchant's), checked in the chain too. */
  postedSince: number;
  /** Every broken invariant, in words; empty when the ledger of this merchant is sound. */
  problems: string[];
}

/** Every entry of a merchant in `seq` order (read from the `by-merchant` index). */
export function entriesOf(merchantId: string): Promise<LedgerEntry[]> {
  return queryAll<LedgerEntry>({
    TableName: tableName('ledgerEntries'),
    IndexName: 'by-merchant',
    KeyConditionExpression: 'merchant_id = :m',
    ExpressionAttributeValues: { ':m': merchantId },
  });
}

/** How long the audit gives the index (eventually consistent on AWS) to show what the balance has. */
const INDEX_CATCH_UP_MS = 2_000;

/**
 * Checks a merchant's ledger invariants: balance = sum of signed entries; no balance below zero,
 * ever; `seq` runs 1..n without gaps; each `balance_after` = the previous one + the entry's amount;
 * each `created_at` is later than the previous one's (so lists by time agree with `seq`).
 * The balance is read first, then the entries, which take seconds for a long history: entries
 * posted meanwhile (a merchant taking payments is never quiet) are checked in the chain, and the
 * balance against the entries of its own version. On AWS the index the entries come from may be a
 * moment behind the balance: one that lacks any of its entries is read again once.
 */
export async function auditMerchant(
  merchantId: string,
  { indexCatchUpMs = INDEX_CATCH_UP_MS } = {},
): Promise<AuditReport> {
  const merchant = await getMerchant(merchantId);
  if (!merchant) throw new Error(`no merchant ${merchantId}`);
  let entries = await entriesOf(merchantId);
  // Behind, the index may lack some of the balance's entries, not only the last ones (its items are
  // updated in no order across them): read again if any of the first `version` is not in its place.
  const lacking = (read: readonly LedgerEntry[]) =>
    read.length < merchant.version || read.slice(0, merchant.version).some((entry, i) => entry.seq !== i + 1);
  if (lacking(entries)) {
    await new Promise((resolve) => setTimeout(resolve, indexCatchUpMs));
    entries = await entriesOf(merchantId);
  }
  return auditEntries(merchant, entries);
}

/** `auditMerchant`'s checks of a merchant as read and its entries read after it (in `seq` order). */
export function auditEntries(
  merchant: Pick<Merchant, 'merchant_id' | 'balance' | 'version'>,
  entries: readonly LedgerEntry[],
): AuditReport {
  const problems: string[] = [];
  let running = 0;
  let atVersion = 0;
  entries.forEach((entry, i) => {
    if (entry.seq !== i + 1) problems.push(`entry ${entry.entry_id} has seq ${entry.seq}, expected ${i + 1}`);
    const before = entries[i - 1];
    if (before && !(entry.created_at > before.created_at)) {
      problems.push(
        `entry ${entry.entry_id} (seq ${entry.seq}) has created_at ${entry.created_at}, not after seq ${before.seq}'s ${before.created_at}`,
      );
    }
    running += entry.amount;
    if (entry.balance_after !== running) {
      problems.push(`entry ${entry.entry_id} has balance_after ${entry.balance_after}, expected ${running}`);
    }
    if (entry.balance_after < 0)
      problems.push(`entry ${entry.entry_id} left the balance at ${entry.balance_after}`);
    if (i + 1 === merchant.version) atVersion = running;
  });
  const short = entries.length < merchant.version;
  if (short) problems.push(`version ${merchant.version} but only ${entries.length} entries`);
  else if (merchant.balance !== atVersion)
    problems.push(`balance ${merchant.balance} != sum of its ${merchant.version} entries ${atVersion}`);
  if (merchant.balance < 0) problems.push(`balance is negative: ${merchant.balance}`);
  return {
    merchantId: merchant.merchant_id,
    balance: merchant.balance,
    entries: short ? entries.length : merchant.version,
    sumOfEntries: short ? running : atVersion,
    postedSince: Math.max(0, entries.length - merchant.version),
    problems,
  };
}
