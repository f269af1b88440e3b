import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { contentTypeOf, isUtf8Charset, repeatedQueryParameters } from '#shared/http/validation.ts';
import { duplicateKeys, scanJson } from '#shared/json.ts';
import { isIsoDate, isIsoDateTime, referenceSchema } from '#shared/schemas.ts';
import { handler as echo } from '#test/fixtures/functions/echo.ts';
import { handler as echoQuery } from '#test/fixtures/functions/echo-query.ts';
import { apiEvent, jsonEvent, lambdaContext } from '#test/support/events.ts';

/** API.md §11: ambiguous or impossible input is refused, never read one way of several. */

const roundedFractions = (text: string) => scanJson(text).roundedFractions;

describe('duplicate JSON keys', () => {
  it.each([
    ['{"amount":100,"amount":1000000000}', ['amount']],
    ['{"data":{"amount":1,"x":2,"amount":3}}', ['data.amount']],
    ['{"items":[{"a":1},{"b":1,"b":2}]}', ['items.1.b']],
    ['[{"a":1,"a":2}]', ['0.a']],
    // Equal once decoded, as JSON.parse compares them.
    ['{"a":1,"\\u0061":2}', ['a']],
    ['{"":1,"":2}', ['']],
    ['{"a":1,"a":2,"a":3,"b":1,"b":2}', ['a', 'b']],
  ])('finds them in %s', (text, paths) => {
    expect(duplicateKeys(text)).toEqual(paths);
  });

  it.each([
    '{"a":{"a":1},"b":{"a":1}}',
    '{"a":"\\"a\\":1,\\"a\\":2"}',
    '{"k":"{\\"k\\":1,\\"k\\":2}"}',
    '[{"a":1},{"a":2}]',
    '{"a\\\\":1,"a":2}',
    '"a"',
    '5',
    '{}',
  ])('finds none in %s (same key in different objects, or inside a string)', (text) => {
    expect(duplicateKeys(text)).toEqual([]);
  });

  it('agrees with a parse that keeps every key, for any JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.nat(), (value, seed) => {
        const text = JSON.stringify(value);
        expect(duplicateKeys(text)).toEqual([]);
        // Repeat the first key of the first non-empty object found: now it must be reported.
        const match = /\{("(?:[^"\\]|\\.)*"):/.exec(text);
        if (!match) return;
        const repeated = `${text.slice(0, match.index + 1)}${match[1]}:${seed},${text.slice(match.index + 1)}`;
        expect(JSON.parse(repeated)).toBeDefined();
        expect(duplicateKeys(repeated)).toHaveLength(1);
      }),
    );
  });

  it('scans thousands of nesting levels without a stack overflow, and reports at most 10', () => {
    const deep = `${'['.repeat(50_000)}{"a":1,"a":2}${']'.repeat(50_000)}`;
    expect(duplicateKeys(deep)).toHaveLength(1);
    const many = `{${Array.from({ length: 500 }, (_, i) => `"k${i}":1,"k${i}":2`).join(',')}}`;
    expect(duplicateKeys(many)).toHaveLength(10);
  });
});

describe('numbers whose fraction JSON.parse rounds away', () => {
  it.each([
    ['{"amount":999999999.99999999}', ['amount']],
    ['{"amount":100.000000000000001}', ['amount']],
    ['{"a":{"b":[1,2,3.0000000000000000001]}}', ['a.b.2']],
    ['{"amount":-1e-400}', ['amount']],
    ['{"amount":1e-400}', ['amount']],
    ['{"amount":12345678901234567.5}', ['amount']],
    ['[5.00000000000000001]', ['0']],
    // An exponent too long for a double is still an exponent: JSON.parse reads these as 0.
    [`{"amount":1e-${'9'.repeat(400)}}`, ['amount']],
    [`{"amount":10e-${'9'.repeat(400)}}`, ['amount']],
  ])('finds them in %s', (text, paths) => {
    expect(roundedFractions(text)).toEqual(paths);
  });

  it.each([
    '{"amount":100}',
    '{"amount":100.0}',
    '{"amount":1e2}',
    '{"amount":1.5e1}',
    '{"amount":100.5}',
    '{"amount":0.1}',
    '{"amount":1e400}',
    '{"amount":"999999999.99999999"}',
    '{"999999999.99999999":1}',
    '{"a":-12}',
    `{"amount":1e${'9'.repeat(400)}}`,
  ])('finds none in %s (whole as written, a fraction a double keeps, or not a number)', (text) => {
    expect(roundedFractions(text)).toEqual([]);
  });

  it('agrees with exact decimal arithmetic for any number JSON.stringify writes', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        // A double as JSON writes it is exactly that double: rounded away only if it is whole.
        expect(roundedFractions(JSON.stringify({ value }))).toEqual([]);
      }),
    );
  });

  it('says when it reported only some, and stops there: past 10 rounded numbers or 10 repeated keys', () => {
    const numbers = (n: number) => `{"x":[${Array(n).fill('1.00000000000000001').join(',')}]}`;
    expect(scanJson(numbers(10))).toMatchObject({ complete: true });
    expect(scanJson(numbers(11))).toMatchObject({ complete: false });
    expect(scanJson(numbers(11)).roundedFractions).toHaveLength(10);
    const keys = (n: number) =>
      `{${Array(n + 1)
        .fill('"k":1')
        .join(',')}}`;
    expect(scanJson(keys(10))).toMatchObject({ complete: true, duplicates: ['k'] });
    expect(scanJson(keys(11))).toMatchObject({ complete: false, duplicates: ['k'] });
  });
});

