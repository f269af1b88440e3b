import { describe, expect, it } from 'vitest';
import { BANKS } from '#shared/banks/data.ts';
import { findBank, listBanks } from '#shared/banks/index.ts';
import { pageOfBanks } from '#shared/banks/pages.ts';
import { ValidationError } from '#shared/errors.ts';
import { encodeCursor, ownList } from '#shared/pagination.ts';

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

  it('pages the sorted list from the last bank shown, by name, whatever was added or removed between pages', () => {
    const all = listBanks();
    const first = pageOfBanks(7, undefined);
    expect(first.items).toEqual(all.slice(0, 7));
    expect(first.next_cursor).toEqual(expect.any(String));
    expect(pageOfBanks(7, first.next_cursor ?? undefined).items).toEqual(all.slice(7, 14));
    // A cursor naming a bank no longer listed (a deploy between pages) goes on from where it sorted.
    const gone = (name: string, code: string) =>
      Buffer.from(JSON.stringify({ list: 'banks', name, code })).toString('base64url');
    const [a, b] = [all[3], all[4]];
    if (!a || !b) throw new Error('too few banks');
    expect(pageOfBanks(2, gone(`${a.name} `, '999')).items).toEqual(all.slice(4, 6));
    expect(pageOfBanks(2, gone(a.name, a.code)).items[0]).toEqual(b);
    // The last page: no cursor.
    const last = pageOfBanks(100, gone(all.at(-3)?.name ?? '', all.at(-3)?.code ?? ''));
    expect(last).toEqual({ items: all.slice(-2), next_cursor: null });
  });

  it("refuses a merchant list's cursor, one of another shape, and one that is no cursor", () => {
    const merchants = encodeCursor(ownList('transactions', 'm1'), {
      created_at: '2026-01-01T00:00:00.000Z',
      id: 'x',
    });
    for (const cursor of [
      merchants ?? '',
      'bm9wZQ',
      Buffer.from('{"list":"banks","name":"A"}').toString('base64url'),
    ]) {
      expect(() => pageOfBanks(5, cursor)).toThrow(ValidationError);
    }
  });
});
