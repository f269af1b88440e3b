import { describe, expect, it } from 'vitest';
import {
  createTransferRequest,
  createWebhookEndpointRequest,
  listEventsRequest,
  listTransactionsRequest,
} from '#shared/contract/requests.ts';
import { ValidationError } from '#shared/errors.ts';
import { parseOrThrow } from '#shared/http/validation.ts';

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

  it('keep the messages the schemas give, and name unknown fields', () => {
    expect(errorsOf(createTransferRequest.body, { reference: 'r', amount: 'x', typo: 1 })).toEqual(
      expect.arrayContaining([
        { field: 'amount', message: 'Must be an integer number of kobo' },
        { field: 'typo', message: 'Unknown field' },
      ]),
    );
  });
});
