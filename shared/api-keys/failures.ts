import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { RATE_LIMIT } from '#shared/definitions/routes.ts';

/** One client's failed attempts in the current window, as counted. */
export interface FailureCount {
  attempts: number;
  /** Over the limit: the attempt must be answered 429, not 401. */
  limited: boolean;
  /** Whole seconds until the window (and so the limit) resets. */
  retryAfterSeconds: number;
}

const WINDOW_MS = RATE_LIMIT.windowSeconds * 1000;

/**
 * Counts a failed authentication attempt of one client IP against one API (API.md §11): failed
 * attempts and requests without a key share one limit per client IP, 100 a minute, so that knowing
 * a key id never spends its merchant's limit and an invented key never escapes the IP's. A fixed
 * one-minute window per IP, one atomic `ADD` per failure; valid credentials never come here.
 */
export async function countFailedAttempt(
  apiId: string,
  sourceIp: string,
  now = Date.now(),
): Promise<FailureCount> {
  const window = Math.floor(now / WINDOW_MS);
  const result = await dynamo.send(
    new UpdateCommand({
      TableName: tableName('authFailures'),
      Key: { window_key: `${apiId}#${sourceIp}#${window}` },
      UpdateExpression: 'ADD attempts :one SET #ttl = if_not_exists(#ttl, :ttl)',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':one': 1, ':ttl': Math.ceil(((window + 2) * WINDOW_MS) / 1000) },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const attempts = Number(result.Attributes?.attempts ?? 1);
  return {
    attempts,
    limited: attempts > RATE_LIMIT.requests,
    retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000)),
  };
}
