import { served } from '#functions/create-webhook-endpoint.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's create webhook-endpoint: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-create-webhook-endpoint', served);
