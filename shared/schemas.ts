import * as z from 'zod/mini';

/** Field schemas shared by the request schemas of several endpoints. */
export const accountNumberSchema = z.string().check(z.regex(/^\d{10}$/, 'Must be exactly 10 digits'));

/** Any non-empty string: whether it names a bank is the domain's `unknown_bank`, not a shape error. */
export const bankCodeSchema = z
  .string()
  .check(z.minLength(1, 'Must not be empty'), z.maxLength(10, 'Too long'));

export const sessionIdSchema = z.string().check(z.regex(/^ses_[0-9a-f]{32}$/, 'Not a session id'));
