import * as v from 'valibot';
import { codePoints } from '#shared/text.ts';

/** A schema built only in bundles that use it (as `built` in `shared/contract/requests.ts`). */
/* @__NO_SIDE_EFFECTS__ */
function built<T>(build: () => T): T {
  return build();
}

/**
 * `schema`, refusing an array: valibot's object schemas take any `typeof 'object'`, so `[]` would
 * pass for `{}` (and `["x"]` for an object with a key `0`). `extra` adds issues after valibot's own
 * run. The schema's own `~run` is called on the schema it is run as (`this`), so `v.pick` and the
 * like keep working, and Standard Schema's `validate` is made for the result.
 */
function notAnArray<
  S extends
    | v.StrictObjectSchema<v.ObjectEntries, undefined>
    | v.LooseObjectSchema<v.ObjectEntries, undefined>,
>(
  schema: S,
  extra?: (
    self: S,
    input: object,
    result: v.OutputDataset<unknown, v.BaseIssue<unknown>>,
    config: v.Config<v.BaseIssue<unknown>>,
  ) => void,
): S {
  const { '~standard': _own, ...parts } = schema;
  const run = schema['~run'];
  return v._standardSchema<S>({
    ...parts,
    '~run'(dataset, config) {
      // The schema this is run as: this one, or one `v.pick` and the like made from it.
      const self = this as unknown as S;
      const input = dataset.value;
      if (Array.isArray(input)) {
        v._addIssue(self, 'type', dataset, config);
        return dataset as never;
      }
      const result = run.call(self, dataset, config);
      if (extra && input && typeof input === 'object') extra(self, input, result, config);
      return result as never;
    },
  } as Omit<S, '~standard'>);
}

/**
 * A JSON object with exactly these fields, as every merchant request is (API.md §1: unknown fields
 * are refused). `v.strictObject`, but an array is not an object, and every unknown field is named
 * (valibot names the first only).
 */
export function strictObject<const E extends v.ObjectEntries>(
  entries: E,
): v.StrictObjectSchema<E, undefined> {
  return notAnArray(v.strictObject(entries), (self, input, result, config) => {
    // With abortEarly the first issue is all the caller wants.
    if (config.abortEarly && result.issues) return;
    const named = new Set(
      (result.issues ?? [])
        .filter((issue) => issue.expected === 'never' && issue.path?.length === 1)
        .map((issue) => issue.path?.[0]?.key),
    );
    for (const key of Object.keys(input)) {
      if (Object.hasOwn(self.entries, key) || named.has(key)) continue;
      const value = (input as Record<string, unknown>)[key];
      v._addIssue(self, 'key', result, config, {
        input: key,
        expected: 'never',
        path: [{ type: 'object', origin: 'key', input: input as Record<string, unknown>, key, value }],
      });
    }
  });
}

/** `v.looseObject` (unknown fields kept and ignored), but an array is not an object. */
export function looseObject<const E extends v.ObjectEntries>(entries: E): v.LooseObjectSchema<E, undefined> {
  return notAnArray(v.looseObject(entries));
}

/** Field schemas shared by the request schemas of several endpoints. */
export const accountNumberSchema = built(() =>
  v.pipe(
    v.string(),
    // [0-9], not \d, in the document too: Python's, Rust's and .NET's \d take any script's digits.
    v.regex(/^[0-9]{10}$/, 'Must be exactly 10 digits'),
    v.metadata({ description: '10-digit account number (NUBAN)', examples: ['0000014579'] }),
  ),
);

/** Any non-empty string: whether it names a bank is the domain's `unknown_bank`, not a shape error. */
export const bankCodeSchema = built(() =>
  v.pipe(
    v.string(),
    v.minLength(1, 'Must not be empty'),
    v.maxLength(10, 'Too long'),
    v.metadata({ description: 'CBN bank code from GET /banks', examples: ['058'] }),
  ),
);

/**
 * A merchant's reference: 1-64 of A-Z a-z 0-9 . _ - (the idempotency key of transfers), other than
 * `.` and `..`, which a URL path cannot carry: `GET /transactions/..` is not that transaction.
 */
export const referenceSchema = built(() =>
  v.pipe(
    v.string(),
    // Without a lookahead, which the regex engines of many generated clients lack (Go's, Rust's):
    // a first character that is no dot, or one dot then one that is not, or two dots then more.
    v.regex(
      /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}|\.[A-Za-z0-9_-][A-Za-z0-9._-]{0,62}|\.\.[A-Za-z0-9._-]{1,62})$/,
      'Must be 1-64 of A-Z a-z 0-9 . _ - (not . or ..)',
    ),
    v.metadata({
      description:
        'Your unique reference: 1-64 of A-Z a-z 0-9 . _ - (not . or .., which a URL path cannot carry)',
      examples: ['inv-2026-0042'],
    }),
  ),
);

/**
 * Free text a person reads: at most `max` characters, counted as JSON Schema's `maxLength` counts
 * them (code points, so an emoji is one), valid Unicode (no lone surrogate, which no UTF-8 can
 * carry, nor U+FFFD, which stands for bytes that were not UTF-8), one line (no U+2028, U+2029), no
 * control characters: neither C0/C1 controls nor the bidirectional overrides U+202D and U+202E,
 * with which a narration or a name can be made to read backwards ("Trojan Source"). The
 * embeddings, isolates and marks that formatting libraries insert around right-to-left names
 * (Fluent's U+2068…U+2069, Android's U+202A/U+202B…U+202C, U+200E, U+200F) stay allowed. The
 * pattern refuses all of these too, so the OpenAPI document says so; the checks before it name the
 * problem.
 */
