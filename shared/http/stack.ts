import { randomUUID } from 'node:crypto';
import middy, { type MiddlewareObj } from '@middy/core';
import jsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as v from 'valibot';
import { hasRepeatedCredentials } from '#shared/api-keys/credential-headers.ts';
import { withinInvocation } from '#shared/deadline.ts';
import {
  ROUTES,
  type Route,
  type RouteAuth,
  routesServedBy,
  servedPaths,
} from '#shared/definitions/routes.ts';
import { ApiError, RateLimited, Unauthorized, ValidationError } from '#shared/errors.ts';
import { type Reply, successResult } from '#shared/http/envelope.ts';
import { errorResult, isServerFault } from '#shared/http/errors.ts';
import { idempotencyKeyOf } from '#shared/http/idempotency.ts';
import {
  contentTypeOf,
  headerValues,
  isUtf8Charset,
  parseOrThrow,
  repeatedQueryParameters,
  type Schema,
} from '#shared/http/validation.ts';
import { scanJson } from '#shared/json.ts';
import type { ClientIpDecision } from '#shared/limits/client-ip.ts';
import { logger } from '#shared/logger.ts';
import type { WebhookDelivery } from '#shared/partners/partner.ts';
import { cutText } from '#shared/text.ts';

/** Largest request body the API accepts (API.md §3: 413 above it). */
export const MAX_BODY_BYTES = 16 * 1024;

/** Largest partner webhook body (API.md §11): partners' payloads carry more than merchants' requests. */
export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;

/** API.md §3: a body that is not `application/json` is 415 (`+json` types are other formats, not JSON bodies). */
const JSON_MEDIA_TYPE = /^application\/json$/;

type Request = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, Internal>;
type Internal = {
  requestId: string;
  startedAt: number;
  /** `X-RateLimit-*` of a route that counts its client IP's requests itself. */
  limitHeaders?: Record<string, string>;
};
type Middleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, Internal>;

/** How one endpoint is called: its input schemas. Handlers receive the parsed, typed input. */
export interface EndpointSpec<
  B extends Schema | undefined,
  Q extends Schema | undefined,
  P extends Schema | undefined,
> {
  body?: B;
  query?: Q;
  params?: P;
  /** The body may be absent altogether (no content type needed then); when sent, it is checked. */
  bodyOptional?: boolean;
  /** The route takes an `Idempotency-Key` header (`shared/http/idempotency.ts`), checked when sent. */
  idempotencyKey?: boolean;
}

type Parsed<S> = S extends Schema ? v.InferOutput<S> : undefined;

/** The validated request a public handler works with. */
export interface PublicInput<B, Q, P> {
  body: Parsed<B>;
  query: Parsed<Q>;
  params: Parsed<P>;
  requestId: string;
  /** The `Idempotency-Key` sent, on a route that takes one (`EndpointSpec.idempotencyKey`). */
  idempotencyKey?: string;
}

/**
 * Who is calling, as the gate verified it: the merchant, and either the API key (`api_key` routes)
 * or the dashboard user (`session` routes).
 */
export interface Caller {
  merchantId: string;
  apiKey?: string;
  /** The dashboard user: Cognito's `sub` and the user's email. */
  user?: { sub: string; email?: string };
}

/** The validated, authenticated request of a merchant's handler. */
export interface MerchantInput<B, Q, P> extends PublicInput<B, Q, P> {
  caller: Caller;
}

/** An endpoint's input schemas and domain call, servable on an `api_key` and a `session` route alike. */
export interface Endpoint<
  B extends Schema | undefined,
  Q extends Schema | undefined,
  P extends Schema | undefined,
> {
  spec: EndpointSpec<B, Q, P>;
  handle: (input: MerchantInput<B, Q, P>) => Promise<Reply>;
}

/** Names an endpoint once, so the merchant API and the dashboard serve the very same code. */
export function endpoint<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
>(spec: EndpointSpec<B, Q, P>, handle: (input: MerchantInput<B, Q, P>) => Promise<Reply>): Endpoint<B, Q, P> {
  return { spec, handle };
}

