import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { type BodyAlternative, ENDPOINTS, WEBHOOK_EVENTS } from '#infra/openapi/endpoints.ts';
import { gettingStarted } from '#infra/openapi/guide.ts';
import * as responses from '#shared/contract/responses.ts';
import { API_PREFIX, MERCHANT_ROUTES, type MerchantRouteName } from '#shared/definitions/routes.ts';
import type { ErrorCode } from '#shared/errors.ts';
import { STATUS_BY_CODE } from '#shared/http/errors.ts';
import { IDEMPOTENCY_KEY_MAX } from '#shared/http/idempotency.ts';
import { bankLimitSchema, DEFAULT_LIMIT, limitSchema } from '#shared/pagination.ts';

type Json = Record<string, unknown>;

/**
 * JSON Schema (2020-12, as OpenAPI 3.1 uses it) of a valibot schema, as a request is sent (`input`:
 * before transformations) or an answer is read (`output`), without the `$schema` key. Checks JSON
 * Schema cannot say (a calendar date, a transformation) are left to the API's own answers.
 */
function jsonSchema(schema: v.GenericSchema, io: 'input' | 'output'): Json {
  const { $schema: _drop, ...rest } = toJsonSchema(schema, {
    target: 'draft-2020-12',
    typeMode: io,
    errorMode: 'ignore',
    overrideSchema: ({ valibotSchema }) => LIMIT_PARAMETERS.get(valibotSchema),
  }) as Json;
  return tightestBounds(rest) as Json;
}

/**
 * `?limit=` as generated clients should send it: a number (API.md §1: 1..100). The server reads the
 * query's text, leading zeros allowed (`05`), which no client writing a number sends.
 */
const LIMIT_PARAMETER = { type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_LIMIT } as const;

/** The bank list's `?limit=`: the same bounds, and no default (without it, the whole list). */
const BANK_LIMIT_PARAMETER = { type: 'integer', minimum: 1, maximum: 100 } as const;

/** Each `?limit=` schema and how the document types it. */
const LIMIT_PARAMETERS = new Map<unknown, Json>([
  [limitSchema, LIMIT_PARAMETER],
  [bankLimitSchema, BANK_LIMIT_PARAMETER],
]);

/**
 * Keeps only the tighter of `minimum` and `exclusiveMinimum` (and of the maxima) wherever a schema
 * has both: a safe integer above 0 is written `exclusiveMinimum: 0`, not also `minimum: -(2^53-1)`,
 * which says nothing more and which OpenAPI linters flag.
 */
function tightestBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tightestBounds);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, tightestBounds(value)]),
  );
  const pairs = [
    ['minimum', 'exclusiveMinimum', (inclusive: number, exclusive: number) => exclusive >= inclusive],
    ['maximum', 'exclusiveMaximum', (inclusive: number, exclusive: number) => exclusive <= inclusive],
  ] as const;
  for (const [inclusiveKey, exclusiveKey, exclusiveIsTighter] of pairs) {
    const inclusive = out[inclusiveKey];
    const exclusive = out[exclusiveKey];
    if (typeof inclusive !== 'number' || typeof exclusive !== 'number') continue;
    delete out[exclusiveIsTighter(inclusive, exclusive) ? inclusiveKey : exclusiveKey];
  }
  return out;
}

/**
 * A request body's schema; with alternatives, `oneOf` its named forms (OpenAPI `title`), each with
 * the shared fields and its own (required), so the docs show "By beneficiary" rather than "object".
 */
function bodySchema(body: v.GenericSchema, alternatives: readonly BodyAlternative[] | undefined): Json {
  const schema = jsonSchema(body, 'input') as { properties?: Record<string, Json>; required?: string[] };
  if (!alternatives) return schema;
  const properties = schema.properties ?? {};
  const ownFields = new Set(alternatives.flatMap((alternative) => alternative.fields));
  for (const field of ownFields) {
    if (!(field in properties)) throw new Error(`a body alternative names ${field}, which the body lacks`);
  }
  return {
    oneOf: alternatives.map((alternative) => ({
      title: alternative.title,
      description: alternative.description,
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(properties).filter(
          ([name]) => !ownFields.has(name) || alternative.fields.includes(name),
        ),
      ),
      required: [...(schema.required ?? []), ...alternative.fields],
      additionalProperties: false,
    })),
  };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const REQUEST_ID = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
