import { describe, expect, it } from 'vitest';
import { BANKS } from '#shared/banks/data.ts';
import { findBank, listBanks } from '#shared/banks/index.ts';

describe('bank data', () => {
  it('has at least 20 banks including the five majors with their CBN codes', () => {
    expect(BANKS.length).toBeGreaterThanOrEqual(20);
    expect(findBank('044')?.name).toBe('Access Bank');
    expect(findBank('058')?.name).toBe('Guaranty Trust Bank');
    expect(findBank('011')?.name).toBe('First Bank of Nigeria');
    expect(findBank('033')?.name).toBe('United Bank for Africa');
    expect(findBank('057')?.name).toBe('Zenith Bank');
  });

  it('has unique, well-formed codes and names', () => {
    expect(new Set(BANKS.map((b) => b.code)).size).toBe(BANKS.length);
    expect(new Set(BANKS.map((b) => b.nip_code)).size).toBe(BANKS.length);
    expect(new Set(BANKS.map((b) => b.name)).size).toBe(BANKS.length);
    for (const bank of BANKS) {
      expect(bank.code).toMatch(/^(\d{3}|\d{6})$/);
      expect(bank.nip_code).toMatch(/^\d{6}$/);
    }
  });

  it('includes microfinance banks and wallets, some of whose numbers are not NUBANs', () => {
    expect(BANKS.some((b) => b.category === 'microfinance')).toBe(true);
    expect(BANKS.some((b) => !b.nuban)).toBe(true);
  });

  it('lists code and name only, sorted by name', () => {
    const banks = listBanks();
    expect(banks).toHaveLength(BANKS.length);
    for (const bank of banks) expect(Object.keys(bank).sort()).toEqual(['code', 'name']);
    const names = banks.map((b) => b.name);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' })));
  });

  it('finds nothing for an unknown code', () => {
    expect(findBank('999')).toBeUndefined();
  });
});