/** The claim of a dashboard user's ID token that names the merchant (set by the operator, read-only to users). */
export const MERCHANT_CLAIM = 'custom:merchant_id';

/**
 * A request's path as logged: a secret a caller put in it by mistake (`/transactions/sk_…`, in
 * place of a reference) never reaches the logs (DESIGN.md: logs never contain secrets).
 */
export function withoutSecrets(path: string | undefined): string | undefined {
  // To the path's end: a webhook secret is base64, `/` included; after anything but a letter (a
  // pasted space is `%20sk_…`), so `task_1` is kept.
  return path?.replace(/(?<![A-Za-z])(sk|whsec)_.*/s, '$1_[redacted]');
}

/**
 * Request id, lower-cased header names, request logging; and, last of all, the headers every
 * response carries. Registered first so that its `after`/`onError` run after everything else.
 */
function observe(): Middleware {
  const finish = (request: Request) => {
    const { requestId, startedAt } = request.internal;
    const response = request.response ?? errorResult(request.error, requestId);
    request.response = response;
    const { event } = request;
    const v2 = event.requestContext as unknown as { http?: { method: string } };
    logger.info('request completed', {
      method: event.httpMethod ?? v2.http?.method,
      path: withoutSecrets(event.path ?? (event as unknown as { rawPath?: string }).rawPath),
      status: response.statusCode,
      duration_ms: Date.now() - startedAt,
    });
  };
  return {
    before: (request) => {
      const requestId = request.event.requestContext?.requestId || randomUUID();
      request.internal.requestId = requestId;
      request.internal.startedAt = Date.now();
      request.event.requestContext = { ...request.event.requestContext, requestId };
      logger.resetKeys();
      logger.appendKeys({ request_id: requestId });
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(request.event.headers ?? {})) {
        headers[name.toLowerCase()] = value;
      }
      request.event.headers = headers;
    },
    after: finish,
    onError: finish,
  };
}

/** Typed errors to the envelope of API.md §3; anything else to a 500 that reveals nothing. */
function mapErrors(): Middleware {
  return {
    onError: (request) => {
      // The partner down is answered 503, as API.md says: an expected answer, logged without a
      // stack, but with its cause (the call's error; the sandbox adapter logs no line of its own).
      if (request.error instanceof ApiError && request.error.code === 'partner_unavailable')
        logger.warn('request answered 503: partner unavailable', { cause: causeOf(request.error.cause) });
      else if (isServerFault(request.error)) logger.error('request failed', request.error as Error);
      request.response = errorResult(request.error, request.internal.requestId);
    },
  };
}

