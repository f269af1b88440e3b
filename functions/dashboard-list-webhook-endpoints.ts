import { served } from '#functions/list-webhook-endpoints.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's list webhook-endpoints: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-list-webhook-endpoints', served);