/** Where the runtime knows the count (API.md §2; the README's "Rate limit" says which answers). */
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
};
/** On the answer a repeated `Idempotency-Key` replays. */
const REPLAYED = {
  'Idempotent-Replayed': {
    description: '`true` when this answer repeats the one a request with the same `Idempotency-Key` got',
    schema: { type: 'string', enum: ['true'] },
  },
};

const COMPONENTS: Record<string, v.GenericSchema> = {
  Bank: responses.bank,
  ValidatedAccount: responses.validatedAccount,
  Balance: responses.balance,
  Beneficiary: responses.beneficiary,
  Transaction: responses.transaction,
  VirtualAccount: responses.virtualAccount,
  PaymentStatus: responses.paymentStatus,
  Error: responses.errorEnvelope,
  Unauthorized: responses.unauthorizedEnvelope,
  Accepted: responses.accepted,
};
const componentOf = new Map<v.GenericSchema, string>(
  Object.entries(COMPONENTS).map(([name, schema]) => [schema, name]),
);

/** A data schema as a reference to its component where it has one (arrays of components too). */
function dataSchema(schema: v.GenericSchema): Json {
  const name = componentOf.get(schema);
  if (name) return ref(name);
  const item = (schema as { item?: v.GenericSchema }).item;
  if (schema.type === 'array' && item && componentOf.has(item)) {
    return { type: 'array', items: ref(componentOf.get(item) as string) };
  }
  return jsonSchema(schema, 'output');
}

function successEnvelope(data: Json, list: boolean): Json {
  return {
    type: 'object',
    required: ['status', 'message', 'data', ...(list ? ['meta'] : [])],
    additionalProperties: false,
    properties: {
      status: { const: 'success' },
      message: { type: 'string' },
      data,
      ...(list
        ? {
            meta: {
              type: 'object',
              required: ['next_cursor'],
              additionalProperties: false,
              properties: {
                next_cursor: {
                  type: ['string', 'null'],
                  description: 'Pass as `cursor` for the next page; null on the last',
                },
              },
            },
          }
        : {}),
    },
  };
}

/** The error responses of an endpoint, grouped by status, each listing its codes. */
function errorResponses(route: (typeof MERCHANT_ROUTES)[number], codes: ErrorCode[]): Json {
  // Every route: the gateway's 408 for a request not received whole within 30 s (API.md §11), and
  // its 413 for a request line and headers over 16 KiB (a long path or query too).
  // And its 415 for a body in a Content-Encoding it cannot decode, on any method.
  const all = new Set<ErrorCode>([
    ...codes,
    'internal_error',
    'request_timeout',
    'payload_too_large',
    'unsupported_media_type',
  ]);
  // Every route but the partner's webhook is rate limited and refuses a repeated query parameter.
  if (route.auth !== 'webhook') {
    all.add('rate_limited');
    all.add('validation_error');
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all)
    byStatus.set(STATUS_BY_CODE[code], [...(byStatus.get(STATUS_BY_CODE[code]) ?? []), code]);
  const result: Json = {};
  if (route.auth === 'api_key') {
    result['401'] = {
      description: 'Missing, unknown, revoked or expired key, wrong secret, or an IP outside the allowlist',
      headers: REQUEST_ID,
      content: {
        'application/json': {
          schema: ref('Unauthorized'),
          example: { status: 'error', message: 'Invalid API credentials' },
        },
      },
    };
  }
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    result[String(status)] = {
      description: `Error codes: ${statusCodes.map((code) => `\`${code}\``).join(', ')}`,
      headers: {
        ...REQUEST_ID,
        ...(status === 429 || status === 503
          ? { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } }
          : {}),
        ...(status === 429 ? RATE_LIMIT_HEADERS : {}),
      },
      content: {
        'application/json': {
          schema: ref('Error'),
          examples: Object.fromEntries(
            statusCodes.map((code) => [
              code,
              { value: { status: 'error', message: `Example message for ${code}`, code } },
            ]),
          ),
        },
      },
    };
  }
  return result;
}

function parameters(
  route: (typeof MERCHANT_ROUTES)[number],
  doc: (typeof ENDPOINTS)[MerchantRouteName],
): Json[] {
  const params: Json[] = [];
  for (const [location, schema] of [
    ['path', doc.request.params],
    ['query', doc.request.query],
  ] as const) {
    if (!schema) continue;
    const object = jsonSchema(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      params.push({
        name,
        in: location,
        required: location === 'path' || (object.required ?? []).includes(name),
        schema: property,
        ...(typeof property.description === 'string' ? { description: property.description } : {}),
      });
    }
  }
  if (doc.request.idempotencyKey) {
    params.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: {
        type: 'string',
        minLength: 1,
        maxLength: IDEMPOTENCY_KEY_MAX,
        pattern: '^[!-~]([ -~]*[!-~])?$',
      },
      description:
        'Makes a retry safe: the same key with the same request within 24 hours answers what the first answered and does nothing again (`Idempotent-Replayed: true`); with another request, 409 `duplicate_reference`. Printable ASCII, up to 255 characters (a UUID is a good key).',
    });
  }
  // The sandbox partner's signature; Paystack's deliveries, at `/webhooks/paystack`, carry
  // `x-paystack-signature` instead (the description says so): required of neither here.
  if (route.auth === 'webhook') params.push(...standardWebhookHeaders(false));
  return params;
}

/** The Standard Webhooks headers of a delivery, as header parameters. */
function standardWebhookHeaders(required: boolean): Json[] {
  return [
    {
      name: 'webhook-id',
      in: 'header',
      required,
      schema: { type: 'string' },
      description:
        "The message's id, which receivers de-duplicate on (a merchant webhook's: the event id, the same on every retry and resend)",
    },
    {
      name: 'webhook-timestamp',
      in: 'header',
      required,
      schema: { type: 'string', pattern: '^[0-9]+$' },
      description: 'Unix seconds; a receiver refuses one more than ±5 minutes from its clock',
    },
    {
      name: 'webhook-signature',
      in: 'header',
      required,
      schema: { type: 'string' },
      description:
        '`v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{raw body}">`; during a rotation several, space-separated: one valid signature is enough',
    },
  ];
}