/** An error's cause in a log line: fetch's "fetch failed" with the system's code (ECONNREFUSED…). */
function causeOf(cause: unknown): string {
  if (cause === undefined) return 'none given';
  const code = (cause as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' ? `${String(cause)} (${code})` : String(cause);
}

/** Counts a request of a client IP against an API's per-IP limit (`takeClientIpRequest`). */
export type ClientIpLimit = (apiId: string, sourceIp: string) => Promise<ClientIpDecision>;

/**
 * The per-client-IP limit of a public route that counts itself (`limitsClientIp`), shared with the
 * failed attempts the authorizer counts: each request is counted before anything else is checked;
 * past the limit, 429 with `Retry-After`. Every answer carries the IP's `X-RateLimit-*`.
 * Registered before `mapErrors`, so its `onError` sees the error's response.
 */
function limitClientIp(take: ClientIpLimit): Middleware {
  const addHeaders = (request: Request) => {
    const { limitHeaders } = request.internal;
    if (limitHeaders && request.response) {
      request.response.headers = { ...request.response.headers, ...limitHeaders };
    }
  };
  return {
    before: async (request) => {
      const { apiId, identity } = request.event.requestContext;
      const decision = await take(apiId || 'api', identity?.sourceIp || 'unknown');
      request.internal.limitHeaders = {
        'X-RateLimit-Limit': String(decision.limit),
        'X-RateLimit-Remaining': String(decision.remaining),
      };
      if (!decision.allowed) throw new RateLimited(decision.retryAfterSeconds);
    },
    after: addHeaders,
    onError: addHeaders,
  };
}

/**
 * The merchant the gate verified: API Gateway's REQUEST authorizer on AWS, the local gateway running
 * the same authorizer locally, put it in `requestContext.authorizer`. No handler verifies secrets
 * (DESIGN.md "Who is calling"); a request without that context, or whose credential headers are
 * repeated (which a cached verdict could otherwise let through), is the one 401.
 */
function requireCaller(): Middleware {
  return {
    before: (request) => {
      const { requestContext, headers, multiValueHeaders } = request.event;
      const context = (requestContext.authorizer ?? {}) as Record<string, unknown>;
      const { merchantId, apiKey } = context;
      if (typeof merchantId !== 'string' || !merchantId || typeof apiKey !== 'string' || !apiKey) {
        logger.error('no verified caller in the request context: is the route behind the authorizer?');
        throw new Unauthorized('no authorizer context');
      }
      if (hasRepeatedCredentials(headers, multiValueHeaders)) {
        throw new Unauthorized('credential header sent more than once');
      }
      const caller: Caller = { merchantId, apiKey };
      request.event.requestContext.authorizer = { ...context, ...caller };
      logger.appendKeys({ merchant_id: merchantId });
    },
  };
}

/**
 * The dashboard user the gate verified: API Gateway's Cognito authorizer on AWS, the local gateway
 * checking the same ID token against the local stand-in's keys, put the token's claims in
 * `requestContext.authorizer.claims`. The merchant is the `custom:merchant_id` claim, which users
 * cannot change; a token without one (a user nobody assigned) is the one 401.
 */
function requireSession(): Middleware {
  return {
    before: (request) => {
      const context = (request.event.requestContext.authorizer ?? {}) as { claims?: unknown };
      const claims = (context.claims ?? {}) as Record<string, unknown>;
      const merchantId = claims[MERCHANT_CLAIM];
      const sub = claims.sub;
      if (typeof merchantId !== 'string' || !merchantId || typeof sub !== 'string' || !sub) {
        logger.warn('no dashboard user with a merchant in the request context');
        throw new Unauthorized('no session claims');
      }
      if (claims.token_use !== undefined && claims.token_use !== 'id') {
        throw new Unauthorized('not an ID token');
      }
      const email = typeof claims.email === 'string' ? claims.email : undefined;
      const caller: Caller = { merchantId, user: { sub, email } };
      request.event.requestContext.authorizer = { ...context, ...caller };
      logger.appendKeys({ merchant_id: merchantId, user_sub: sub });
    },
  };
}

/**
 * The gate of the route a request came in on. A function may serve a merchant route and the
 * dashboard's route of the same operation (`servedBy`); API Gateway names the resource it matched
 * (`event.resource`), and each resource has exactly one authorizer there: the REQUEST authorizer's
 * context is required on merchant paths, Cognito's claims on dashboard paths. A resource this
 * function does not serve gets its own route's gate.
 */
function gateOf(routes: readonly Route[]): Middleware {
  const byResource = new Map<string, Route>();
  for (const route of routes) for (const path of servedPaths(route)) byResource.set(path, route);
  const gates: Partial<Record<RouteAuth, Middleware>> = {
    api_key: requireCaller(),
    session: requireSession(),
  };
  return {
    before: (request) => {
      const served = byResource.get(request.event.resource) ?? routes[0];
      return served ? gates[served.auth]?.before?.(request) : undefined;
    },
  };
}

/** Size (413) of a body, counted in bytes as sent. */
function guardBodySize(maxBytes: number): Middleware {
  return {
    before: ({ event }) => {
      const raw = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64').length : Buffer.byteLength(raw);
      if (bytes > maxBytes) {
        throw new ApiError('payload_too_large', `Request body exceeds ${maxBytes} bytes`);
      }
    },
  };
}

/** Content type and charset (415) of a JSON body, checked before it is parsed. */
function guardJsonBody(): Middleware {
  return {
    before: ({ event }) => {
      // Sent twice, it could be read two ways (API Gateway keeps the last): refused, never guessed.
      const sent = headerValues(event.headers, event.multiValueHeaders, ['content-type'])['content-type'];
      if ((sent?.length ?? 0) > 1) {
        throw new ApiError('unsupported_media_type', 'Content-Type given more than once');
      }
      const { mediaType, charset } = contentTypeOf(event.headers['content-type']);
      if (!JSON_MEDIA_TYPE.test(mediaType)) {
        throw new ApiError('unsupported_media_type', 'Content-Type must be application/json');
      }
      if (!isUtf8Charset(charset)) {
        throw new ApiError('unsupported_media_type', 'Content-Type charset must be utf-8');
      }
      // The bare media type, so the parser's own check agrees with this one.
      event.headers['content-type'] = mediaType;
    },
  };
}

/**
 * middy's JSON parser, with a malformed body reported as the API's 400, and so is a key given twice
 * in one object: `JSON.parse` would silently keep the last (API.md §11).
 */
function parseJsonBody(): Middleware {
  const parser = jsonBodyParser();
  return {
    before: async (request) => {
      const { body, isBase64Encoded } = request.event;
      try {
        await parser.before?.(request as never);
      } catch {
        throw new ValidationError(
          [{ field: 'body', message: 'Body is not valid JSON' }],
          'Malformed JSON body',
        );
      }
      // Every body of the API is an object: a sent `null`, `false`, `0` or `""` is not one, and
      // must not pass for an absent body where the body is optional (`POST /keys` with `null` made
      // a key). Arrays are left to the schema, which names them the same way.
      const parsed: unknown = request.event.body;
      if (typeof parsed !== 'object' || parsed === null) {
        throw new ValidationError([{ field: 'body', message: 'Must be an object' }]);
      }
      const text = isBase64Encoded ? Buffer.from(body ?? '', 'base64').toString() : (body ?? '');
      // Named to the caller ten at most (the scan's own bound), each cut: a key can be long.
      const { duplicates, roundedFractions } = scanJson(text);
      const duplicated = duplicates.map((path) => cutText(path, 200));
      const rounded = roundedFractions.map((path) => cutText(path, 200));
      if (duplicated.length > 0) {
        throw new ValidationError(
          duplicated.map((field) => ({ field: field || 'body', message: 'Key given more than once' })),
          'Duplicate key in JSON body',
        );
      }
      // `999999999.99999999` parses as 1000000000: a fraction a double cannot keep is still one
      // (API.md §1: a fractional amount is a 400), never rounded into a whole number silently.
      if (rounded.length > 0) {
        throw new ValidationError(
          rounded.map((field) => ({
            field: field || 'body',
            message: 'Has a fraction too small for a JSON number to keep: it would read as a whole number',
          })),
        );
      }
    },
  };
}

/**
 * Query parameters given twice (`?type=credit&type=debit`) are ambiguous: 400 on every route
 * (API.md §11), never one of them, also where the route reads no query at all.
 */
function refuseRepeatedQuery(event: APIGatewayProxyEvent): undefined {
  const repeated = repeatedQueryParameters(event);
  if (repeated.length > 0) {
    throw new ValidationError(
      repeated.map((name) => ({ field: `query.${name}`, message: 'Given more than once' })),
      'Query parameter given more than once',
    );
  }
  return undefined;
}

/**
 * A route that reads no query refuses every query parameter, as the lists refuse one they do not
 * know (API.md §1 and §3: a typo never passes silently, `GET /balance?merchant_id=…` included).
 * Named as a strict object names an unknown field, without a schema: such a route's bundle (the
 * balance's among them) need not carry one.
 */
function refuseAnyQuery(event: APIGatewayProxyEvent): undefined {
  refuseRepeatedQuery(event);
  const names = Object.keys(event.queryStringParameters ?? {});
  if (names.length > 0) {
    throw new ValidationError(names.map((name) => ({ field: `query.${name}`, message: 'Unknown field' })));
  }
  return undefined;
}

function queryOrThrow<Q extends Schema>(schema: Q, event: APIGatewayProxyEvent): v.InferOutput<Q> {
  refuseRepeatedQuery(event);
  return parseOrThrow(schema, event.queryStringParameters ?? {}, 'query');
}

/**
 * Path parameters decoded once, here: API Gateway (REST) hands them over as sent, percent-encoded
 * (`reversal%3Atrf_1`), and so does the local gateway. A malformed escape is kept as sent (it then
 * names nothing). A null-prototype map: a parameter may be called `__proto__`.
 */
function decodedPathParameters(event: APIGatewayProxyEvent): Record<string, string> {
  const decoded: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value === undefined) continue;
    try {
      decoded[name] = decodeURIComponent(value);
    } catch {
      decoded[name] = value;
    }
  }
  return decoded;
}

