import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { parseFeeTiers } from '#shared/config.ts';
import { amountSchema, MAX_AMOUNT, MIN_AMOUNT, transferFee } from '#shared/money.ts';
import { decodeCursor, encodeCursor, limitSchema, ownList } from '#shared/pagination.ts';

describe('the transfer fee schedule', () => {
  it('is 1,000 kobo up to and including NGN 5,000, 2,500 up to NGN 50,000, 5,000 above', () => {
    expect(transferFee(100)).toBe(1_000);
    expect(transferFee(500_000)).toBe(1_000);
    expect(transferFee(500_001)).toBe(2_500);
    expect(transferFee(5_000_000)).toBe(2_500);
    expect(transferFee(5_000_001)).toBe(5_000);
    expect(transferFee(MAX_AMOUNT)).toBe(5_000);
  });

  it('is configurable', () => {
    const tiers = parseFeeTiers('1000:0, 2000:50, *:75');
    expect([500, 1000, 1001, 2000, 2001].map((amount) => transferFee(amount, tiers))).toEqual([
      0, 0, 50, 50, 75,
    ]);
  });

  it.each(['', '100:10', '*:5,100:10', '200:10,100:5,*:1', 'abc:1,*:2', '100:-1,*:2', '100:1.5,*:2'])(
    'refuses the schedule %j',
    (text) => {
      expect(() => parseFeeTiers(text)).toThrow(/TRANSFER_FEE_TIERS/);
    },
  );
});

describe('amounts', () => {
  it('accept integer kobo from NGN 1 to NGN 10,000,000 only', () => {
    expect(v.safeParse(amountSchema, MIN_AMOUNT).success).toBe(true);
    expect(v.safeParse(amountSchema, MAX_AMOUNT).success).toBe(true);
    for (const bad of [
      MIN_AMOUNT - 1,
      MAX_AMOUNT + 1,
      150.5,
      '150',
      Number.NaN,
      Number.POSITIVE_INFINITY,
      null,
      2 ** 53,
    ]) {
      expect(v.safeParse(amountSchema, bad).success).toBe(false);
    }
  });
});

describe('pagination', () => {
  it('parses ?limit= from 1 to 100 with 20 by default', () => {
    expect(v.parse(limitSchema, undefined)).toBe(20);
    expect(v.parse(limitSchema, '1')).toBe(1);
    expect(v.parse(limitSchema, '100')).toBe(100);
    for (const bad of ['0', '101', '-1', '1.5', 'ten', '', '0010'])
      expect(v.safeParse(limitSchema, bad).success).toBe(false);
  });

  it('round-trips a cursor and refuses anything else', () => {
    const TX = ownList('transactions', 'mer_a');
    const cursor = encodeCursor(TX, { created_at: '2026-01-01T00:00:00.000Z', reference: 'r1' }) ?? '';
    expect(decodeCursor(cursor, TX, ['created_at', 'reference'])).toEqual({
      created_at: '2026-01-01T00:00:00.000Z',
      reference: 'r1',
    });
    expect(encodeCursor(TX, undefined)).toBeNull();
    const junk = [
      'x',
      Buffer.from('[1]').toString('base64url'),
      encodeCursor(TX, { created_at: 1, reference: 'r' }) ?? '',
      encodeCursor(TX, { created_at: 'a', reference: 'r', merchant_id: 'mer_other' }) ?? '',
      encodeCursor(TX, { created_at: 'a' }) ?? '',
      // Another list's cursor of the same shape, or one naming no list.
      encodeCursor(ownList('virtual_accounts', 'mer_a'), {
        created_at: '2026-01-01T00:00:00.000Z',
        reference: 'r1',
      }) ?? '',
      Buffer.from(JSON.stringify({ created_at: '2026-01-01T00:00:00.000Z', reference: 'r1' })).toString(
        'base64url',
      ),
    ];
    for (const bad of junk) expect(() => decodeCursor(bad, TX, ['created_at', 'reference'])).toThrow();
  });
});