const operationId = (name: string) => name.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());

/** The events merchants' endpoints receive (API.md §8), as OpenAPI 3.1 `webhooks`, one per type. */
function merchantWebhooks() {
  const transfer = (type: string) => {
    const schema = jsonSchema(responses.transferEvent, 'output') as { properties: Json };
    return { ...schema, properties: { ...schema.properties, type: { const: type } } };
  };
  const events: [type: string, schema: Json, summary: string][] = [
    [
      'payment.received',
      jsonSchema(responses.paymentReceivedEvent, 'output'),
      'A payment was credited (with the virtual account after it, or null for a wallet top-up)',
    ],
    [
      'virtual_account.paid',
      jsonSchema(responses.virtualAccountPaidEvent, 'output'),
      'A virtual account became paid or overpaid (once)',
    ],
    ['transfer.success', transfer('transfer.success'), 'A transfer succeeded'],
    [
      'transfer.failed',
      transfer('transfer.failed'),
      'A transfer failed (with its reason); its money is back',
    ],
    [
      'transfer.reversed',
      transfer('transfer.reversed'),
      'A transfer that had succeeded was reversed by the bank (with its reason); its money is back',
    ],
  ];
  return Object.fromEntries(
    events.map(([type, schema, summary]) => [
      type,
      {
        post: {
          operationId: `on${type
            .split(/[^a-z]+/)
            .filter(Boolean)
            .map((w) => w[0]?.toUpperCase() + w.slice(1))
            .join('')}`,
          summary,
          // Deliveries carry no credentials: the signature authenticates them.
          security: [],
          description:
            'Delivered to your endpoints with `content-type: application/json` and Standard Webhooks headers `webhook-id` (the event id), `webhook-timestamp` and `webhook-signature`. Verify the signature on the raw body; answer 2xx within 10 s.',
          parameters: standardWebhookHeaders(true),
          requestBody: { required: true, content: { 'application/json': { schema } } },
          responses: { '2XX': { description: 'Received: the delivery is done' } },
        },
      },
    ]),
  );
}

/**
 * The OpenAPI 3.1 document of the API, generated from the route table and the contract's schemas:
 * it lists exactly the routes of `shared/definitions/routes.ts`, at their bare paths (the servers add the
 * `/api/v1/developer` prefix).
 */
