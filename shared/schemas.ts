import * as z from 'zod/mini';

/** Field schemas shared by the request schemas of several endpoints. */
export const accountNumberSchema = z
  .string()
  .check(z.regex(/^\d{10}$/, 'Must be exactly 10 digits'))
  .register(z.globalRegistry, { description: '10-digit account number (NUBAN)', examples: ['0000014579'] });

/** Any non-empty string: whether it names a bank is the domain's `unknown_bank`, not a shape error. */
export const bankCodeSchema = z
  .string()
  .check(z.minLength(1, 'Must not be empty'), z.maxLength(10, 'Too long'))
  .register(z.globalRegistry, { description: 'CBN bank code from GET /banks', examples: ['058'] });

/** A merchant's reference: 1-64 of A-Z a-z 0-9 . _ - (the idempotency key of transfers). */
export const referenceSchema = z
  .string()
  .check(z.regex(/^[A-Za-z0-9._-]{1,64}$/, 'Must be 1-64 of A-Z a-z 0-9 . _ -'))
  .register(z.globalRegistry, {
    description: 'Your unique reference: 1-64 of A-Z a-z 0-9 . _ -',
    examples: ['inv-2026-0042'],
  });

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
export const opaqueIdSchema = z
  .string()
  .check(z.minLength(1, 'Must not be empty'), z.maxLength(100, 'Too long'));