export function textSchema(max: number) {
  return v.pipe(
    v.string(),
    v.check((text) => codePoints(text) <= max, `Must be at most ${max} characters`),
    v.metadata({ maxLength: max }),
    v.check((text) => !/\p{Cs}/u.test(text), 'Must be valid Unicode text (no lone surrogates)'),
    // U+FFFD is what bytes that are not UTF-8 become when decoded (by API Gateway, or our gateway):
    // a body sent in Latin-1 as UTF-8 must not store "caf\uFFFD" for "café" without a word.
    v.check(
      (text) => !text.includes('\uFFFD'),
      'Must be valid UTF-8 text (U+FFFD, the replacement character: was the body encoded otherwise?)',
    ),
    // Unicode's line and paragraph separators break a line as \n does (JavaScript's parsers, many
    // terminals and viewers): a one-line field holds neither.
    v.check(
      (text) => !/[\u2028\u2029]/.test(text),
      'Must be one line: no line or paragraph separator (U+2028, U+2029)',
    ),
    // The control characters (Unicode's Cc) as ranges, not `\p{Cc}`: the document's pattern must
    // read the same to a validator without Unicode mode, and to Python's `re`, which lack it.
    v.regex(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is what it is for.
      /^[^\u0000-\u001F\u007F-\u009F\u2028\u2029\u202D\u202E\uFFFD]*$/u,
      'Must not contain control characters',
    ),
  );
}

/**
 * What shows nothing on its own: white space and separators, format characters (zero-width
 * space, direction marks and isolates, the BOM), combining marks with no letter to sit on, and the
 * letters drawn blank (Hangul fillers, the Braille blank).
 */
const SHOWS_SOMETHING = /[^\s\p{Z}\p{Cf}\p{Mn}\p{Me}\u115F\u1160\u3164\uFFA0\u2800]/u;

/** Text (`textSchema`) that says something: neither empty nor made only of what shows nothing. */
export function namingTextSchema(max: number) {
  return v.pipe(
    textSchema(max),
    v.minLength(1, 'Must not be empty'),
    v.check((text) => SHOWS_SOMETHING.test(text), 'Must not be blank'),
  );
}

/**
 * An email address as the dashboard and virtual account customers give it: the pattern zod used
 * (dots between parts, an apostrophe allowed, a domain with a TLD of 2+ letters, or an
 * internationalised one in its ASCII form, `xn--p1ai`), kept when the schemas moved to valibot,
 * whose own `email` is stricter (no apostrophe: `o'brien@acme.ng`).
 */
export const EMAIL =
  /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+(?:[A-Za-z]{2,}|xn--[A-Za-z0-9-]+)$/;

/** The longest email address taken (RFC 5321's path limit, less its angle brackets). */
export const EMAIL_MAX = 254;

/**
 * Whether `text` is an email address as the API takes one (`EMAIL`, at most `EMAIL_MAX`): what the
 * operator CLI checks too, so that it never invites a user the dashboard's sign-in would refuse.
 */
export function isEmail(text: string): boolean {
  return text.length <= EMAIL_MAX && EMAIL.test(text);
}

/** An id or session id in a body: any reasonable string; whether it resolves is the domain's answer. */
export const opaqueIdSchema = built(() =>
  v.pipe(v.string(), v.minLength(1, 'Must not be empty'), v.maxLength(100, 'Too long')),
);

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** Whether year, month and day name a day of the Gregorian calendar (2024-02-29 does, 2026-02-30 not). */
function isCalendarDay(year: number, month: number, day: number): boolean {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day >= 1 && day <= days;
}

/** Whether hours, minutes and seconds name a time of day (no `24:00`, no leap second). */
function isTimeOfDay(hour: number, minute: number, second: number): boolean {
  return hour <= 23 && minute <= 59 && second <= 59;
}

/**
 * False when text that starts as an ISO date (`YYYY-MM-DD`, then maybe `Thh:mm[:ss]`) names an
 * impossible day or time of day there; true for any other text, which is not judged here.
 * `Date.parse` alone is not the check: it reads `2026-02-30` as 2 March and `T24:00` as the next day.
 */
export function hasNoImpossibleIsoDate(value: string): boolean {
  const parts = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(value);
  if (!parts) return true;
  const [, year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = parts.map((part) =>
    Number(part ?? 0),
  );
  return isCalendarDay(year, month, day) && isTimeOfDay(hour, minute, second);
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
 * An ISO 8601 date-time with its zone (`Z` or `±hh:mm`), seconds and a fraction of up to 9 digits
 * optional (Python's `isoformat()` gives 6; times are kept to the millisecond, so the rest is
 * dropped), naming a real day and time of day: no `2026-02-30T10:00Z`, no `24:00`, no leap second.
 */
export function isIsoDateTime(value: string): boolean {
  const parts = DATE_TIME.exec(value)?.map((part) => Number(part ?? 0));
  if (!parts) return false;
  const [, year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, zoneHour = 0, zoneMinute = 0] =
    parts;
  return (
    isCalendarDay(year, month, day) && isTimeOfDay(hour, minute, second) && zoneHour <= 23 && zoneMinute <= 59
  );
}
