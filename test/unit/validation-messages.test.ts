import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  createApiKeyRequest,
  createBeneficiaryRequest,
  createTransferRequest,
  createVirtualAccountRequest,
  createWebhookEndpointRequest,
  listEventsRequest,
  listTransactionsRequest,
} from '#shared/contract/requests.ts';
import { ValidationError } from '#shared/errors.ts';
import { parseOrThrow } from '#shared/http/validation.ts';
import { strictObject } from '#shared/schemas.ts';

/** The field errors a value gets from a schema. */
function errorsOf(schema: Parameters<typeof parseOrThrow>[0], value: unknown, location?: string) {
  try {
    parseOrThrow(schema, value, location);
  } catch (error) {
    if (error instanceof ValidationError) return error.details.errors;
    throw error;
  }
  return [];
}

/** Text that shows nothing: white space, invisible format characters, a lone combining mark, blank letters. */
const BLANK = [
  ' ',
  '   ',
  '\u00a0\u2003',
  '\u3000',
  '\u200b',
  '\u2066\u2069',
  '\u200e',
  '\u0301',
  '\ufeff',
  '\u3164',
  '\u2800',
];
describe('validation messages', () => {
  it('say a missing field is required and a wrong type which type is expected', () => {
    expect(errorsOf(createTransferRequest.body, { amount: 1_000, reference: 42 })).toContainEqual({
      field: 'reference',
      message: 'Must be a string',
    });
    expect(errorsOf(createTransferRequest.body, { amount: 1_000 })).toContainEqual({
      field: 'reference',
      message: 'Required',
    });
    // "an" before a vowel: a body that is not an object, a list that is not an array.
    expect(errorsOf(createTransferRequest.body, [])).toEqual([
      { field: 'body', message: 'Must be an object' },
    ]);
    expect(errorsOf(createWebhookEndpointRequest.body, { url: 'https://a.example', events: 'x' })).toEqual([
      { field: 'events', message: 'Must be an array' },
    ]);
  });

  it('refuse the references a URL path cannot carry (. and ..), and only those', () => {
    for (const reference of ['.', '..']) {
      expect(errorsOf(createTransferRequest.body, { reference, amount: 1_000 })).toContainEqual({
        field: 'reference',
        message: 'Must be 1-64 of A-Z a-z 0-9 . _ - (not . or ..)',
      });
    }
    for (const reference of ['...', '.a', 'a..b', '_', '-']) {
      const fields = errorsOf(createTransferRequest.body, { reference, amount: 1_000 })?.map((e) => e.field);
      expect(fields).not.toContain('reference');
    }
  });

  it('name the allowed values of an enum', () => {
    expect(errorsOf(listTransactionsRequest.query, { type: 'refund' }, 'query')).toEqual([
      { field: 'query.type', message: 'Must be one of: credit, debit' },
    ]);
    expect(errorsOf(listEventsRequest.query, { type: 'payment' }, 'query')?.[0]?.message).toBe(
      'Must be one of: payment.received, virtual_account.paid, transfer.success, transfer.failed, transfer.reversed',
    );
  });

  it('name a query parameter as sent, an empty name too, where a body leaves an empty key out', () => {
    // `?=1` on a list is `query.`, as on a route that reads no query (`refuseAnyQuery`).
    expect(errorsOf(listTransactionsRequest.query, { '': '1', typo: 'x' }, 'query')).toEqual([
      { field: 'query.', message: 'Unknown field' },
      { field: 'query.typo', message: 'Unknown field' },
    ]);
    expect(errorsOf(createTransferRequest.body, { reference: 'r', amount: 1_000, '': 1 })).toEqual([
      { field: 'body', message: 'Unknown field' },
    ]);
  });

  it('keep the messages the schemas give, and name unknown fields', () => {
    expect(errorsOf(createTransferRequest.body, { reference: 'r', amount: 'x', typo: 1 })).toEqual(
      expect.arrayContaining([
        { field: 'amount', message: 'Must be an integer number of kobo' },
        { field: 'typo', message: 'Unknown field' },
      ]),
    );
  });

  it('refuse an array where an object is expected, at any depth, even when every field is optional', async () => {
    // valibot's own object schemas take any typeof 'object': `[]` would pass for `{}`.
    expect(errorsOf(createApiKeyRequest.body, [])).toEqual([{ field: 'body', message: 'Must be an object' }]);
    expect(errorsOf(createVirtualAccountRequest.body, { amount: 1_000, customer: ['a@b.ng'] })).toEqual([
      { field: 'customer', message: 'Must be an object' },
    ]);
    // Through the Standard Schema interface too, which valibot attaches to each schema.
    const standard = await createTransferRequest.body['~standard'].validate([]);
    expect('issues' in standard && standard.issues?.length).toBe(1);
  });

  it('name every unknown field, not only the first', () => {
    expect(errorsOf(createApiKeyRequest.body, { typo: 1, other: 2, third: 3 })).toEqual([
      { field: 'typo', message: 'Unknown field' },
      { field: 'other', message: 'Unknown field' },
      { field: 'third', message: 'Unknown field' },
    ]);
    expect(
      errorsOf(createVirtualAccountRequest.body, {
        amount: 1_000,
        customer: { name: 'A', email: 'a@b.ng', x: 1, y: 2 },
      }),
    ).toEqual([
      { field: 'customer.x', message: 'Unknown field' },
      { field: 'customer.y', message: 'Unknown field' },
    ]);
  });

  it('name unknown fields alike whatever valibot was asked (abortEarly: the first issue only)', () => {
    const schema = strictObject({ a: v.string() });
    expect(v.safeParse(schema, { a: 1, b: 1, c: 1 }, { abortEarly: true }).issues).toHaveLength(1);
    const all = v.safeParse(schema, { a: 'x', b: 1, c: 1 }).issues ?? [];
    expect(all.map((issue) => issue.path?.[0]?.key)).toEqual(['b', 'c']);
  });

  it("give a field's first failed check only, and refuse unsafe integers as zod did", () => {
    // 1.5 kobo is not a whole number: that it is also under the minimum is not news.
    expect(errorsOf(createTransferRequest.body, { reference: 'r', amount: 1.5 })).toEqual([
      { field: 'amount', message: 'Must be an integer number of kobo' },
    ]);
    expect(
      errorsOf(createVirtualAccountRequest.body, { amount: 1_000, expires_in_minutes: 2 ** 53 }),
    ).toEqual([{ field: 'expires_in_minutes', message: 'Must be a whole number of minutes' }]);
  });

  it("take an apostrophe in an email, as before (valibot's own email check would not)", () => {
    const customer = { name: "Ngozi O'Brien", email: "ngozi.o'brien@acme.ng" };
    expect(errorsOf(createVirtualAccountRequest.body, { amount: 1_000, customer })).toEqual([]);
    expect(
      errorsOf(createVirtualAccountRequest.body, { amount: 1_000, customer: { ...customer, email: 'a@b' } }),
    ).toEqual([{ field: 'customer.email', message: 'Must be an email address' }]);
  });

  it('refuse an empty or blank beneficiary nickname: left out, there is none', () => {
    const account = { account_number: '0123456789', bank_code: '058' };
    expect(errorsOf(createBeneficiaryRequest.body, { ...account, nickname: '' })).toEqual([
      { field: 'nickname', message: 'Must not be empty' },
    ]);
    for (const nickname of BLANK) {
      expect(errorsOf(createBeneficiaryRequest.body, { ...account, nickname })).toEqual([
        { field: 'nickname', message: 'Must not be blank' },
      ]);
    }
    expect(errorsOf(createBeneficiaryRequest.body, { ...account, nickname: ' Supplier ' })).toEqual([]);
    expect(errorsOf(createBeneficiaryRequest.body, account)).toEqual([]);
  });

  it('refuse a customer name of white space only (the partner would get no name)', () => {
    const email = 'ngozi@acme.ng';
    for (const name of BLANK) {
      expect(
        errorsOf(createVirtualAccountRequest.body, { amount: 1_000, customer: { name, email } }),
      ).toEqual([{ field: 'customer.name', message: 'Must not be blank' }]);
    }
    expect(
      errorsOf(createVirtualAccountRequest.body, { amount: 1_000, customer: { name: '', email } }),
    ).toEqual([{ field: 'customer.name', message: 'Must not be empty' }]);
    expect(
      errorsOf(createVirtualAccountRequest.body, { amount: 1_000, customer: { name: ' Ngozi ', email } }),
    ).toEqual([]);
    // A letter with its combining mark, or between direction marks, says something.
    for (const name of ['e\u0301', '\u2067\u0639\u0644\u064a\u2069', '\u{1F600}']) {
      expect(
        errorsOf(createVirtualAccountRequest.body, { amount: 1_000, customer: { name, email } }),
      ).toEqual([]);
    }
  });
});
