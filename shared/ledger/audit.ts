import { tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import type { LedgerEntry } from '#shared/ledger/ledger.ts';
import { getMerchant } from '#shared/merchants/store.ts';

export interface AuditReport {
  merchantId: string;
  balance: number;
  entries: number;
  sumOfEntries: number;
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

/**
 * Checks a merchant's ledger invariants: balance = sum of signed entries; no balance below zero,
 * ever; `seq` runs 1..n without gaps; each `balance_after` = the previous one + the entry's amount;
 * each `created_at` is later than the previous one's (so lists by time agree with `seq`).
 * (The index it reads is eventually consistent on AWS: audit a quiet merchant.)
 */
export async function auditMerchant(merchantId: string): Promise<AuditReport> {
  const merchant = await getMerchant(merchantId);
  if (!merchant) throw new Error(`no merchant ${merchantId}`);
  const entries = await entriesOf(merchantId);
  const problems: string[] = [];
  let running = 0;
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
  });
  if (merchant.balance !== running) problems.push(`balance ${merchant.balance} != sum of entries ${running}`);
  if (merchant.version !== entries.length)
    problems.push(`version ${merchant.version} != ${entries.length} entries`);
  if (merchant.balance < 0) problems.push(`balance is negative: ${merchant.balance}`);
  return { merchantId, balance: merchant.balance, entries: entries.length, sumOfEntries: running, problems };
}
