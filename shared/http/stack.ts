import { randomUUID } from 'node:crypto';
import middy, { type MiddlewareObj } from '@middy/core';
import jsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import { ApiError, ValidationError } from '#shared/errors.ts';
import { type Reply, successResult } from '#shared/http/envelope.ts';
import { errorResult, isServerFault } from '#shared/http/errors.ts';
import { parseOrThrow, type Schema } from '#shared/http/validation.ts';
import { logger } from '#shared/logger.ts';

/** Largest request body the API accepts (API.md §3: 413 above it). */
export const MAX_BODY_BYTES = 16 * 1024;

const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json$/;

type Request = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, Internal>;
type Internal = { requestId: string; startedAt: number };
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
}

type Parsed<S> = S extends Schema ? z.output<S> : undefined;

/** The validated request a handler works with. */
export interface EndpointInput<B, Q, P> {
  body: Parsed<B>;
  query: Parsed<Q>;
  params: Parsed<P>;
  requestId: string;
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
    logger.info('request completed', {
      method: request.event.httpMethod,
      path: request.event.path,
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
      if (isServerFault(request.error)) logger.error('request failed', request.error as Error);
      request.response = errorResult(request.error, request.internal.requestId);
    },
  };
}

/** Content type (415) and size (413) of a JSON body, checked before it is parsed. */
function guardJsonBody(): Middleware {
  return {
    before: ({ event }) => {
      const mediaType = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (!JSON_MEDIA_TYPE.test(mediaType)) {
        throw new ApiError('unsupported_media_type', 'Content-Type must be application/json');
      }
      // The bare media type, so the parser's own check agrees with this one.
      event.headers['content-type'] = mediaType;
      const raw = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64').length : Buffer.byteLength(raw);
      if (bytes > MAX_BODY_BYTES) {
        throw new ApiError('payload_too_large', `Request body exceeds ${MAX_BODY_BYTES} bytes`);
      }
    },
  };
}

/** middy's JSON parser, with a malformed body reported as the API's 400. */
function parseJsonBody(): Middleware {
  const parser = jsonBodyParser();
  return {
    before: async (request) => {
      try {
        await parser.before?.(request as never);
      } catch {
        throw new ValidationError(
          [{ field: 'body', message: 'Body is not valid JSON' }],
          'Malformed JSON body',
        );
      }
    },
  };
}

/**
 * Builds an API Gateway (REST, proxy) handler from an endpoint's schemas and its domain call. Every
 * HTTP handler of the service goes through this one chain.
 */
export function httpHandler<
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
>(spec: EndpointSpec<B, Q, P>, handle: (input: EndpointInput<B, Q, P>) => Promise<Reply>) {
  const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, Internal>()
    .use(observe())
    .use(mapErrors());
  if (spec.body) chain.use(guardJsonBody()).use(parseJsonBody());
  return chain.handler(async (event) => {
    const requestId = event.requestContext.requestId;
    const input = {
      body: spec.body ? parseOrThrow(spec.body, event.body) : undefined,
      query: spec.query ? parseOrThrow(spec.query, event.queryStringParameters ?? {}, 'query') : undefined,
      params: spec.params ? parseOrThrow(spec.params, event.pathParameters ?? {}, 'path') : undefined,
      requestId,
    } as EndpointInput<B, Q, P>;
    return successResult(await handle(input), requestId);
  });
}
