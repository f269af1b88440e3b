import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { docsResponder } from '#infra/local/docs.ts';
import { SlidingWindowLimiter } from '#infra/local/rate-limiter.ts';
import { handlerFile, RATE_LIMIT, ROUTES, type Route, servedPaths } from '#shared/definitions/routes.ts';
import { ApiError, MethodNotAllowed } from '#shared/errors.ts';
import { errorResult } from '#shared/http/errors.ts';

/** Bodies beyond this are refused by the gateway itself, as API Gateway refuses over 10 MB. */
const GATEWAY_MAX_BODY_BYTES = 1024 * 1024;

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

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
}

export interface LocalGateway {
  url: string;
  server: Server;
  /** Routes that are served (their handler file exists). */
  routes: readonly Route[];
  close(): Promise<void>;
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
  return { route, resource, pattern: new RegExp(`^${source}$`), paramNames };
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

function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  response.statusCode = result.statusCode;
  for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, String(value));
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    response.setHeader(name, values.map(String));
  }
  response.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

function lambdaContext(functionName: string, requestId: string): Context {
  const deadline = Date.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function toEvent(
  request: IncomingMessage,
  url: URL,
  match: CompiledPath,
  params: Record<string, string>,
  body: Buffer,
  requestId: string,
): APIGatewayProxyEvent {
  // Null-prototype maps: a header or parameter may be called `constructor` or `__proto__`.
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] ?? '';
    const value = request.rawHeaders[i + 1] ?? '';
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  const query: Record<string, string> = Object.create(null);
  const multiValueQuery: Record<string, string[]> = Object.create(null);
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    multiValueQuery[name] = [...(multiValueQuery[name] ?? []), value];
  }
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource: match.resource,
    path: url.pathname,
    httpMethod: match.route.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
    pathParameters: match.paramNames.length > 0 ? params : null,
    stageVariables: null,
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      httpMethod: match.route.method,
      identity: { sourceIp: sourceIp(request) } as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      protocol: `HTTP/${request.httpVersion}`,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: match.route.name,
      resourcePath: match.resource,
      stage: 'local',
    },
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
  const rateLimit = options.rateLimit ?? RATE_LIMIT;
  const limiter = new SlidingWindowLimiter(rateLimit.requests, rateLimit.windowSeconds * 1000);
  const loadHandler = (route: Route) => {
    let loaded = handlers.get(route.name);
    if (!loaded) {
      const file = pathToFileURL(path.join(options.rootDir, handlerFile(route))).href;
      loaded = import(file).then((module: { handler: ProxyHandler }) => module.handler);
      handlers.set(route.name, loaded);
    }
    return loaded;
  };

  let docs: ReturnType<typeof docsResponder> | undefined;
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const requestId = randomUUID();
    const url = new URL(request.url ?? '/', 'http://localhost');
    const page = request.method === 'GET' ? await docs?.(url.pathname, requestId) : undefined;
    if (page) return send(response, page);
    const candidates = compiled
      .map((entry) => ({ entry, found: entry.pattern.exec(url.pathname) }))
      .filter(({ found }) => found !== null);
    if (candidates.length === 0) {
      return send(response, errorResult(new ApiError('route_not_found', 'Route not found'), requestId));
    }
    const chosen = candidates.find(({ entry }) => entry.route.method === request.method);
    if (!chosen?.found) {
      const allow = [...new Set(candidates.map(({ entry }) => entry.route.method))].sort();
      return send(response, errorResult(new MethodNotAllowed(allow), requestId));
    }
    // Per API key, or per client IP without one; the partner webhook is never limited.
    let limitHeaders: Record<string, string> = {};
    if (chosen.entry.route.auth !== 'webhook') {
      const apiKey = request.headers['x-api-key'];
      const decision = limiter.take(
        typeof apiKey === 'string' && apiKey ? `key:${apiKey}` : `ip:${sourceIp(request)}`,
      );
      limitHeaders = {
        'X-RateLimit-Limit': String(decision.limit),
        'X-RateLimit-Remaining': String(decision.remaining),
      };
      if (!decision.allowed) {
        const result = errorResult(new ApiError('rate_limited', 'Rate limit exceeded'), requestId);
        return send(response, {
          ...result,
          headers: { ...result.headers, ...limitHeaders, 'Retry-After': String(decision.retryAfterSeconds) },
        });
      }
    }
    const body = await readBody(request);
    if (body === 'too_large') {
      return send(
        response,
        errorResult(new ApiError('payload_too_large', 'Request body too large'), requestId),
      );
    }
    // As API Gateway (REST) passes them: percent-encoded as sent; the HTTP stack decodes them once.
    const params: Record<string, string> = Object.create(null);
    chosen.entry.paramNames.forEach((name, i) => {
      params[name] = chosen.found?.[i + 1] ?? '';
    });
    const event = toEvent(request, url, chosen.entry, params, body, requestId);
    const handler = await loadHandler(chosen.entry.route);
    const result = await handler(event, lambdaContext(chosen.entry.route.name, requestId));
    send(response, { ...result, headers: { ...limitHeaders, ...result.headers } });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      console.error('local gateway: handler failed', error);
      if (!response.headersSent) send(response, errorResult(error, randomUUID()));
      else response.destroy();
    });
  });
  // Requests Node refuses before any handler sees them (header block over 16 KiB, malformed
  // HTTP) still get the envelope and a request id.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return;
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const result = errorResult(
      tooLarge
        ? new ApiError('payload_too_large', 'Request line or headers too large')
        : new ApiError('validation_error', 'Malformed HTTP request'),
      randomUUID(),
    );
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
  return {
    url,
    server,
    routes: served,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
