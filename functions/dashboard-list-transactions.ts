import { served } from '#functions/list-transactions.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's list transactions: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-list-transactions', served);
