import * as z from 'zod/mini';
import { resolveAccount } from '#shared/accounts/resolve.ts';
import { createSession } from '#shared/accounts/sessions.ts';
import { httpHandler } from '#shared/http/stack.ts';
import { accountNumberSchema, bankCodeSchema } from '#shared/schemas.ts';

const body = z.strictObject({ account_number: accountNumberSchema, bank_code: bankCodeSchema });

/** POST /validate-account: name enquiry, and a session_id that stands in for the account for 30 min. */
export const handler = httpHandler('validate-account', { body }, async ({ body, caller }) => {
  const account = await resolveAccount(body.bank_code, body.account_number);
  const sessionId = await createSession(caller.merchantId, account);
  return { message: 'Account validated', data: { ...account, session_id: sessionId } };
});
