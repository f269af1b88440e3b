import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { isThrottlingError, isTransientError, StandardRetryStrategy } from '@smithy/core/retry';
import { HttpRequest } from '@smithy/core/transport';
import { NodeHttpHandler, streamCollector } from '@smithy/node-http-handler';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentityProvider, SdkError } from '@smithy/types';

/**
 * The five API Gateway management calls the key lifecycle makes (find the usage plan, create a key,
 * add it to the plan, find a key by name, disable it), sent as the REST requests the SDK's
 * `@aws-sdk/client-api-gateway` sends, signed and retried by the SDK's own parts (its SigV4 signer,
 * HTTP handler and standard retry strategy), which every bundle already carries for DynamoDB.
 *
 * Why not the SDK client: it is 60 KB of every key route's bundle (the schemas of all 120
 * operations, which esbuild cannot drop, and the REST-JSON protocol) and 6-12 ms of its cold start,
 * for five requests. `test/unit/api-gateway.test.ts` checks each request against the one the SDK
 * client makes, and each answer read the same way.
 */
export interface ApiGateway {
  /** Every usage plan of the account and region (all pages). */
  getUsagePlans(): Promise<{ id: string; name?: string }[]>;
  createApiKey(key: {
    name: string;
    value: string;
    enabled: boolean;
    description: string;
  }): Promise<{ id: string }>;
  createUsagePlanKey(usagePlanId: string, keyId: string): Promise<void>;
  /** The keys whose name starts with `nameQuery` (API Gateway matches a prefix), without values. */
  getApiKeys(nameQuery: string): Promise<{ id: string; name?: string }[]>;
  updateApiKey(
    keyId: string,
    patchOperations: { op: 'replace'; path: string; value: string }[],
  ): Promise<void>;
}

/**
 * An API Gateway answer other than 2xx. Like the SDK's errors, its name is the error type the API
 * names (`NotFoundException`, `TooManyRequestsException`, ...) and `$metadata` has the status, so
 * the SDK's own checks tell throttling and transient errors from final ones.
 */
export class ApiGatewayError extends Error {
  readonly $metadata: { httpStatusCode: number };
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(`API Gateway ${status} ${type}: ${message}`);
    this.name = type;
    this.$metadata = { httpStatusCode: status };
  }
}

interface Options {
  region: string;
  /** Where to send the calls; default: the region's public endpoint. */
  endpoint?: string;
  /** Default: the SDK's default chain (in a Lambda bundle, the execution role's environment). */
  credentials?: AwsCredentialIdentityProvider;
}

/** The SDK's attempts for a call (the first and two retries), for throttling and transient errors. */
const MAX_ATTEMPTS = 3;

export function apiGateway({ region, endpoint, credentials = defaultProvider() }: Options): ApiGateway {
  const base = new URL(
    endpoint ?? `https://apigateway.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`,
  );
  const signer = new SignatureV4({ service: 'apigateway', region, credentials, sha256: Sha256 });
  const http = new NodeHttpHandler();
  const retries = new StandardRetryStrategy(MAX_ATTEMPTS);

  async function once(method: string, path: string, query: Record<string, string>, body?: object) {
    const request = new HttpRequest({
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port ? Number(base.port) : undefined,
      method,
      path,
      query,
      headers: {
        host: base.host,
        accept: 'application/json',
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const { response } = await http.handle((await signer.sign(request)) as HttpRequest);
    const text = Buffer.from(await streamCollector(response.body)).toString('utf8');
    const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (response.statusCode >= 200 && response.statusCode < 300) return json;
    const type =
      String(response.headers['x-amzn-errortype'] ?? json.__type ?? 'UnknownError').split(':')[0] ?? '';
    throw new ApiGatewayError(response.statusCode, type, String(json.message ?? json.Message ?? text));
  }

  async function call(method: string, path: string, query: Record<string, string> = {}, body?: object) {
    let token = await retries.acquireInitialRetryToken('apigateway');
    for (;;) {
      try {
        const result = await once(method, path, query, body);
        retries.recordSuccess(token);
        return result;
      } catch (error) {
        try {
          token = await retries.refreshRetryTokenForRetry(token, { errorType: errorType(error) });
        } catch {
          throw error;
        }
      }
    }
  }

  /** Every item of a listing, page by page (`position` names the next page). */
  async function all(path: string, query: Record<string, string>) {
    const items: Record<string, unknown>[] = [];
    let position: string | undefined;
    do {
      const page = await call('GET', path, { ...query, ...(position ? { position } : {}) });
      items.push(...((page.item as Record<string, unknown>[] | undefined) ?? []));
      position = page.position as string | undefined;
    } while (position);
    return items as { id: string; name?: string }[];
  }

  return {
    getUsagePlans: () => all('/usageplans', { limit: '500' }),
    async createApiKey(key) {
      const created = await call('POST', '/apikeys', {}, key);
      return { id: String(created.id) };
    },
    async createUsagePlanKey(usagePlanId, keyId) {
      await call(
        'POST',
        `/usageplans/${encodeURIComponent(usagePlanId)}/keys`,
        {},
        { keyId, keyType: 'API_KEY' },
      );
    },
    getApiKeys: (nameQuery) => all('/apikeys', { name: nameQuery, includeValues: 'false' }),
    async updateApiKey(keyId, patchOperations) {
      await call('PATCH', `/apikeys/${encodeURIComponent(keyId)}`, {}, { patchOperations });
    },
  };
}

/**
 * A failed attempt as the SDK's retry middleware classes it: throttled or transient (a 5xx, a
 * connection reset or timeout) are retried; anything else (a refusal, missing credentials) is final.
 */
function errorType(error: unknown): 'THROTTLING' | 'TRANSIENT' | 'CLIENT_ERROR' {
  const sdkError = error as SdkError;
  if (isThrottlingError(sdkError)) return 'THROTTLING';
  return isTransientError(sdkError) ? 'TRANSIENT' : 'CLIENT_ERROR';
}
