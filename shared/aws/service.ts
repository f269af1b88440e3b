import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { isThrottlingError, isTransientError, StandardRetryStrategy } from '@smithy/core/retry';
import { HttpRequest } from '@smithy/core/transport';
import { NodeHttpHandler, streamCollector } from '@smithy/node-http-handler';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentityProvider, SdkError } from '@smithy/types';
import { callTimeout } from '#shared/deadline.ts';
import { within } from '#shared/time-limit.ts';

/*
 * AWS calls without a service's SDK client, for the few calls some functions make to API Gateway,
 * Cognito and Secrets Manager: the request as the client would send it, signed, sent and retried
 * by the SDK's own parts (its SigV4 signer, HTTP handler and standard retry strategy), which every
 * bundle already carries for DynamoDB. A client is the schemas of all its service's operations,
 * which esbuild cannot drop: 13-60 KB of a bundle and up to several milliseconds of its cold
 * start, for one to five requests. Each caller's tests hold its requests to the SDK client's.
 */

/**
 * A service's answer other than 2xx. Like the SDK's errors: its name is the error type the service
 * names (`NotFoundException`, `NotAuthorizedException`...), its message the service's, and
 * `$metadata` has the status, so the SDK's own checks tell throttling and transient errors from final ones.
 */
export class AwsServiceError extends Error {
  readonly $metadata: { httpStatusCode: number };
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = type;
    this.$metadata = { httpStatusCode: status };
  }
}

export interface ServiceOptions {
  /** The signing name and endpoint prefix: `apigateway`, `cognito-idp`, `secretsmanager`. */
  service: string;
  /** Required: unset (`AWS_REGION` missing), the first call fails and says so. */
  region: string | undefined;
  /** Where to send the calls; default: the region's public endpoint. */
  endpoint?: string;
  /** Default: the SDK's default chain (in a Lambda bundle, the execution role's environment). */
  credentials?: AwsCredentialIdentityProvider;
}

export interface ServiceRequest {
  method: string;
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: object;
  /** Whether to sign with SigV4; Cognito's user calls are not signed (the token is the proof). */
  signed?: boolean;
}

/**
 * A call of an AWS JSON 1.1 API (Cognito's user pools, Secrets Manager): `POST /`, the operation
 * named in `X-Amz-Target` (`secretsmanager.GetSecretValue`), the input as the JSON body.
 */
export function jsonTargetCall(target: string, input: object, signed = true): ServiceRequest {
  return {
    method: 'POST',
    path: '/',
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': target },
    body: input,
    signed,
  };
}

/** The SDK's attempts for a call (the first and two retries), for throttling and transient errors. */
const MAX_ATTEMPTS = 3;

/**
 * How long a call may take in all, its retries and their back-off included. The SDK's HTTP handler
 * has no timeout of its own: a service that accepts the connection and never answers would hold the
 * function until Lambda ends it, answering API Gateway's bodiless 5xx (for a transfer, after its
 * debit). These calls answer in tens of milliseconds when AWS is well. In a function, a call also
 * ends in time for its invocation to answer (`callTimeout`).
 */
export const CALL_TIMEOUT_MS = 4_000;

/**
 * A call that did not end within its time (`CALL_TIMEOUT_MS`, or what the invocation has left), or
 * was not started with too little left (no `timeoutMs`): named as the SDK names its own timeouts.
 */
export class AwsCallTimeout extends Error {
  override readonly name = 'TimeoutError';
  constructor(service: string, timeoutMs?: number) {
    super(
      timeoutMs === undefined
        ? `${service} was not called: the invocation has no time left for it`
        : `${service} did not answer within ${timeoutMs} ms`,
    );
  }
}

/** A function that sends requests to one AWS service and answers with the parsed JSON body. */
export function awsService({ service, region, endpoint, credentials = defaultProvider() }: ServiceOptions) {
  if (!region) throw new Error(`AWS_REGION is not set: no region to call ${service} in`);
  const base = new URL(
    endpoint ?? `https://${service}.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`,
  );
  const signer = new SignatureV4({ service, region, credentials, sha256: Sha256 });
  const http = new NodeHttpHandler();
  const retries = new StandardRetryStrategy(MAX_ATTEMPTS);

  async function once(
    { method, path, query = {}, headers = {}, body, signed = true }: ServiceRequest,
    abortSignal: AbortSignal,
  ) {
    const request = new HttpRequest({
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port ? Number(base.port) : undefined,
      method,
      path,
      query,
      headers: { host: base.host, ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const { response } = await http.handle(signed ? ((await signer.sign(request)) as HttpRequest) : request, {
      abortSignal,
    });
    const text = Buffer.from(await streamCollector(response.body)).toString('utf8');
    if (response.statusCode >= 200 && response.statusCode < 300) {
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    }
    // An error's body may not be JSON (a proxy's 502 page): its status still decides the retry.
    const json = jsonObject(text);
    // `x-amzn-ErrorType: NotFoundException:http://…` (REST) or `__type: com.amazonaws…#NotAuthorizedException` (JSON).
    const named = String(response.headers['x-amzn-errortype'] ?? json.__type ?? 'UnknownError');
    const type = named.split(':')[0]?.split('#').pop() || 'UnknownError';
    throw new AwsServiceError(response.statusCode, type, String(json.message ?? json.Message ?? text));
  }

  async function attempts(request: ServiceRequest, abortSignal: AbortSignal, timeoutMs: number) {
    let token = await retries.acquireInitialRetryToken(service);
    for (;;) {
      try {
        const result = await once(request, abortSignal);
        retries.recordSuccess(token);
        return result;
      } catch (error) {
        if (abortSignal.aborted) throw new AwsCallTimeout(service, timeoutMs);
        try {
          token = await retries.refreshRetryTokenForRetry(token, { errorType: errorType(error) });
        } catch {
          throw error;
        }
      }
    }
  }

  return async function send(request: ServiceRequest): Promise<Record<string, unknown>> {
    // Credentials are found before the clock starts (the provider keeps them): from an operator's
    // laptop (SSO, a credential process) that can outlast the call, and is not the service hanging.
    if (request.signed !== false) await credentials();
    // Within the invocation's time too (`shared/deadline.ts`): a handler making several calls in a
    // row (a key's roll on a cold start) would otherwise outlast its function, each call in time.
    const timeoutMs = callTimeout(CALL_TIMEOUT_MS);
    if (timeoutMs === undefined) throw new AwsCallTimeout(service);
    // The abort cuts an attempt in flight (and its body's read); the race also ends a back-off.
    const abort = new AbortController();
    return within(attempts(request, abort.signal, timeoutMs), timeoutMs, () => {
      abort.abort();
      return new AwsCallTimeout(service, timeoutMs);
    });
  };
}

function jsonObject(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
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
