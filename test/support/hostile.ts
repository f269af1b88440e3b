import { Agent, request } from 'node:http';
import fc from 'fast-check';
import { findBank } from '#shared/banks/index.ts';
import { toNuban } from '#shared/banks/nuban.ts';

/**
 * Hostile input for the fuzz tests: arbitraries of values that a field's schema must refuse, junk
 * bodies, and a raw HTTP client that sends exactly what it is given (any method with any body, any
 * header, unparsed paths), which `fetch` would not.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A request as sent on the wire. `body` is the raw text; `undefined` sends none. */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/**
 * Sends a request to a `http://127.0.0.1:port` base URL exactly as given, from the loopback address
 * `from` if given (a client IP of its own, with the per-IP limit unspent).
 */
export function send(baseUrl: string, raw: RawRequest, from?: string): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        agent,
        ...(from ? { localAddress: from } : {}),
        host: url.hostname,
        port: url.port,
        method: raw.method,
        path: raw.path,
        headers: {
          ...headerSafe(raw.headers),
          ...(raw.body !== undefined ? { 'content-length': String(Buffer.byteLength(raw.body)) } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(raw.body);
  });
}

/** Header values as HTTP can carry them: characters no header may hold are dropped. */
function headerSafe(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '')]),
  );
}

/** Closes the raw client's kept-alive sockets. */
export function closeRawClient(): void {
  agent.destroy();
}

// ---------------------------------------------------------------------------------------------------
// Strings and numbers that mean trouble
// ---------------------------------------------------------------------------------------------------

/** Strings that look like numbers, or like something a parser may take for one. */
export const NUMBER_LIKE = [
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '1e309',
  '0x10',
  '0b11',
  '1_000',
  ' 100',
  '100 ',
  '+100',
  '100.0',
  '1e2',
  '١٠٠',
  '１００',
  '',
  'null',
  'undefined',
  'true',
];

/** Strings aimed at the parsers, stores and logs behind a field. */
export const NASTY_STRINGS = [
  "' OR '1'='1' --",
  '{"$gt":""}',
  '<script>alert(1)</script>',
  '../../../etc/passwd',
  '\u0024{jndi:ldap://127.0.0.1/x}',
  '%00',
  '\u0000',
  '\u202e\u0041\u0042',
  '\ufeff',
  'a\r\nX-Injected: 1',
  '#',
  'ben#',
  'acct#',
  'mer_00000000000000000000000',
  '__proto__',
  'constructor',
  '🤑💸',
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇',
];

/** Any text, including control characters and every plane of Unicode (no lone surrogates). */
export const anyText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
  fc.constantFrom(...NASTY_STRINGS, ...NUMBER_LIKE),
);

/** Text with lone surrogates too: valid as JSON escapes (`\ud800`), invalid as UTF-16 text. */
export const brokenText = fc.string({ unit: 'binary', minLength: 1, maxLength: 20 });

/** A string of about 10 KB: within the 16 KiB body limit, far over every field's own limit. */
export const hugeText = fc
  .tuple(fc.constantFrom('x', '9', 'é', '\u0007', '🤑', ' '), fc.integer({ min: 9_000, max: 10_240 }))
  .map(([unit, bytes]) => unit.repeat(Math.floor(bytes / Buffer.byteLength(unit))));

