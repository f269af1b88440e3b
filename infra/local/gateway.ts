import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync, inflateSync } from 'node:zlib';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { DASHBOARD_SITE_HEADERS, dashboardResponder } from '#infra/local/dashboard.ts';
import { docsResponder } from '#infra/local/docs.ts';
import { localLambdaContext } from '#infra/local/lambda-context.ts';
import { SlidingWindowLimiter } from '#infra/local/rate-limiter.ts';
import type { SessionVerifier } from '#infra/local/session-verifier.ts';
import { accessGrants, asFunction, enforceGrantsOfHandlers } from '#infra/local/table-grants.ts';
import { countsWithoutKey } from '#shared/definitions/keyless.ts';
import {
  API_KEY_AUTHORIZER,
  DASHBOARD_PREFIX,
  functionOf,
  handlerFile,
  OPENAPI_PATHS,
  RATE_LIMIT,
  ROUTES,
  type Route,
  servedPaths,
} from '#shared/definitions/routes.ts';
import { ApiError, MethodNotAllowed, RateLimited, Unauthorized } from '#shared/errors.ts';
import { errorResult, UNSUPPORTED_CODING } from '#shared/http/errors.ts';

/** API.md §11: headers and body must be complete within 30 seconds. */
const REQUEST_TIMEOUT_MS = 30_000;

/** What Node refuses before any handler runs, as the API's error. */
function clientErrorOf(error: NodeJS.ErrnoException): ApiError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError('payload_too_large', 'Request line or headers too large');
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'ERR_HTTP_HEADERS_TIMEOUT') {
    return new ApiError('request_timeout', 'The request was not complete within 30 seconds');
  }
  return new ApiError('validation_error', 'Malformed HTTP request');
}

/** The project's own functions: the authorizer comes from here whatever `rootDir` serves. */
const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** Bodies beyond this are refused by the gateway itself, as API Gateway refuses over 10 MB. */
const GATEWAY_MAX_BODY_BYTES = 1024 * 1024;

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

interface CompiledPath {
  route: Route;
  resource: string;
  pattern: RegExp;
  paramNames: string[];
}

export interface GatewayOptions {
  port: number;
  host?: string;
  /** Project root that handler files are resolved from. */
  rootDir: string;
  routes?: readonly Route[];
  /** Per-key limit; defaults to the shared RATE_LIMIT. */
  rateLimit?: { requests: number; windowSeconds: number };
  /** A request whose headers or body are not complete by then is answered 408 (API.md §11: 30 s). */
  requestTimeoutMs?: number;
  /** Checks a dashboard session's token (`session` routes); without it, those routes answer 401. */
  verifySession?: SessionVerifier;
}

export interface LocalGateway {
  url: string;
  server: Server;
  /** Routes that are served (their handler file exists). */
  routes: readonly Route[];
  /** Stops accepting; requests in flight are answered first (for up to `CLOSE_GRACE_MS`). */
  close(): Promise<void>;
}

const CLOSE_GRACE_MS = 10_000;

/**
 * Stops accepting connections and resolves once the requests in flight are answered: a webhook
 * being queued gets its answer before the queue behind it stops. Idle keep-alive connections are
 * closed as they become idle; whatever is still open after the grace period is cut.
 */
function closeGracefully(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(cut);
      resolve();
    });
  });
}

function compile(route: Route, resource: string): CompiledPath {
  const paramNames: string[] = [];
  const source = resource
    .split('/')
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (!param?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      paramNames.push(param[1]);
      return '([^/]+)';
    })
    .join('/');
  // A trailing slash reaches the same route, as API Gateway (REST) routes it.
  return { route, resource, pattern: new RegExp(`^${source}/?$`), paramNames };
}

/**
 * A request's path as sent, which API Gateway routes as it is: the WHATWG URL parser would resolve
 * dot segments (`/transactions/.` into `/transactions/`, `/a/%2e%2e/balance` into `/balance`) and
 * turn a backslash into a slash. The printable characters that parser percent-encodes in a path
 * are encoded alike (Node refuses a request line with control characters, spaces or other bytes).
 */
