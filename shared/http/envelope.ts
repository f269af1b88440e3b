import type { APIGatewayProxyResult } from 'aws-lambda';

/** What a handler returns: the stack wraps it in the success envelope of API.md §1. */
export interface Reply<T = unknown> {
  status?: number;
  message: string;
  /** Omitted from the envelope when undefined (the webhook's bare acknowledgement). */
  data?: T;
  meta?: { next_cursor: string | null };
  headers?: Record<string, string>;
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * A JSON response with the headers every response of the API carries. Never stored by a cache
 * (balances, transactions, secrets shown once) unless the handler says otherwise (`GET /banks`).
 */
export function jsonResult(
  statusCode: number,
  body: unknown,
  requestId: string,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: {
      'Cache-Control': 'no-store',
      ...headers,
      'Content-Type': JSON_CONTENT_TYPE,
      // JSON is never sniffed into something a browser runs (the dashboard's API is read by one).
      'X-Content-Type-Options': 'nosniff',
      'X-Request-Id': requestId,
    },
    body: JSON.stringify(body),
  };
}

/** Turns a handler's reply into the success envelope. */
export function successResult(reply: Reply, requestId: string): APIGatewayProxyResult {
  const body: Record<string, unknown> = { status: 'success', message: reply.message };
  if (reply.data !== undefined) body.data = reply.data;
  if (reply.meta) body.meta = reply.meta;
  return jsonResult(reply.status ?? 200, body, requestId, reply.headers);
}