describe('content type and charset', () => {
  it.each([
    ['application/json', 'application/json', undefined],
    ['Application/JSON; Charset=UTF-8', 'application/json', 'utf-8'],
    ['application/json;charset="utf-8"', 'application/json', 'utf-8'],
    ['application/json; charset=utf-16', 'application/json', 'utf-16'],
    // Two charsets: the one that is not UTF-8, whichever comes first.
    ['application/json; charset=utf-8; charset=utf-16', 'application/json', 'utf-16'],
    ['application/json; charset=latin1; charset=utf-8', 'application/json', 'latin1'],
    ['application/json; charset=utf8; charset=UTF-8', 'application/json', 'utf8'],
    [undefined, '', undefined],
  ])('reads %s', (header, mediaType, charset) => {
    expect(contentTypeOf(header)).toEqual(charset ? { mediaType, charset } : { mediaType });
  });

  it('takes UTF-8 (or no charset) only', () => {
    for (const ok of [undefined, 'utf-8', 'utf8']) expect(isUtf8Charset(ok)).toBe(true);
    for (const no of ['utf-16', 'utf-16le', 'iso-8859-1', 'us-ascii', 'latin1', '']) {
      expect(isUtf8Charset(no)).toBe(false);
    }
  });
});

describe('repeated query parameters', () => {
  it('are read from the multi-value map of REST API events', () => {
    expect(
      repeatedQueryParameters({
        queryStringParameters: { type: 'debit', limit: '5' },
        multiValueQueryStringParameters: { type: ['credit', 'debit'], limit: ['5'] },
      }),
    ).toEqual(['type']);
  });

  it('are read from the raw query string of function URL events', () => {
    expect(repeatedQueryParameters({ rawQueryString: 'type=credit&limit=5&type=debit&type=x' })).toEqual([
      'type',
    ]);
    expect(repeatedQueryParameters({ rawQueryString: 'type=credit&limit=5' })).toEqual([]);
  });

  it('are none without a query', () => {
    expect(repeatedQueryParameters({ queryStringParameters: null })).toEqual([]);
  });
});

describe('query dates', () => {
  it.each(['2026-02-28', '2024-02-29', '2000-02-29', '2026-12-31', '2026-04-30'])('%s is a date', (value) => {
    expect(isIsoDate(value)).toBe(true);
  });

  it.each([
    '2026-02-29',
    '2026-02-30',
    '1900-02-29',
    '2026-04-31',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
    '2026-1-01',
  ])('%s is not', (value) => {
    expect(isIsoDate(value)).toBe(false);
  });

  it.each([
    '2026-11-30T10:15:00Z',
    '2026-11-30T10:15Z',
    '2026-11-30T23:59:59.999+01:00',
    '2024-02-29T00:00:00-05:30',
    // Python's isoformat() (microseconds), and nanoseconds: kept to the millisecond.
    '2026-11-21T10:15:30.123456+00:00',
    '2026-11-21T10:15:30.123456789Z',
  ])('%s is a date-time', (value) => {
    expect(isIsoDateTime(value)).toBe(true);
  });

  it.each([
    '2026-02-30T10:00:00Z',
    '2026-11-30T24:00:00Z',
    '2026-11-30T23:60:00Z',
    '2026-11-30T23:59:60Z',
    '2026-11-30T10:00:00+24:00',
    '2026-11-30T10:00:00+05:60',
    '2026-11-30T10:00:00',
    '2026-11-30 10:00:00Z',
    '2026-11-30T10:00:00.1234567890Z',
    '2026-11-30T10:00:00.Z',
  ])('%s is not', (value) => {
    expect(isIsoDateTime(value)).toBe(false);
  });
});

