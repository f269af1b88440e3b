import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from '#test/support/loopback.ts';
import { signatureScope, signatureValid } from '#test/support/sigv4.ts';

/*
 * A stand-in for the five calls of API Gateway's management API (REST, JSON) that the key lifecycle
 * makes: GET /usageplans, POST /apikeys, POST /usageplans/{id}/keys, GET /apikeys, DELETE
 * /apikeys/{id}. Its answers have the API's shapes (listings in `item`, the next page's token in
 * `position`, errors named in `x-amzn-ErrorType` with a `message`); it keeps keys and plans in
 * memory and records every request, with the region and service of its signature.
 */

export interface RecordedGatewayRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  /** From the SigV4 `Authorization` header's credential scope; undefined when unsigned. */
  region?: string;
  service?: string;
  accessKeyId?: string;
  /** Whether the signature is the one the stand-in's own SigV4 signer computes for the request as received. */
  signatureValid: boolean;
}

export { STAND_IN_SECRET_KEY } from '#test/support/sigv4.ts';

export interface GatewayKey {
  id: string;
  name: string;
  value: string;
  enabled: boolean;
  description?: string;
}

export interface ApiGatewayStandIn {
  url: string;
  requests: RecordedGatewayRequest[];
  keys: GatewayKey[];
  /** Usage plan id → the ids of the keys in it. */
  planKeys: Map<string, string[]>;
  /** Answers the next requests with these statuses (429 as `TooManyRequestsException`, 5xx as a server error). */
  failNext(...statuses: number[]): void;
  /**
   * Does what the next requests ask, then answers them with these statuses instead: an answer lost
   * on the way (`null`: that request's answer is not lost).
   */
  loseNextAnswers(...statuses: (number | null)[]): void;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'BadRequestException',
  404: 'NotFoundException',
  409: 'ConflictException',
  429: 'TooManyRequestsException',
  500: 'InternalFailure',
  503: 'ServiceUnavailableException',
};

/** Starts the stand-in on 127.0.0.1 with the given usage plans (id and name), `pageSize` items per listing page. */
export async function startApiGatewayStandIn(
  plans: { id: string; name: string }[],
  { pageSize = 500 }: { pageSize?: number } = {},
): Promise<ApiGatewayStandIn> {
  const requests: RecordedGatewayRequest[] = [];
  const keys: GatewayKey[] = [];
  const planKeys = new Map(plans.map((plan) => [plan.id, [] as string[]]));
  const failures: number[] = [];
  const lostAnswers: (number | null)[] = [];

  function page<T>(items: T[], query: Record<string, string>) {
    const limit = Math.min(Number(query.limit ?? 25), pageSize);
    const start = Number(query.position ?? 0);
    const next = start + limit;
    return { item: items.slice(start, next), ...(next < items.length ? { position: String(next) } : {}) };
  }

  function answer(request: RecordedGatewayRequest): [number, unknown] {
    const failure = failures.shift();
    if (failure !== undefined) return [failure, { message: 'Injected failure' }];
    const body = (request.body ?? {}) as Record<string, unknown>;
    const planKeysPath = /^\/usageplans\/([^/]+)\/keys$/.exec(request.path);
    const keyPath = /^\/apikeys\/([^/]+)$/.exec(request.path);
    if (request.method === 'GET' && request.path === '/usageplans') return [200, page(plans, request.query)];
    if (request.method === 'POST' && request.path === '/apikeys') {
      if (typeof body.value !== 'string' || typeof body.name !== 'string')
        return [400, { message: 'Invalid key' }];
      if (keys.some((key) => key.value === body.value)) return [409, { message: 'API Key already exists' }];
      const key: GatewayKey = {
        id: randomBytes(5).toString('hex'),
        name: body.name,
        value: body.value,
        enabled: body.enabled === true,
        ...(typeof body.description === 'string' ? { description: body.description } : {}),
      };
      keys.push(key);
      return [201, { ...key, createdDate: Math.floor(Date.now() / 1000), stageKeys: [] }];
    }
    if (request.method === 'POST' && planKeysPath) {
      const inPlan = planKeys.get(decodeURIComponent(planKeysPath[1] ?? ''));
      if (!inPlan) return [404, { message: 'Invalid Usage Plan ID specified' }];
      const key = keys.find((candidate) => candidate.id === body.keyId);
      if (!key || body.keyType !== 'API_KEY')
        return [400, { message: 'Invalid API Key identifier specified' }];
      if (inPlan.includes(key.id)) return [409, { message: 'Usage plan key already exists' }];
      inPlan.push(key.id);
      return [201, { id: key.id, type: 'API_KEY', name: key.name, value: key.value }];
    }
    if (request.method === 'GET' && request.path === '/apikeys') {
      const named = keys
        .filter((key) => key.name.startsWith(request.query.name ?? ''))
        .map(({ value, ...key }) => (request.query.includeValues === 'true' ? { ...key, value } : key));
      return [200, page(named, request.query)];
    }
    if (request.method === 'DELETE' && keyPath) {
      const at = keys.findIndex((candidate) => candidate.id === decodeURIComponent(keyPath[1] ?? ''));
      const [key] = at < 0 ? [] : keys.splice(at, 1);
      if (!key) return [404, { message: 'Invalid API Key identifier specified' }];
      for (const [plan, ids] of planKeys)
        planKeys.set(
          plan,
          ids.filter((id) => id !== key.id),
        );
      return [202, undefined];
    }
    return [404, { message: `No such operation ${request.method} ${request.path}` }];
  }

  async function serve(incoming: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(incoming.url ?? '/', 'http://stand-in');
    const scope = signatureScope(incoming);
    const request: RecordedGatewayRequest = {
      method: incoming.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: text ? JSON.parse(text) : undefined,
      headers: incoming.headers,
      ...scope,
      signatureValid: scope ? await signatureValid(incoming, url, text, scope) : false,
    };
    requests.push(request);
    const done = answer(request);
    const lost = lostAnswers.shift() ?? undefined;
    const [status, json] = lost === undefined ? done : [lost, { message: 'Injected failure after the work' }];
    const type = ERROR_TYPES[status];
    response.writeHead(status, {
      'content-type': 'application/json',
      ...(status >= 400 && type
        ? {
            'x-amzn-ErrorType': `${type}:http://internal.amazon.com/coral/com.amazonaws.backplane.controlplane/`,
          }
        : {}),
    });
    response.end(JSON.stringify(json));
  }

  const server = createServer((incoming, response) => {
    serve(incoming, response).catch(() => {
      response.writeHead(500).end();
    });
  });
  return {
    ...(await listenOnLoopback(server)),
    requests,
    keys,
    planKeys,
    failNext: (...statuses) => failures.push(...statuses),
    loseNextAnswers: (...statuses) => lostAnswers.push(...statuses),
  };
}