function sentPath(requestUrl: string): string {
  const path = requestUrl.startsWith('/') ? (requestUrl.split('?')[0] ?? '/') : new URL(requestUrl).pathname;
  return path.replace(
    /["<>`{}]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

/** The client address as API Gateway reports it: the socket peer, IPv4-mapped IPv6 unwrapped. */
function sourceIp(request: IncomingMessage): string {
  const address = request.socket.remoteAddress ?? '127.0.0.1';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

function readBody(request: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= GATEWAY_MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > GATEWAY_MAX_BODY_BYTES ? 'too_large' : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/**
 * A body as API Gateway hands it on (REST APIs decompress request bodies by default): decompressed
 * when its `Content-Encoding` is gzip or deflate, as sent when identity or none; any other coding,
 * or a body not compressed as it says, is API Gateway's 415. The header stays on the request.
 */
export function decodedBody(
  body: Buffer,
  encoding: string | undefined,
): Buffer | 'unsupported' | 'too_large' {
  const coding = (encoding ?? '').trim().toLowerCase();
  if (coding === '' || coding === 'identity' || body.length === 0) return body;
  const inflate = coding === 'gzip' ? gunzipSync : coding === 'deflate' ? inflateSync : undefined;
  if (!inflate) return 'unsupported';
  try {
    return inflate(body, { maxOutputLength: GATEWAY_MAX_BODY_BYTES });
  } catch (error) {
    return (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? 'too_large' : 'unsupported';
  }
}

function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  response.statusCode = result.statusCode;
  for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, String(value));
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    response.setHeader(name, values.map(String));
  }
  response.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

/** API.md §2's 429, with the limit headers and Retry-After. */
function rateLimited(
  requestId: string,
  retryAfterSeconds: number,
  headers: Record<string, string>,
): APIGatewayProxyResult {
  const result = errorResult(new RateLimited(retryAfterSeconds), requestId);
  return { ...result, headers: { ...headers, ...result.headers } };
}

/**
 * The token of `Authorization: Bearer <token>`, as API Gateway's Cognito authorizer reads its
 * identity source: exactly one such header, else none.
 */
function bearerToken(request: IncomingMessage): string | undefined {
  const values: string[] = [];
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]?.toLowerCase() === 'authorization')
      values.push(request.rawHeaders[i + 1] ?? '');
  }
  if (values.length !== 1) return undefined;
  const match = /^Bearer ([\w-]+\.[\w-]+\.[\w-]+)$/.exec(values[0] ?? '');
  return match?.[1];
}

/** Every header as sent, in API Gateway's two maps (null-prototype: a header may be called `__proto__`). */
function headerMaps(request: IncomingMessage) {
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] ?? '';
    const value = request.rawHeaders[i + 1] ?? '';
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  return { headers, multiValueHeaders };
}

function queryMaps(url: URL) {
  const query: Record<string, string> = Object.create(null);
  const multiValueQuery: Record<string, string[]> = Object.create(null);
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    multiValueQuery[name] = [...(multiValueQuery[name] ?? []), value];
  }
  const hasQuery = Object.keys(query).length > 0;
  return {
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
  };
}

/** The request context API Gateway gives an authorizer and a handler alike. */
function requestContextOf(
  request: IncomingMessage,
  url: URL,
  match: CompiledPath,
  apiId: string,
  requestId: string,
) {
  return {
    accountId: '000000000000',
    apiId,
    httpMethod: match.route.method,
    identity: { sourceIp: sourceIp(request) },
    path: url.pathname,
    protocol: `HTTP/${request.httpVersion}`,
    requestId,
    requestTimeEpoch: Date.now(),
    resourceId: match.route.name,
    resourcePath: match.resource,
    stage: 'local',
  };
}

