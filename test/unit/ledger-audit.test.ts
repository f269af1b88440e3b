import { describe, expect, it } from 'vitest';
import { auditEntries } from '#shared/ledger/audit.ts';
import type { LedgerEntry } from '#shared/ledger/ledger.ts';

/** A sound chain of entries of these signed amounts, a second apart. */
function chain(amounts: number[]): LedgerEntry[] {
  let balance = 0;
  return amounts.map((amount, i) => {
    balance += amount;
    return {
      entry_id: `payment:${i + 1}`,
      merchant_id: 'mer_audit',
      seq: i + 1,
      amount,
      balance_after: balance,
      category: amount > 0 ? 'payment' : 'transfer',
      reference: `r${i + 1}`,
      created_at: new Date(Date.UTC(2026, 10, 26, 10, 0, i)).toISOString(),
    };
  });
}
const merchant = (version: number, balance: number) => ({ merchant_id: 'mer_audit', balance, version });

describe('the ledger audit (its checks, on entries as read)', () => {
  it('finds a sound ledger sound, also with entries posted after its balance was read', () => {
    const entries = chain([10_000, -3_500, 2_000, 400, -900]);
    expect(auditEntries(merchant(5, 8_000), entries)).toMatchObject({
      problems: [],
      entries: 5,
      postedSince: 0,
    });
    // The balance read at version 3 (8,500); two more posted while the entries were read.
    expect(auditEntries(merchant(3, 8_500), entries)).toMatchObject({
      problems: [],
      entries: 3,
      sumOfEntries: 8_500,
      postedSince: 2,
    });
  });

  it('still finds a balance its own entries do not sum to, a missing entry, a broken chain after the balance, and a gap', () => {
    const entries = chain([10_000, -3_500, 2_000, 400]);
    expect(auditEntries(merchant(3, 8_400), entries).problems).toEqual([
      'balance 8400 != sum of its 3 entries 8500',
    ]);
    expect(auditEntries(merchant(5, 8_900), entries).problems).toEqual(['version 5 but only 4 entries']);
    const broken = entries.map((entry) => (entry.seq === 4 ? { ...entry, balance_after: 9_000 } : entry));
    expect(auditEntries(merchant(3, 8_500), broken).problems).toEqual([
      'entry payment:4 has balance_after 9000, expected 8900',
    ]);
    const gap = [...entries.slice(0, 2), ...entries.slice(3)];
    expect(auditEntries(merchant(2, 6_500), gap).problems).toContain('entry payment:4 has seq 4, expected 3');
  });

  it('finds a balance above its entries, a balance_after below the chain, a created_at not after the one before, and a balance below zero', () => {
    const entries = chain([10_000, -3_500, 2_000, 400]);
    expect(auditEntries(merchant(3, 8_600), entries).problems).toEqual([
      'balance 8600 != sum of its 3 entries 8500',
    ]);
    const low = entries.map((entry) => (entry.seq === 4 ? { ...entry, balance_after: 8_800 } : entry));
    expect(auditEntries(merchant(3, 8_500), low).problems).toEqual([
      'entry payment:4 has balance_after 8800, expected 8900',
    ]);
    // The same instant as the one before is not after it, nor is an earlier one.
    const [first = '', second = ''] = entries.map((entry) => entry.created_at);
    for (const at of [second, first]) {
      const dated = entries.map((entry) => (entry.seq === 3 ? { ...entry, created_at: at } : entry));
      expect(auditEntries(merchant(4, 8_900), dated).problems).toEqual([
        `entry payment:3 (seq 3) has created_at ${at}, not after seq 2's ${second}`,
      ]);
    }
    // A chain that adds up but went below zero: both the entry and the balance are reported.
    expect(auditEntries(merchant(2, -500), chain([1_000, -1_500])).problems).toEqual([
      'entry payment:2 left the balance at -500',
      'balance is negative: -500',
    ]);
  });
});
