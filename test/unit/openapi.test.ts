import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '#infra/openapi/document.ts';
import { ENDPOINTS } from '#infra/openapi/endpoints.ts';
import { MERCHANT_ROUTES as ROUTES } from '#shared/definitions/routes.ts';
import { bankLimitSchema, limitSchema } from '#shared/pagination.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';

type Operation = {
  operationId: string;
  security: Record<string, string[]>[];
  parameters: { name: string; in: string; required: boolean }[];
  requestBody?: { content: { 'application/json': { schema: object; example: unknown } } };
  responses: Record<
    string,
    { description: string; content?: { 'application/json': { schema: object; example?: unknown } } }
  >;
};

const document = buildOpenApiDocument() as {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; in: string; name: string }> };
};
const operations = Object.entries(document.paths).flatMap(([p, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${p}`, operation })),
);
const routeOf = (key: string) => ROUTES.find((route) => `${route.method} ${route.paths[0]}` === key);

/** Which of a set of `?limit=` texts a schema takes: every number a client writes from 1 to 100 (and leading zeros), nothing else. */
function taken(schema: v.GenericSchema): string[] {
  return ['0', '00', '000', '1', '05', '010', '099', '100', '101', '999', '0100', '1.5', '1e2', ''].filter(
    (limit) => v.safeParse(schema, limit).success,
  );
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and lists exactly the routes of the route table, once each', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(operations.map((o) => o.key).sort()).toEqual(
      ROUTES.map((r) => `${r.method} ${r.paths[0]}`).sort(),
    );
    expect(operations).toHaveLength(ROUTES.length);
    expect(new Set(operations.map((o) => o.operation.operationId)).size).toBe(ROUTES.length);
  });

  it('has a documented contract for every route, and every handler validates with exactly that contract', async () => {
    expect(Object.keys(ENDPOINTS).sort()).toEqual(ROUTES.map((r) => r.name).sort());
    const handlerFiles = readdirSync(path.join(PROJECT_ROOT, 'functions')).map((file) =>
      file.replace(/\.ts$/, ''),
    );
    for (const route of ROUTES.filter((r) => r.auth !== 'webhook')) {
      expect(handlerFiles).toContain(route.name);
      const module = (await import(path.join(PROJECT_ROOT, 'functions', `${route.name}.ts`))) as {
        handler: { route: { name: string }; spec: object };
      };
      expect(module.handler.route.name).toBe(route.name);
      expect(module.handler.spec).toBe(ENDPOINTS[route.name].request);
    }
  });

  it('declares both credential headers as security schemes and requires them exactly where the route table does', () => {
    expect(document.components.securitySchemes).toMatchObject({
      ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      ApiSecret: { type: 'apiKey', in: 'header', name: 'X-API-Secret' },
    });
    for (const { key, operation } of operations) {
      const route = routeOf(key);
      expect(operation.security, key).toEqual(
        route?.auth === 'api_key' ? [{ ApiKey: [], ApiSecret: [] }] : [],
      );
      if (route?.auth === 'api_key') expect(operation.responses['401'], key).toBeDefined();
    }
  });

  it('documents the webhook with its optional signature headers and both event shapes', () => {
    const webhook = document.paths['/webhooks/payments']?.post as Operation;
    // Not required: a delivery without them is the 401 `invalid_signature`, not a 400, and Paystack's,
    // at the same operation's other path, carry `x-paystack-signature` instead.
    const headers = webhook.parameters.filter((p) => p.in === 'header' && !p.required).map((p) => p.name);
    expect(headers.sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(JSON.stringify(webhook.requestBody)).toContain('payment.received');
    expect(JSON.stringify(webhook.requestBody)).toContain('transfer.success');
    expect(webhook.responses['401']?.description).toContain('invalid_signature');
  });

  it("documents each merchant event type as its own webhook, with the delivery's signature headers", () => {
    const webhooks = (document as unknown as { webhooks: Record<string, { post: Operation }> }).webhooks;
    expect(Object.keys(webhooks).sort()).toEqual([
      'payment.received',
      'transfer.failed',
      'transfer.reversed',
      'transfer.success',
      'virtual_account.paid',
    ]);
    for (const [type, { post }] of Object.entries(webhooks)) {
      const required = post.parameters.filter((p) => p.in === 'header' && p.required).map((p) => p.name);
      expect(required.sort(), type).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
      const schema = post.requestBody?.content['application/json'].schema as {
        properties: { type: { const?: string; enum?: string[] } };
      };
      expect([schema.properties.type.const ?? schema.properties.type.enum].flat(), type).toEqual([type]);
    }
  });

  it('documents an optional Idempotency-Key exactly on the two POSTs that take one, and its replayed answer', () => {
    const keyed = operations
      .filter(({ operation }) =>
        operation.parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'),
      )
      .map(({ key }) => key);
    expect(keyed.sort()).toEqual(['POST /webhook-endpoints', 'POST /webhook-endpoints/{id}/rotate-secret']);
    const create = document.paths['/webhook-endpoints']?.post as Operation;
    expect(create.parameters.find((p) => p.name === 'Idempotency-Key')?.required).toBe(false);
    expect(JSON.stringify(create.responses['200'])).toContain('Idempotent-Replayed');
    expect(JSON.stringify(create.responses['201'])).not.toContain('Idempotent-Replayed');
    expect(JSON.stringify(create.responses['409'])).toContain('duplicate_reference');
  });

  it('names the forms of a body that takes exactly one of several, each accepting only its own fields', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const bodyOf = (p: string) => {
      const schema = document.paths[p]?.post?.requestBody?.content['application/json'].schema as {
        oneOf: { title: string }[];
      };
      return { titles: schema.oneOf.map((form) => form.title), validate: ajv.compile(schema) };
    };
    const transfer = bodyOf('/transfers');
    expect(transfer.titles).toEqual(['By beneficiary', 'By validation session', 'By account number']);
    const base = { reference: 'inv-1', amount: 10_000 };
    expect(transfer.validate({ ...base, beneficiary_id: 'ben_1' })).toBe(true);
    expect(transfer.validate({ ...base, session_id: 'ses_1', narration: 'Rent' })).toBe(true);
    expect(transfer.validate({ ...base, account_number: '0000014579', bank_code: '011' })).toBe(true);
    expect(transfer.validate({ ...base, beneficiary_id: 'ben_1', session_id: 'ses_1' })).toBe(false);
    expect(transfer.validate({ ...base, account_number: '0000014579' })).toBe(false);
    expect(transfer.validate(base)).toBe(false);
    // Each form requires the fields every transfer does: a body without its reference or amount is refused.
    for (const form of [
      { beneficiary_id: 'ben_1' },
      { session_id: 'ses_1' },
      { account_number: '0000014579', bank_code: '011' },
    ]) {
      expect(transfer.validate({ amount: 10_000, ...form }), JSON.stringify(form)).toBe(false);
      expect(transfer.validate({ reference: 'inv-1', ...form }), JSON.stringify(form)).toBe(false);
    }
    // Free text as the API takes it: one line, no control character, no override (the pattern).
    for (const narration of ['Rent\u2028paid', 'Rent\u2029paid', 'Rent\npaid', 'Rent \u202Egnp.exe'])
      expect(transfer.validate({ ...base, session_id: 'ses_1', narration }), narration).toBe(false);
    expect(transfer.validate({ ...base, session_id: 'ses_1', narration: 'Ọlá ₦5,000 🇳🇬' })).toBe(true);
    const beneficiary = bodyOf('/beneficiaries');
    expect(beneficiary.titles).toEqual(['By validation session', 'By account number']);
    expect(beneficiary.validate({ session_id: 'ses_1', nickname: 'Supplier' })).toBe(true);
    expect(beneficiary.validate({ session_id: 'ses_1', bank_code: '011' })).toBe(false);
    const webhook = document.paths['/webhooks/payments']?.post?.requestBody?.content['application/json']
      .schema as { oneOf: { title?: string }[] };
    expect(webhook.oneOf.every((form) => typeof form.title === 'string')).toBe(true);
  });

  it('shows in each success example the message the handler answers that status with', () => {
    const example = (p: string, status: string) =>
      (
        document.paths[p]?.post?.responses[status]?.content?.['application/json'].example as
          | { message?: string }
          | undefined
      )?.message;
    expect(example('/transfers', '201')).toBe('Transfer created');
    expect(example('/transfers', '200')).toBe('Transfer already exists');
    expect(example('/beneficiaries', '201')).toBe('Beneficiary saved');
  });

  it('lists every error response with its codes, and documents amounts as kobo', () => {
    for (const { key, operation } of operations) {
      expect(operation.responses['500']?.description, key).toContain('internal_error');
      // The gateway's own answers, on every route: a request not whole within 30 s, and a
      // request line with headers over 16 KiB (a long path segment or query, too).
      expect(operation.responses['408']?.description, key).toContain('request_timeout');
      expect(operation.responses['413']?.description, key).toContain('payload_too_large');
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) >= 400 && status !== '401')
          expect(response.description, `${key} ${status}`).toMatch(/`[a-z_]+`/);
      }
    }
    const transfer = JSON.stringify(document.paths['/transfers']?.post?.requestBody);
    expect(transfer).toContain('Amount in kobo');
    expect(JSON.stringify(document.paths['/virtual-accounts']?.post?.requestBody)).toContain(
      'Amount in kobo',
    );
  });

  it('types every ?limit= as a number from 1 to 100 (default 20; the bank list none), and the handlers take exactly those', () => {
    const limits = operations.flatMap(({ key, operation }) =>
      (operation.parameters as { name: string; schema?: object }[])
        .filter((parameter) => parameter.name === 'limit')
        .map((parameter) => ({ key, schema: parameter.schema })),
    );
    expect(limits.length).toBeGreaterThan(4);
    for (const { key, schema } of limits) {
      // The bank list without `limit` is the whole list (API.md §4), not a page of 20.
      const bankList = key.startsWith('GET /banks');
      expect(schema).toEqual(
        bankList
          ? { type: 'integer', minimum: 1, maximum: 100 }
          : { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      );
    }
    expect(limits.filter(({ key }) => key.startsWith('GET /banks')).length).toBeGreaterThan(0);
    expect(v.parse(bankLimitSchema, undefined)).toBeUndefined();
    expect(v.parse(limitSchema, undefined)).toBe(20);
    // The handlers read the query's text: every number a client writes from 1 to 100 (and leading
    // zeros), nothing else.
    expect(taken(limitSchema)).toEqual(['1', '05', '010', '099', '100']);
    expect(taken(bankLimitSchema)).toEqual(['1', '05', '010', '099', '100']);
    for (let n = 1; n <= 100; n++) expect(v.parse(limitSchema, String(n))).toBe(n);
  });

  it('has only portable patterns (no \\p{…}, no lookaround, no \\d, \\w, \\s or \\b, which Python, Rust and .NET read Unicode-wide), each the same with and without the u flag', () => {
    const patterns = new Set<string>();
    JSON.stringify(document, (key, value: unknown) => {
      if (key === 'pattern' && typeof value === 'string') patterns.add(value);
      return value;
    });
    expect(patterns.size).toBeGreaterThan(3);
    const samples = [
      // Text with the letters `\p{Cc}` is made of, which a validator without Unicode mode reads literally.
      ...['Invoice 42', 'Supplier', 'Chidi Okeke', 'pCc{}', 'Ọlá ₦5,000 🇳🇬', 'ok\u00A0nbsp'],
      // Control characters (C0, DEL, C1), the overrides refused, and U+FFFD.
      ...['a\u0000b', 'tab\there', 'bell\u0007', 'del\u007F', 'c1\u0085', 'rtl\u202Eevil', 'bad\uFFFD'],
      ...['line\u2028separator', 'paragraph\u2029separator'],
      // References: dots, lengths; an account number; nothing.
      ...['inv-2026-0042', '.', '..', '...', '.a', '..a', 'a'.repeat(64), 'a'.repeat(65), '0000014579', ''],
      // Digits of other scripts (Arabic-Indic, full-width), which only [0-9] refuses everywhere: kept
      // as examples, as JS reads \d as ASCII in both modes (the check of constructs above catches \d).
      ...['١٢٣٤٥٦٧٨٩٠', '１７００００００００'],
    ];
    for (const pattern of patterns) {
      // ECMA-262 without the `u` flag (many generators'), and as JSON Schema reads it (with it).
      expect(pattern, pattern).not.toMatch(/\\[pP]\{|\(\?[=!<]|\\[dDwWsSbB]/);
      const plain = new RegExp(pattern);
      const unicode = new RegExp(pattern, 'u');
      for (const sample of samples)
        expect(plain.test(sample), `${pattern} on ${JSON.stringify(sample)}`).toBe(unicode.test(sample));
    }
  });

  it('bounds a number once on each side: never both minimum and exclusiveMinimum (or the maxima)', () => {
    const both: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (node === null || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      for (const [inclusive, exclusive] of [
        ['minimum', 'exclusiveMinimum'],
        ['maximum', 'exclusiveMaximum'],
      ] as const) {
        if (typeof schema[inclusive] === 'number' && typeof schema[exclusive] === 'number') both.push(at);
      }
      for (const [key, value] of Object.entries(schema)) walk(value, `${at}/${key}`);
    };
    walk(document, '#');
    expect(both).toEqual([]);
    // Positive amounts keep their lower bound (a safe integer above 0).
    expect(JSON.stringify(document)).toContain('"exclusiveMinimum":0');
  });

  it('has examples for every operation, and every example matches its own schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(document, 'doc');
    const escapePointer = (part: string) => part.replaceAll('~', '~0').replaceAll('/', '~1');
    for (const [p, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        if (operation.requestBody) {
          const body = operation.requestBody.content['application/json'];
          expect(body.example, `${method} ${p} request example`).toBeDefined();
          const validate = ajv.compile({
            $ref: `doc#/paths/${escapePointer(p)}/${method}/requestBody/content/application~1json/schema`,
          });
          expect(validate(body.example), `${method} ${p} request: ${ajv.errorsText(validate.errors)}`).toBe(
            true,
          );
        }
        const [status, success] = Object.entries(operation.responses)[0] as [
          string,
          Operation['responses'][string],
        ];
        const example = success.content?.['application/json'].example;
        expect(example, `${method} ${p} response example`).toBeDefined();
        const validate = ajv.compile({
          $ref: `doc#/paths/${escapePointer(p)}/${method}/responses/${status}/content/application~1json/schema`,
        });
        expect(validate(example), `${method} ${p} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
  });
});