function routeNamed(nameOrRoute: string | Route, auth: RouteAuth): Route {
  const route =
    typeof nameOrRoute === 'string'
      ? ROUTES.find((candidate) => candidate.name === nameOrRoute)
      : nameOrRoute;
  if (!route) throw new Error(`no route named ${String(nameOrRoute)} in shared/definitions/routes.ts`);
  const name = route.name;
  if (route.auth !== auth) throw new Error(`route ${name} is declared with auth ${route.auth}, not ${auth}`);
  return route;
}

/**
 * `handler` with its function's own time bounding its outside and AWS calls (`shared/deadline.ts`),
 * in each invocation only (Lambda's `context`; none without one).
 */
function withinItsTime<A extends unknown[], R>(handler: (...args: A) => R): (...args: A) => R {
  return (...args: A) => withinInvocation(args[1] as Partial<Context> | undefined, () => handler(...args));
}

/**
 * The one chain every HTTP handler goes through: observe, map errors, authenticate (where the route
 * table says so), guard and parse the JSON body, validate, call the domain, wrap the reply.
 */
function buildHandler<
  B extends Schema | undefined,
  Q extends Schema | undefined,
  P extends Schema | undefined,
>(
  route: Route,
  spec: EndpointSpec<B, Q, P>,
  handle: (input: MerchantInput<B, Q, P>) => Promise<Reply>,
  limit?: ClientIpLimit,
) {
  const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, Internal>().use(observe());
  if (Boolean(route.access?.limitsClientIp) !== Boolean(limit)) {
    throw new Error(`${route.name}: limitsClientIp in the route table and a client IP limit go together`);
  }
  if (limit) chain.use(limitClientIp(limit));
  chain.use(mapErrors());
  const routes = routesServedBy(route.name);
  const gated = routes.length > 0 ? routes : [route];
  if (gated.some((served) => served.auth === 'api_key' || served.auth === 'session'))
    chain.use(gateOf(gated));
  if (spec.body) {
    const sent = (event: APIGatewayProxyEvent) => (event.body ?? '') !== '';
    const onlyIfSent = (middleware: Middleware): Middleware =>
      spec.bodyOptional
        ? { before: (request) => (sent(request.event) ? middleware.before?.(request) : undefined) }
        : middleware;
    chain
      .use(onlyIfSent(guardJsonBody()))
      .use(onlyIfSent(guardBodySize(MAX_BODY_BYTES)))
      .use(onlyIfSent(parseJsonBody()));
  }
  const handler = chain.handler(async (event) => {
    const requestId = event.requestContext.requestId;
    const input = {
      caller: event.requestContext.authorizer as Caller | undefined,
      body: spec.body
        ? parseOrThrow(spec.body, spec.bodyOptional && !event.body ? undefined : event.body)
        : undefined,
      query: spec.query ? queryOrThrow(spec.query, event) : refuseAnyQuery(event),
      params: spec.params ? parseOrThrow(spec.params, decodedPathParameters(event), 'path') : undefined,
      idempotencyKey: spec.idempotencyKey ? idempotencyKeyOf(event) : undefined,
      requestId,
    } as MerchantInput<B, Q, P>;
    return successResult(await handle(input), requestId);
  });
  // Which route and schemas this handler serves: the contract tests check them against the document.
  return Object.assign(withinItsTime(handler), { route, spec });
}

