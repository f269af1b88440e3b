import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { RATE_LIMIT } from '#shared/definitions/routes.ts';

/** One request's place in its client IP's limit. */
export interface ClientIpDecision {
  /** Within the limit: the request goes on (a refused one is not counted). */
  allowed: boolean;
  limit: number;
  /** Requests the IP has left in the rolling window after this one. */
  remaining: number;
  /** Over the limit: whole seconds until the window has room again. */
  retryAfterSeconds: number;
}

const WINDOW_SECONDS = RATE_LIMIT.windowSeconds;

/**
 * Counts one request of a client IP against one API's per-IP limit (API.md §2, §11): failed
 * authentication attempts and requests without a key share it, 100 in any rolling 60 seconds, so
 * that knowing a key id never spends its merchant's limit and an invented key never escapes the
 * IP's. Valid credentials never come here.
 *
 * One item per client and second. The request is added to its second, whose atomic count gives it
 * its place among that second's requests; the 59 seconds before it are summed. Past the limit the
 * request takes itself back out and is refused: a refused request does not count, and of requests
 * racing in one second exactly as many get through as there is room for.
 */
export async function takeClientIpRequest(
  apiId: string,
  sourceIp: string,
  now = Date.now(),
): Promise<ClientIpDecision> {
  const clientKey = `${apiId}#${sourceIp}`;
  const second = Math.floor(now / 1000);
  const add = (hits: number) =>
    dynamo.send(
      new UpdateCommand({
        TableName: tableName('clientIpLimits'),
        Key: { client_key: clientKey, second },
        UpdateExpression: 'ADD hits :hits SET #ttl = if_not_exists(#ttl, :ttl)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':hits': hits, ':ttl': second + 2 * WINDOW_SECONDS },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
  const [added, { Items = [] }] = await Promise.all([
    add(1),
    dynamo.send(
      new QueryCommand({
        TableName: tableName('clientIpLimits'),
        KeyConditionExpression: 'client_key = :client AND #second BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#second': 'second' },
        ExpressionAttributeValues: {
          ':client': clientKey,
          ':from': second - WINDOW_SECONDS + 1,
          ':to': second - 1,
        },
        ConsistentRead: true,
      }),
    ),
  ]);
  const seconds = [
    ...Items.map((item) => ({ second: Number(item.second), hits: Number(item.hits ?? 0) })),
    { second, hits: Number(added.Attributes?.hits ?? 1) },
  ];
  const place = seconds.reduce((sum, entry) => sum + entry.hits, 0);
  const limit = RATE_LIMIT.requests;
  if (place <= limit) return { allowed: true, limit, remaining: limit - place, retryAfterSeconds: 0 };
  await add(-1);
  return {
    allowed: false,
    limit,
    remaining: 0,
    retryAfterSeconds: secondsUntilRoom(seconds, place - 1, now),
  };
}

/**
 * When the window, holding `counted` requests in `seconds` (ascending), next has room for one more:
 * once enough of its oldest seconds have left it (each leaves 60 s after it began).
 */
function secondsUntilRoom(
  seconds: readonly { second: number; hits: number }[],
  counted: number,
  now: number,
) {
  let leaving = 0;
  for (const { second, hits } of seconds) {
    leaving += hits;
    if (counted - leaving < RATE_LIMIT.requests) {
      return Math.max(1, Math.ceil(((second + WINDOW_SECONDS) * 1000 - now) / 1000));
    }
  }
  return WINDOW_SECONDS;
}
