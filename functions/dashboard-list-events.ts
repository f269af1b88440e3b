import { served } from '#functions/list-events.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's list events: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-list-events', served);
