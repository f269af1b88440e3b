import { served } from '#functions/list-virtual-accounts.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's list virtual-accounts: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-list-virtual-accounts', served);
