import { served } from '#functions/get-event.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's get event: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-get-event', served);
