import { served } from '#functions/rotate-webhook-secret.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's rotate webhook-secret: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-rotate-webhook-secret', served);