export function buildOpenApiDocument(baseUrl = 'http://127.0.0.1:3000'): Json {
  const paths: Record<string, Json> = {};
  for (const route of MERCHANT_ROUTES) {
    const doc = ENDPOINTS[route.name];
    const [path, ...aliases] = route.paths;
    const success: Json = {};
    for (const [status, message] of Object.entries(doc.success.messages)) {
      const created = status === '201';
      success[status] = {
        description: created
          ? 'Created'
          : '201' in doc.success.messages
            ? 'Already exists (an idempotent retry)'
            : 'OK',
        headers: {
          ...REQUEST_ID,
          ...(doc.request.idempotencyKey && !created ? REPLAYED : {}),
          ...(route.auth === 'webhook' ? {} : RATE_LIMIT_HEADERS),
        },
        content: {
          'application/json': {
            schema: doc.success.data
              ? successEnvelope(dataSchema(doc.success.data), doc.success.list ?? false)
              : ref('Accepted'),
            // The message is the handler's own for this status (every e2e response is checked against it).
            example: {
              status: 'success',
              message,
              ...(doc.success.data ? { data: doc.example.response } : {}),
              ...(doc.success.list ? { meta: { next_cursor: null } } : {}),
            },
          },
        },
      };
    }
    const requestBody =
      route.auth === 'webhook'
        ? {
            required: true,
            content: {
              'application/json': {
                schema: {
                  oneOf: WEBHOOK_EVENTS.map(({ title, schema }) => ({
                    title,
                    ...jsonSchema(schema, 'input'),
                  })),
                },
                example: doc.example.request,
              },
            },
          }
        : doc.request.body
          ? {
              required: !(doc.request as { bodyOptional?: boolean }).bodyOptional,
              content: {
                'application/json': {
                  schema: bodySchema(doc.request.body, doc.alternatives),
                  example: doc.example.request,
                },
              },
            }
          : undefined;
    paths[path as string] = {
      ...(paths[path as string] ?? {}),
      [route.method.toLowerCase()]: {
        operationId: operationId(route.name),
        summary: route.summary,
        description: aliases.length
          ? `${doc.description}\n\nAlso served at ${aliases.map((a) => `\`${a}\``).join(', ')}.`
          : doc.description,
        tags: [doc.tag],
        security: route.auth === 'api_key' ? [{ ApiKey: [], ApiSecret: [] }] : [],
        parameters: parameters(route, doc),
        ...(requestBody ? { requestBody } : {}),
        responses: { ...success, ...errorResponses(route, doc.errors) },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Naira Pay API',
      version: '1.0.0',
      description: gettingStarted(baseUrl).trim(),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [
      { url: `${baseUrl}${API_PREFIX}`, description: 'Versioned prefix' },
      { url: baseUrl || '/', description: 'Bare paths' },
    ],
    tags: [
      { name: 'Bank', description: 'Banks, account validation, balance' },
      { name: 'Beneficiary', description: 'Saved bank accounts' },
      { name: 'Transaction', description: 'Transfers and history' },
      { name: 'Payment', description: 'Virtual accounts, payment status, partner webhook' },
      {
        name: 'Event',
        description: 'Events of every state change, their deliveries to your webhook endpoints',
      },
      { name: 'Webhook endpoint', description: 'Where your events are pushed, signed per Standard Webhooks' },
    ],
    paths,
    webhooks: merchantWebhooks(),
    components: {
      schemas: Object.fromEntries(
        Object.entries(COMPONENTS).map(([name, schema]) => [name, jsonSchema(schema, 'output')]),
      ),
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The public key, `pk_…`' },
        ApiSecret: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Secret',
          description: 'The secret, `sk_…`, shown once at creation',
        },
      },
      headers: {
        RequestId: { description: 'Identifies the request in our logs', schema: { type: 'string' } },
        RateLimitLimit: {
          description: 'Requests allowed in any rolling 60 seconds (sent where the runtime knows the count)',
          schema: { type: 'integer' },
        },
        RateLimitRemaining: {
          description: 'Requests left in the current 60 seconds (sent where the runtime knows the count)',
          schema: { type: 'integer' },
        },
      },
    },
  };
}