describe('the shared HTTP stack refuses ambiguous input', () => {
  type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  const invoke = async (handler: Handler, event: APIGatewayProxyEvent) => {
    const result = await handler(event, lambdaContext);
    return { ...result, json: JSON.parse(result.body) as Record<string, unknown> };
  };

  it('answers a body with a duplicated key 400, naming the key, instead of taking the last', async () => {
    const result = await invoke(echo, jsonEvent('{"amount":100,"amount":1000000000}'));
    expect(result.statusCode).toBe(400);
    expect(result.json).toEqual({
      status: 'error',
      message: 'Duplicate key in JSON body',
      code: 'validation_error',
      errors: [{ field: 'amount', message: 'Key given more than once' }],
    });
  });

  it('finds the duplicate in a base64-encoded body too', async () => {
    const event = jsonEvent('');
    event.body = Buffer.from('{"amount":1,"note":"a","note":"b"}').toString('base64');
    event.isBase64Encoded = true;
    const result = await invoke(echo, event);
    expect(result.statusCode).toBe(400);
    expect(result.json.errors).toEqual([{ field: 'note', message: 'Key given more than once' }]);
  });

  it.each(['utf-16', 'UTF-16LE', 'iso-8859-1', '"utf-32"'])(
    'answers charset=%s 415 unsupported_media_type',
    async (charset) => {
      const result = await invoke(
        echo,
        jsonEvent({ amount: 1 }, { 'Content-Type': `application/json; charset=${charset}` }),
      );
      expect(result.statusCode).toBe(415);
      expect(result.json).toMatchObject({ status: 'error', code: 'unsupported_media_type' });
    },
  );

  it('takes charset=utf-8 in any spelling', async () => {
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
      const result = await invoke(
        echo,
        jsonEvent({ amount: 1 }, { 'Content-Type': `application/json; charset=${charset}` }),
      );
      expect(result.statusCode, charset).toBe(201);
    }
  });

  it('answers a query parameter given twice 400 on a REST API event, naming it', async () => {
    const result = await invoke(
      echoQuery,
      apiEvent({
        httpMethod: 'GET',
        queryStringParameters: { type: 'debit' },
        multiValueQueryStringParameters: { type: ['credit', 'debit'] },
      }),
    );
    expect(result.statusCode).toBe(400);
    expect(result.json).toMatchObject({
      code: 'validation_error',
      errors: [{ field: 'query.type', message: 'Given more than once' }],
    });
  });

  it('answers a query parameter given twice 400 on a function URL event', async () => {
    const event = {
      ...apiEvent({ httpMethod: 'GET', queryStringParameters: { type: 'credit,debit' } }),
      multiValueQueryStringParameters: undefined,
      rawQueryString: 'type=credit&type=debit',
    } as unknown as APIGatewayProxyEvent;
    const result = await invoke(echoQuery, event);
    expect(result.statusCode).toBe(400);
    expect(result.json.errors).toEqual([{ field: 'query.type', message: 'Given more than once' }]);
  });

  it('answers an impossible date 400 and reads a real one', async () => {
    const query = (from: string) =>
      apiEvent({
        httpMethod: 'GET',
        queryStringParameters: { from },
        multiValueQueryStringParameters: { from: [from] },
      });
    const impossible = await invoke(echoQuery, query('2026-02-30'));
    expect(impossible.statusCode).toBe(400);
    expect(impossible.json.errors).toEqual([
      { field: 'query.from', message: expect.stringContaining('date') },
    ]);
    const real = await invoke(echoQuery, query('2024-02-29'));
    expect(real.statusCode).toBe(200);
    expect(real.json.data).toMatchObject({ from: '2024-02-29T00:00:00.000Z' });
  });
});

describe('date-time bounds finer than a millisecond', () => {
  it('rounds a start up and cuts an end, so nothing outside the bounds given is listed', async () => {
    const v = await import('valibot');
    const { listTransactionsRequest } = await import('#shared/contract/requests.ts');
    const bounds = (from: string, to: string) => v.parse(listTransactionsRequest.query, { from, to });
    expect(bounds('2026-11-21T10:15:30.1231Z', '2026-11-21T10:15:30.1239Z')).toMatchObject({
      from: '2026-11-21T10:15:30.124Z',
      to: '2026-11-21T10:15:30.123Z',
    });
    // Zeros past the millisecond are the millisecond itself.
    expect(bounds('2026-11-21T10:15:30.123000+00:00', '2026-11-21T11:15:30.123999+01:00')).toMatchObject({
      from: '2026-11-21T10:15:30.123Z',
      to: '2026-11-21T10:15:30.123Z',
    });
  });
});

describe('a merchant reference', () => {
  // The rule as first written, with a lookahead that many generated clients' regex engines lack.
  const WITH_LOOKAHEAD = /^(?!\.\.?$)[A-Za-z0-9._-]{1,64}$/;

  it('is taken exactly as the lookahead rule takes it, for any string of its characters and others', () => {
    // size 'max': lengths up to 70 (fast-check's default keeps strings to about 10).
    const text = fc.string({
      unit: fc.constantFrom(...'.._-aZ09 /é'.split('')),
      minLength: 0,
      maxLength: 70,
      size: 'max',
    });
    fc.assert(
      fc.property(text, (reference) => {
        expect(v.safeParse(referenceSchema, reference).success).toBe(WITH_LOOKAHEAD.test(reference));
      }),
      { numRuns: 5_000 },
    );
    // Each form at its length bounds (64 taken, 65 not), which short random strings rarely reach.
    const bounds = [63, 64].flatMap((n) => [
      `a${'a'.repeat(n)}`,
      `.${'a'.repeat(n)}`,
      `..${'a'.repeat(n - 1)}`,
    ]);
    for (const reference of ['.', '..', '...', '.a', '..a', 'a.', ...bounds])
      expect(v.safeParse(referenceSchema, reference).success, reference).toBe(WITH_LOOKAHEAD.test(reference));
  });
});
