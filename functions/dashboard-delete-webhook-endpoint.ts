import { served } from '#functions/delete-webhook-endpoint.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's delete webhook-endpoint: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-delete-webhook-endpoint', served);
