import { afterEach, describe, expect, it } from 'vitest';
import { localDayBound } from '#infra/dashboard/app/format.ts';

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe("the dashboard's From and To days", () => {
  it("are the browser's days: a Lagos day starts and ends an hour before the UTC one", () => {
    process.env.TZ = 'Africa/Lagos';
    expect(localDayBound('2026-11-26', 'start')).toBe('2026-11-25T23:00:00.000Z');
    expect(localDayBound('2026-11-26', 'end')).toBe('2026-11-26T22:59:59.999Z');
    process.env.TZ = 'UTC';
    expect(localDayBound('2026-11-26', 'start')).toBe('2026-11-26T00:00:00.000Z');
  });

  it('end where the next day begins, also on a day whose last hour comes twice', () => {
    // Santiago turns its clocks back at midnight on 4 April 2026: 23:00-24:00 comes twice.
    process.env.TZ = 'America/Santiago';
    const end = localDayBound('2026-04-04', 'end');
    const next = localDayBound('2026-04-05', 'start');
    expect(Date.parse(String(next)) - Date.parse(String(end))).toBe(1);
  });

  it("are no bound when no day, or no day of the date picker's form, is given", () => {
    expect(localDayBound(undefined, 'start')).toBeUndefined();
    expect(localDayBound('', 'end')).toBeUndefined();
    expect(localDayBound('26/11/2026', 'end')).toBeUndefined();
  });
});