/** Numbers no amount field accepts: fractions, negatives, zero, huge, unsafe, non-finite as text. */
export const badAmountNumber = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
  fc.integer({ min: -1_000_000_000, max: 99 }),
  fc.integer({ min: 1_000_000_001, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(2 ** 53, 2 ** 53 + 2, 1e21, 1e300, -1e300, Number.MIN_VALUE, 0.1 + 0.2, 99.99999999),
);

/** A value of the wrong JSON type for a string field (or junk of any type). */
export const notAString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

/** A value of the wrong JSON type for a number field. */
export const notANumber = notAString.filter((value) => typeof value !== 'number');

/** Deeply nested junk (arrays or objects), from a few levels to thousands. */
export const deepJunk = fc
  .tuple(fc.constantFrom('[', '{"a":'), fc.integer({ min: 10, max: 3_000 }))
  .map(([open, depth]) => `${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}`);

/** Keys that attack objects built from JSON: prototypes and constructors. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

/** Text that is not JSON, or not the JSON of an object. */
export const malformedJson = fc.oneof(
  fc.constantFrom(
    '{',
    '{"amount":',
    '{"amount":1,}',
    "{'amount':1}",
    '{amount:1}',
    '{"a":1}{"b":2}',
    '[1,2',
    'NaN',
    'undefined',
    '{"a":NaN}',
    '{"a":Infinity}',
    '\u0000',
    '\ufeff{}',
    '{"a":"\\x41"}',
    '{"a":"\\u12"}',
    '',
    ' ',
    '// comment\n{}',
  ),
  fc.string({ unit: 'grapheme', maxLength: 30 }).filter((text) => !isJson(text)),
);

/**
 * Malformed JSON as the partner webhook reads it: also after a leading byte order mark, which it
 * skips (RFC 8259 allows it), so `\uFEFF{}` is JSON there, though not in the merchant API's bodies.
 */
export const malformedWebhookJson = malformedJson.filter(
  (text) => !(text.startsWith('\uFEFF') && isJson(text.slice(1))),
);

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** JSON text that parses, but not to an object. */
export const nonObjectJson = fc.oneof(
  fc
    .jsonValue({ maxDepth: 3 })
    .filter((value) => typeof value !== 'object' || value === null || Array.isArray(value))
    .map((value) => JSON.stringify(value)),
  fc.constantFrom('null', '[]', '[{}]', '0', '""', 'true', '"{}"', '1e400'),
);

// ---------------------------------------------------------------------------------------------------
// Field values that the request schemas must refuse
// ---------------------------------------------------------------------------------------------------

/** Anything that is not exactly 10 ASCII digits. */
export const badAccountNumber = fc
  .oneof(
    fc.stringMatching(/^\d{0,9}$/),
    fc.stringMatching(/^\d{11,30}$/),
    fc.stringMatching(/^[\d ]{10}$/),
    fc.constantFrom(
      '０１２３４５６７８９',
      '١٢٣٤٥٦٧٨٩٠',
      '012345678９',
      '0123456789\n',
      ' 0123456789',
      '-123456789',
    ),
    anyText,
    hugeText,
    notAString,
  )
  .filter((value) => !(typeof value === 'string' && /^\d{10}$/.test(value)));

/** A 10-digit number whose NUBAN check digit is wrong for `bankCode`. */
export function wrongCheckDigit(bankCode: string) {
  return fc.stringMatching(/^\d{9}$/).chain((serial) => {
    const right = toNuban(bankCode, serial).slice(-1);
    return fc
      .integer({ min: 0, max: 9 })
      .filter((digit) => String(digit) !== right)
      .map((digit) => `${serial}${digit}`);
  });
}

/** A bank code of the right shape that names no bank, or one of the wrong shape. */
export const badBankCode = fc.oneof(
  fc.string({ minLength: 1, maxLength: 10 }).filter((code) => findBank(code) === undefined),
  fc.constantFrom('', '00000000000', '058 ', ' 058', '58', '0058', '٠٥٨'),
  hugeText,
  notAString,
);

/** Not a reference: outside 1-64 of A-Z a-z 0-9 . _ - */
export const badReference = fc
  .oneof(
    fc.constantFrom('', 'has space', 'reversal:x', 'payment:x', 'a/b', 'a#b', 'r'.repeat(65), '../x', 'é'),
    anyText,
    hugeText,
    notAString,
  )
  .filter((value) => !(typeof value === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(value)));

/** Not an opaque id: empty, over 100 characters, or not a string. */
export const badOpaqueId = fc.oneof(
  fc.constant(''),
  fc.string({ minLength: 101, maxLength: 300 }),
  hugeText,
  notAString,
);

/** Text over `max` characters, or with a control character or a line separator, or not text. */
export function badText(max: number) {
  return fc.oneof(
    fc.string({ minLength: max + 1, maxLength: max + 50 }),
    hugeText,
    fc
      .tuple(fc.string({ maxLength: 10 }), fc.integer({ min: 0, max: 0x1f }), fc.string({ maxLength: 10 }))
      .map(([a, code, b]) => `${a}${String.fromCharCode(code)}${b}`),
    fc.constantFrom('\u007f', '\u0085', 'tab\there', 'line\nbreak', 'line\u2028sep', 'para\u2029sep'),
    notAString,
  );
}

/** Ids of the right shape that resolve to nothing (422 for ids in bodies, 404 in paths). */
export const unknownId = fc.oneof(
  fc.stringMatching(/^(ben|ses)_[0-9a-f]{8,40}$/),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }),
  fc.constantFrom(...NASTY_STRINGS.filter(Boolean)),
);
