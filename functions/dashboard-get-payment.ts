import { served } from '#functions/get-payment.ts';
import { sessionHandler } from '#shared/http/stack.ts';

/** The dashboard's get payment: the merchant API's very code, for the signed-in user's merchant. */
export const handler = sessionHandler('dashboard-get-payment', served);