/** What a webhook handler receives: the delivery exactly as sent, for signature checks. */
export interface WebhookInput extends WebhookDelivery {
  requestId: string;
}

/**
 * A handler for a partner webhook route (`auth: 'webhook'`): no API key, the size checked (256 KiB),
 * and the raw body handed over unparsed so the signature is verified on exactly what was sent.
 * The content type is not checked: a partner's label does not make a signed body more or less
 * JSON, and refusing a signed payment over it would leave the money uncredited (API.md §11); the
 * body itself is read as UTF-8 JSON after the signature. Accepts API Gateway REST events and
 * Lambda function URL (payload v2) events alike.
 */
export function webhookHandler(route: string | Route, handle: (input: WebhookInput) => Promise<Reply>) {
  routeNamed(route, 'webhook');
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, Internal>()
    .use(observe())
    .use(mapErrors())
    .use(guardBodySize(MAX_WEBHOOK_BODY_BYTES))
    .handler(async (event) => {
      const raw = event.body ?? '';
      const rawBody = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      const requestId = event.requestContext.requestId;
      // REST API events carry the address in `identity`, function URL (v2) events in `http`.
      const context = event.requestContext as typeof event.requestContext & { http?: { sourceIp?: string } };
      const sourceIp = context.identity?.sourceIp ?? context.http?.sourceIp;
      return successResult(await handle({ rawBody, headers: event.headers, sourceIp, requestId }), requestId);
    });
  return withinItsTime(handler);
}

