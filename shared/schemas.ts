import * as z from 'zod/mini';

/** A schema built only in bundles that use it (as `built` in `shared/contract/requests.ts`). */
/* @__NO_SIDE_EFFECTS__ */
function built<T>(build: () => T): T {
  return build();
}

/** Field schemas shared by the request schemas of several endpoints. */
export const accountNumberSchema = built(() =>
  z
    .string()
    .check(z.regex(/^\d{10}$/, 'Must be exactly 10 digits'))
    .register(z.globalRegistry, { description: '10-digit account number (NUBAN)', examples: ['0000014579'] }),
);

/** Any non-empty string: whether it names a bank is the domain's `unknown_bank`, not a shape error. */
export const bankCodeSchema = built(() =>
  z
    .string()
    .check(z.minLength(1, 'Must not be empty'), z.maxLength(10, 'Too long'))
    .register(z.globalRegistry, { description: 'CBN bank code from GET /banks', examples: ['058'] }),
);

/**
 * A merchant's reference: 1-64 of A-Z a-z 0-9 . _ - (the idempotency key of transfers), other than
 * `.` and `..`, which a URL path cannot carry: `GET /transactions/..` is not that transaction.
 */
export const referenceSchema = built(() =>
  z
    .string()
    .check(z.regex(/^(?!\.\.?$)[A-Za-z0-9._-]{1,64}$/, 'Must be 1-64 of A-Z a-z 0-9 . _ - (not . or ..)'))
    .register(z.globalRegistry, {
      description:
        'Your unique reference: 1-64 of A-Z a-z 0-9 . _ - (not . or .., which a URL path cannot carry)',
      examples: ['inv-2026-0042'],
    }),
);

/** Free text a person reads: bounded, no control characters. */
export function textSchema(max: number) {
  return z
    .string()
    .check(
      z.maxLength(max, `Must be at most ${max} characters`),
      z.regex(/^[^\p{Cc}]*$/u, 'Must not contain control characters'),
    );
}

/** An id or session id in a body: any reasonable string; whether it resolves is the domain's answer. */
export const opaqueIdSchema = built(() =>
  z.string().check(z.minLength(1, 'Must not be empty'), z.maxLength(100, 'Too long')),
);

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** Whether year, month and day name a day of the Gregorian calendar (2024-02-29 does, 2026-02-30 not). */
function isCalendarDay(year: number, month: number, day: number): boolean {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day >= 1 && day <= days;
}

/**
 * `YYYY-MM-DD` naming a real day. `Date.parse` alone is not the check: it reads `2026-02-30` as
 * 2 March.
 */
export function isIsoDate(value: string): boolean {
  const parts = DATE.exec(value);
  return parts !== null && isCalendarDay(Number(parts[1]), Number(parts[2]), Number(parts[3]));
}

/**
 * An ISO 8601 date-time with its zone (`Z` or `±hh:mm`), seconds and milliseconds optional, naming
 * a real day and time of day: no `2026-02-30T10:00Z`, no `24:00`, no leap second.
 */
export function isIsoDateTime(value: string): boolean {
  const parts = DATE_TIME.exec(value)?.map((part) => Number(part ?? 0));
  if (!parts) return false;
  const [, year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, zoneHour = 0, zoneMinute = 0] =
    parts;
  return (
    isCalendarDay(year, month, day) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    zoneHour <= 23 &&
    zoneMinute <= 59
  );
}