/** What API Gateway hands a REQUEST authorizer: the same headers, query and identity as the handler's event. */
function toAuthorizerEvent(
  request: IncomingMessage,
  url: URL,
  match: CompiledPath,
  apiId: string,
  requestId: string,
): APIGatewayRequestAuthorizerEvent {
  const { method } = match.route;
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:local:000000000000:${apiId}/local/${method}${match.resource}`,
    resource: match.resource,
    path: url.pathname,
    httpMethod: method,
    ...headerMaps(request),
    ...queryMaps(url),
    pathParameters: null,
    stageVariables: null,
    requestContext: requestContextOf(
      request,
      url,
      match,
      apiId,
      requestId,
    ) as APIGatewayRequestAuthorizerEvent['requestContext'],
  };
}

function toEvent(
  request: IncomingMessage,
  url: URL,
  match: CompiledPath,
  params: Record<string, string>,
  body: Buffer,
  requestId: string,
  apiId: string,
  authorizer: Record<string, unknown> | null,
): APIGatewayProxyEvent {
  return {
    resource: match.resource,
    path: url.pathname,
    httpMethod: match.route.method,
    ...headerMaps(request),
    ...queryMaps(url),
    pathParameters: match.paramNames.length > 0 ? params : null,
    stageVariables: null,
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      ...requestContextOf(request, url, match, apiId, requestId),
      authorizer,
    } as APIGatewayProxyEvent['requestContext'],
  };
}

/**
 * The local stand-in for API Gateway: the routes of the route table whose handler file exists,
 * each request turned into a REST proxy event for its handler, unchanged from AWS.
 */
export async function startGateway(options: GatewayOptions): Promise<LocalGateway> {
  const served = (options.routes ?? ROUTES).filter((route) =>
    existsSync(path.join(options.rootDir, handlerFile(route))),
  );
  const compiled = served.flatMap((route) => servedPaths(route).map((resource) => compile(route, resource)));
  const handlers = new Map<string, Promise<ProxyHandler>>();
  // Each function's grants: its own route's (a route of a test's own table too), made once.
  const grantsOfFunction = new Map(
    served.map((route) => [route.name, accessGrants(route.access, route.auth)]),
  );
  const rateLimit = options.rateLimit ?? RATE_LIMIT;
  const limiter = new SlidingWindowLimiter(rateLimit.requests, rateLimit.windowSeconds * 1000);
  const loadHandler = (route: Route) => {
    let loaded = handlers.get(functionOf(route));
    if (!loaded) {
      const file = pathToFileURL(path.join(options.rootDir, handlerFile(route))).href;
      loaded = enforceGrantsOfHandlers()
        .then(() => import(file))
        .then((module: { handler: ProxyHandler }) => module.handler);
      handlers.set(functionOf(route), loaded);
    }
    return loaded;
  };

  let authorizerHandler: Promise<AuthorizerHandler> | undefined;
  /** The authorizer's verdict as API Gateway applies it: Unauthorized → 401, Deny → 429, Allow → on. */
  const authorize = async (event: APIGatewayRequestAuthorizerEvent) => {
    authorizerHandler ??= enforceGrantsOfHandlers()
      .then(
        () => import(pathToFileURL(path.join(PROJECT_ROOT, `functions/${API_KEY_AUTHORIZER.name}.ts`)).href),
      )
      .then((module: { handler: AuthorizerHandler }) => module.handler);
    let result: APIGatewayAuthorizerResult;
    try {
      const authorizer = await authorizerHandler;
      result = await asFunction(API_KEY_AUTHORIZER.name, () => authorizer(event));
    } catch (error) {
      if (error instanceof Error && error.message === 'Unauthorized') {
        return { refused: (requestId: string) => errorResult(new Unauthorized('authorizer'), requestId) };
      }
      throw error;
    }
    const allowed = result.policyDocument.Statement.every((statement) => statement.Effect === 'Allow');
    if (!allowed) {
      const retryAfter = Number(result.context?.retryAfterSeconds ?? rateLimit.windowSeconds);
      return { refused: (requestId: string) => rateLimited(requestId, retryAfter, {}) };
    }
    return {
      refused: undefined,
      usageIdentifierKey: result.usageIdentifierKey ?? '',
      context: { principalId: result.principalId, ...result.context },
    };
  };

  let docs: ReturnType<typeof docsResponder> | undefined;
  const dashboard = dashboardResponder();
  let apiId = 'local';
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const requestId = randomUUID();
    // The dashboard's API is reached through the dashboard's CloudFront on AWS, whose policy adds
    // the site's security headers to every answer, a refusal as much as a key's secret.
    if ((request.url ?? '').startsWith(`${DASHBOARD_PREFIX}/`)) {
      for (const [name, value] of Object.entries(DASHBOARD_SITE_HEADERS)) response.setHeader(name, value);
    }
    // Like API Gateway, the whole request is received before anything answers it: an early answer
    // would otherwise share the connection with the slow-request 408.
    const sent = await readBody(request);
    const body = sent === 'too_large' ? sent : decodedBody(sent, request.headers['content-encoding']);
    if (body === 'too_large') {
      return send(
        response,
        errorResult(new ApiError('payload_too_large', 'Request body too large'), requestId),
      );
    }
    if (body === 'unsupported') {
      return send(
        response,
        errorResult(new ApiError('unsupported_media_type', UNSUPPORTED_CODING), requestId),
      );
    }
    // Node keeps the first of a repeated Host; RFC 9112 §3.2 answers such a request 400.
    const hosts = request.rawHeaders.filter((value, i) => i % 2 === 0 && value.toLowerCase() === 'host');
    if (hosts.length > 1) {
      return send(
        response,
        errorResult(new ApiError('validation_error', 'Host header sent more than once'), requestId),
      );
    }
    if (request.httpVersion === '1.1' && request.headers.host === undefined) {
      return send(
        response,
        errorResult(
          new ApiError('validation_error', 'Missing Host header (HTTP/1.1 requires it)'),
          requestId,
        ),
      );
    }
    // A request target is a path or an absolute URL; `*` (OPTIONS) and a CONNECT's `host:port` are
    // neither, and name no route.
    const target = request.url ?? '/';
    if (!target.startsWith('/') && !/^https?:\/\//i.test(target)) {
      return send(
        response,
        errorResult(new ApiError('validation_error', 'Malformed HTTP request'), requestId),
      );
    }
    const url = new URL(target, 'http://localhost');
    const path = sentPath(target);
    /**
     * As WAF on AWS: counted per client IP with failed attempts and requests without a key; what
     * a route answers is counted by the authorizer or its handler instead.
     */
    const overKeylessLimit = async () => {
      if (!countsWithoutKey({ method: request.method ?? '', path, headers: request.headers }))
        return undefined;
      const { takeClientIpRequest } = await import('#shared/limits/client-ip.ts');
      const decision = await takeClientIpRequest(apiId, sourceIp(request));
      return decision.allowed ? undefined : rateLimited(requestId, decision.retryAfterSeconds, {});
    };
    if (OPENAPI_PATHS.includes(url.pathname)) {
      // API Gateway's own answer on AWS (GET only), behind WAF: counted as any keyless request.
      const page = request.method === 'GET' ? await docs?.(url.pathname, requestId) : undefined;
      if (page) return send(response, (await overKeylessLimit()) ?? page);
    } else if (request.method === 'GET' || request.method === 'HEAD') {
      // The docs page (local only) and the dashboard's files (CloudFront's on AWS, GET and HEAD;
      // Node leaves a HEAD answer's body out): not the API's, never counted.
      const page = (await docs?.(url.pathname, requestId)) ?? (await dashboard(url.pathname, requestId));
      if (page) return send(response, page);
    }
    const candidates = compiled
      .map((entry) => ({ entry, found: entry.pattern.exec(path) }))
      .filter(({ found }) => found !== null);
    const chosen = candidates.find(({ entry }) => entry.route.method === request.method);
    if (!chosen?.found) {
      const refused = await overKeylessLimit();
      if (refused) return send(response, refused);
      if (candidates.length === 0)
        return send(response, errorResult(new ApiError('route_not_found', 'Route not found'), requestId));
      const allow = [...new Set(candidates.map(({ entry }) => entry.route.method))].sort();
      return send(response, errorResult(new MethodNotAllowed(allow), requestId));
    }
    // API Gateway's order: the authorizer verifies the credentials (counting failed attempts per
    // client IP), then the usage plan counts the verified key. Public routes count per client IP,
    // here or, sharing the failed attempts' count, in their handler (`limitsClientIp`, as on AWS);
    // the partner webhook is never limited.
    let limitHeaders: Record<string, string> = {};
    let authorizer: Record<string, unknown> | null = null;
    const { auth, access } = chosen.entry.route;
    if (auth !== 'webhook' && !(auth === 'none' && access?.limitsClientIp)) {
      let bucket = `ip:${sourceIp(request)}`;
      if (auth === 'api_key') {
        const verdict = await authorize(toAuthorizerEvent(request, url, chosen.entry, apiId, requestId));
        if (verdict.refused) return send(response, verdict.refused(requestId));
        authorizer = verdict.context;
        bucket = `key:${verdict.usageIdentifierKey}`;
      }
      if (auth === 'session') {
        // API Gateway's Cognito authorizer: a valid ID token of the pool's app client, or 401.
        const token = bearerToken(request);
        const claims = token && options.verifySession ? await options.verifySession(token) : undefined;
        if (!claims) return send(response, errorResult(new Unauthorized('session'), requestId));
        authorizer = { claims };
        bucket = `user:${claims.sub}`;
      }
      const decision = limiter.take(bucket);
      limitHeaders = {
        'X-RateLimit-Limit': String(decision.limit),
        'X-RateLimit-Remaining': String(decision.remaining),
      };
      if (!decision.allowed)
        return send(response, rateLimited(requestId, decision.retryAfterSeconds, limitHeaders));
    }
    // As API Gateway (REST) passes them: percent-encoded as sent; the HTTP stack decodes them once.
    const params: Record<string, string> = Object.create(null);
    chosen.entry.paramNames.forEach((name, i) => {
      params[name] = chosen.found?.[i + 1] ?? '';
    });
    const event = toEvent(request, url, chosen.entry, params, body, requestId, apiId, authorizer);
    const handler = await loadHandler(chosen.entry.route);
    const functionName = functionOf(chosen.entry.route);
    const result = await asFunction(
      functionName,
      () => handler(event, localLambdaContext(functionName, requestId, REQUEST_TIMEOUT_MS)),
      grantsOfFunction.get(functionName) ?? accessGrants(chosen.entry.route.access, chosen.entry.route.auth),
    );
    send(response, { ...result, headers: { ...limitHeaders, ...result.headers } });
  };

  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server = createServer(
    // Node checks for overdue requests every `connectionsCheckingInterval`: often enough to keep
    // the answer within a second or two of the limit.
    {
      requestTimeout,
      headersTimeout: requestTimeout,
      connectionsCheckingInterval: Math.min(1000, requestTimeout),
      // Node's own answer to an HTTP/1.1 request without Host is a bare 400; `handle` gives the envelope.
      requireHostHeader: false,
    },
    (request, response) => {
      handle(request, response).catch((error: unknown) => {
        // A client that went away mid-body (or was timed out) has nobody left to answer.
        if (request.destroyed && (error as NodeJS.ErrnoException)?.code === 'ECONNRESET') return;
        console.error('local gateway: handler failed', error);
        if (!response.headersSent) send(response, errorResult(error, randomUUID()));
        else response.destroy();
      });
    },
  );
  // A client may end its side of the connection once its request is sent (a half-close). Node's
  // default then aborts the request and closes the socket, and the answer of a handler still at work
  // was lost (the request processed all the same); API Gateway answers. With this (an undocumented
  // but long-standing property of Node's http.Server), the answer is sent, then the socket closed.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // Node hands a CONNECT to `connect` listeners only (with none, it closes the connection
  // unanswered), on a socket without its error listener and outside the server's connections: it is
  // answered as any other method (405 on a known path), its errors (a client's reset) handled here,
  // and it is closed once answered.
  server.on('connect', (request: IncomingMessage, socket: Socket) => {
    socket.on('error', () => socket.destroy());
    const response = new ServerResponse(request);
    response.assignSocket(socket);
    response.shouldKeepAlive = false;
    response.on('finish', () => socket.destroySoon());
    request.push(null);
    handle(request, response).catch((error: unknown) => {
      console.error('local gateway: handler failed', error);
      if (!response.headersSent) send(response, errorResult(error, randomUUID()));
      else socket.destroy();
    });
  });
  // Requests Node refuses before any handler sees them (header block over 16 KiB, malformed
  // HTTP) still get the envelope and a request id.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return;
    const result = errorResult(clientErrorOf(error), randomUUID());
    const head = [
      `HTTP/1.1 ${result.statusCode} ${STATUS_CODES[result.statusCode] ?? ''}`,
      ...Object.entries(result.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
      `Content-Length: ${Buffer.byteLength(result.body)}`,
      'Connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${result.body}`);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${options.host ?? '127.0.0.1'}:${port}`;
  docs = docsResponder(url);
  // Each gateway is its own API: failed attempts are counted per API and client IP, as on AWS.
  apiId = `local-${port}`;
  return {
    url,
    server,
    routes: served,
    close: () => closeGracefully(server),
  };
}
