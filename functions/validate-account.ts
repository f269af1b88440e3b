import { resolveAccount } from '#shared/accounts/resolve.ts';
import { createSession } from '#shared/accounts/sessions.ts';
import { validateAccountRequest } from '#shared/contract/requests.ts';
import { httpHandler } from '#shared/http/stack.ts';

/** POST /validate-account: name enquiry, and a session_id that stands in for the account for 30 min. */
export const handler = httpHandler('validate-account', validateAccountRequest, async ({ body, caller }) => {
  const account = await resolveAccount(body.bank_code, body.account_number);
  const sessionId = await createSession(caller.merchantId, account);
  return { message: 'Account validated', data: { ...account, session_id: sessionId } };
});
