import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { authenticate, type Caller } from '#shared/api-keys/authenticate.ts';
import { credentialValues, hasRepeatedCredentials } from '#shared/api-keys/credential-headers.ts';
import { Unauthorized } from '#shared/errors.ts';
import { takeClientIpRequest } from '#shared/limits/client-ip.ts';
import { logger } from '#shared/logger.ts';

/** What the gate decides about one request. */
export type Verdict =
  | { outcome: 'allow'; caller: Caller }
  | { outcome: 'unauthorized' }
  | { outcome: 'limited'; retryAfterSeconds: number };

/**
 * The gate in front of every `api_key` route (DESIGN.md "Who is calling"): key and secret verified
 * once; a failure counted against the client IP (429 past its limit, 401 before); a success handed
 * on with the merchant, to be counted against the key's own limit only.
 */
export async function authorizeRequest(event: APIGatewayRequestAuthorizerEvent): Promise<Verdict> {
  const sourceIp = event.requestContext?.identity?.sourceIp ?? 'unknown';
  const refuse = async (): Promise<Verdict> => {
    const decision = await takeClientIpRequest(event.requestContext?.apiId ?? 'api', sourceIp);
    if (decision.allowed) return { outcome: 'unauthorized' };
    logger.warn('failed attempts over the per-IP limit', { source_ip: sourceIp });
    return { outcome: 'limited', retryAfterSeconds: decision.retryAfterSeconds };
  };
  if (hasRepeatedCredentials(event.headers, event.multiValueHeaders)) {
    logger.warn('authentication failed', { reason: 'credential header sent more than once' });
    return refuse();
  }
  const values = credentialValues(event.headers, event.multiValueHeaders);
  try {
    const caller = await authenticate({
      apiKey: values['x-api-key']?.[0],
      apiSecret: values['x-api-secret']?.[0],
      sourceIp,
    });
    return { outcome: 'allow', caller };
  } catch (error) {
    if (error instanceof Unauthorized) return refuse();
    throw error;
  }
}
