import { served } from '#functions/redeliver-event.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's redeliver event: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-redeliver-event', served);
