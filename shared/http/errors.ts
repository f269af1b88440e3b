import type { APIGatewayProxyResult } from 'aws-lambda';
import { ApiError, type ErrorCode } from '#shared/errors.ts';
import { jsonResult } from '#shared/http/envelope.ts';
import { echoable } from '#shared/text.ts';

/** The one place where an error code gets its HTTP status (API.md §3). */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  validation_error: 400,
  unknown_bank: 400,
  invalid_account_number: 400,
  unauthorized: 401,
  invalid_signature: 401,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  duplicate_reference: 409,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  account_not_found: 422,
  insufficient_funds: 422,
  beneficiary_not_found: 422,
  session_expired: 422,
  bank_not_supported: 422,
  limit_reached: 422,
  invalid_url: 400,
  rate_limited: 429,
  internal_error: 500,
  partner_unavailable: 503,
};

/** The exact 401 body of API.md §2: no code, nothing that tells which check failed. */
export const UNAUTHORIZED_BODY = { status: 'error', message: 'Invalid API credentials' } as const;

const INTERNAL = new ApiError('internal_error', 'An internal error occurred');

/** Whether an error will be answered as a server fault (and so must be logged with its stack). */
export function isServerFault(error: unknown): boolean {
  return !(error instanceof ApiError) || STATUS_BY_CODE[error.code] >= 500;
}

/**
 * The error envelope for any thrown value. Anything that is not an `ApiError` becomes a plain 500:
 * its message, name and stack never reach the client.
 */
export function errorResult(error: unknown, requestId: string): APIGatewayProxyResult {
  const apiError = error instanceof ApiError ? error : INTERNAL;
  const status = STATUS_BY_CODE[apiError.code];
  if (apiError.code === 'unauthorized') return jsonResult(status, UNAUTHORIZED_BODY, requestId);
  const body: Record<string, unknown> = {
    status: 'error',
    message: echoable(apiError.message),
    code: apiError.code,
  };
  // A field's name and its message may echo what the caller sent (an unknown key, a refused value).
  if (apiError.details.errors)
    body.errors = apiError.details.errors.map(({ field, message }) => ({
      field: echoable(field),
      message: echoable(message),
    }));
  return jsonResult(status, body, requestId, apiError.details.headers);
}

/**
 * API Gateway's 415 for a body whose `Content-Encoding` it cannot decode (it decodes gzip and
 * deflate; the stack's gateway response and the local gateway say this).
 */
export const UNSUPPORTED_CODING =
  'Content-Encoding must be gzip, deflate or identity, and the body encoded as it says';
