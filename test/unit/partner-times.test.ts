import { describe, expect, it } from 'vitest';
import { isoOrNull } from '#shared/partners/payloads.ts';

describe("a partner's time", () => {
  it('is kept to the millisecond in UTC, however it was written', () => {
    const read = Object.fromEntries(
      ['2023-09-12T13:10:00Z', '2023-09-12T13:10:00.123456Z', '2023-09-12T14:10:00+01:00', '2024-02-29'].map(
        (given) => [given, isoOrNull(given)],
      ),
    );
    expect(read).toEqual({
      '2023-09-12T13:10:00Z': '2023-09-12T13:10:00.000Z',
      '2023-09-12T13:10:00.123456Z': '2023-09-12T13:10:00.123Z',
      '2023-09-12T14:10:00+01:00': '2023-09-12T13:10:00.000Z',
      '2024-02-29': '2024-02-29T00:00:00.000Z',
    });
    // Compared as text with the times we write: the second after an expiry sorts after it.
    expect(String(isoOrNull('2023-09-12T13:10:00Z')) < '2023-09-12T13:10:00.500Z').toBe(true);
  });

  it('is no time when it names none: an impossible day or hour is never moved to another', () => {
    for (const value of [
      '2026-02-30T00:00:00Z',
      '2025-02-29T10:00:00Z',
      '2026-11-25T24:00:00Z',
      '2026-11-25T23:60:00Z',
      '2026-11-25T23:59:60Z',
      '2026-13-01',
      '+010000-01-01T00:00:00Z',
      'yesterday',
      42,
      null,
    ])
      expect(isoOrNull(value), String(value)).toBeNull();
  });
});
