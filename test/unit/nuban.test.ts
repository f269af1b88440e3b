import { describe, expect, it } from 'vitest';
import { isValidNuban, nubanCheckDigit, toNuban } from '#shared/banks/nuban.ts';

describe('NUBAN check digit', () => {
  it("matches the CBN's published First Bank example", () => {
    expect(nubanCheckDigit('011', '000001457')).toBe(9);
    expect(isValidNuban('011', '0000014579')).toBe(true);
  });

  it('rejects every wrong check digit', () => {
    const valid = toNuban('058', '123456789');
    const wrong = [...'0123456789'].map((d) => `${valid.slice(0, 9)}${d}`).filter((n) => n !== valid);
    expect(wrong).toHaveLength(9);
    for (const number of wrong) expect(isValidNuban('058', number)).toBe(false);
  });

  it('treats a 3-digit code as the 6-digit code 000 + code', () => {
    expect(nubanCheckDigit('044', '690000001')).toBe(nubanCheckDigit('000044', '690000001'));
  });

  it('uses all 15 weights for 6-digit institution codes', () => {
    // 090267 + 000000000: 0*3 + 9*7 + 0*3 + 2*3 + 6*7 + 7*3 = 132 -> (10 - 2) % 10 = 8
    expect(nubanCheckDigit('090267', '000000000')).toBe(8);
    // The serial's weights follow on from the code's: 000000001 adds 1*3.
    expect(nubanCheckDigit('090267', '000000001')).toBe(5);
  });

  it('rejects numbers that are not 10 digits', () => {
    for (const number of ['', '123', '12345678901', '12345678a0', ' 123456789']) {
      expect(isValidNuban('058', number)).toBe(false);
    }
  });

  it('refuses malformed bank codes and serials', () => {
    expect(() => nubanCheckDigit('58', '123456789')).toThrow(RangeError);
    expect(() => nubanCheckDigit('058', '12345678')).toThrow(RangeError);
  });
});