/**
 * A handler for a route that needs API credentials (`auth: 'api_key'` in the route table): the
 * domain call receives the authenticated `caller`. Given an `endpoint(…)`, it serves that endpoint
 * (which a dashboard route may serve too).
 */
export function httpHandler<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
>(route: string | Route, served: Endpoint<B, Q, P>): ReturnType<typeof buildHandler<B, Q, P>>;
export function httpHandler<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
>(
  route: string | Route,
  spec: EndpointSpec<B, Q, P>,
  handle: (input: MerchantInput<B, Q, P>) => Promise<Reply>,
): ReturnType<typeof buildHandler<B, Q, P>>;
export function httpHandler<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
>(
  route: string | Route,
  specOrServed: EndpointSpec<B, Q, P> | Endpoint<B, Q, P>,
  handle?: (input: MerchantInput<B, Q, P>) => Promise<Reply>,
) {
  const served =
    'handle' in specOrServed
      ? specOrServed
      : { spec: specOrServed, handle: handle as Endpoint<B, Q, P>['handle'] };
  return buildHandler(routeNamed(route, 'api_key'), served.spec, served.handle);
}

/**
 * A handler for a dashboard route (`auth: 'session'` in the route table): the domain call receives
 * the merchant of the signed-in user as `caller`, exactly as an `api_key` route's does.
 */
export function sessionHandler<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
>(route: string | Route, served: Endpoint<B, Q, P>) {
  return buildHandler(routeNamed(route, 'session'), served.spec, served.handle);
}

/**
 * A handler for a public route (`auth: 'none'`): no credentials needed, none checked. A route with
 * `limitsClientIp` passes the limit that counts it (`takeClientIpRequest`).
 */
export function publicHttpHandler<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
>(
  route: string | Route,
  spec: EndpointSpec<B, Q, P>,
  handle: (input: PublicInput<B, Q, P>) => Promise<Reply>,
  limit?: ClientIpLimit,
) {
  return buildHandler(routeNamed(route, 'none'), spec, handle, limit);
}
