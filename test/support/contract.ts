import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '#infra/openapi/document.ts';
import { API_PREFIX, ROUTES } from '#shared/definitions/routes.ts';

type Json = Record<string, unknown>;

const document = buildOpenApiDocument();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
// The whole document is one schema resource, so `#/components/...` references resolve inside it.
ajv.addSchema(document, 'openapi');

const pointer = (...parts: string[]) =>
  parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
const validatorAt = (path: string) => {
  let validate = compiled.get(path);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi#/${path}` });
    compiled.set(path, validate);
  }
  return validate;
};

const templates = ROUTES.flatMap((route) =>
  route.paths.map((path) => ({
    route,
    documented: route.paths[0] as string,
    pattern: new RegExp(`^(?:${API_PREFIX.replaceAll('/', '\\/')})?${path.replace(/\{\w+\}/g, '[^/]+')}$`),
  })),
);

/**
 * Checks one response of the API against the OpenAPI document: an operation's response must be one
 * of its documented statuses and match that status's schema (a success with the message of that
 * status's example, so the examples say what the API says); an error from a path that is no route
 * must be the error envelope. Throws, so a test whose response breaks the contract fails.
 */
export function assertMatchesContract(method: string, url: string, status: number, body: unknown): void {
  const path = new URL(url, 'http://localhost').pathname;
  if (path.endsWith('/openapi.json') || path.startsWith('/docs')) return;
  const match = templates.find(({ pattern }) => pattern.test(path));
  const operation = match && match.route.method === method.toUpperCase() ? match : undefined;
  let schemaPath: string;
  if (operation) {
    const responses = (document.paths as Record<string, Record<string, { responses: Json }>>)[
      operation.documented
    ]?.[method.toLowerCase()]?.responses;
    if (!responses?.[String(status)]) {
      throw new Error(
        `contract: ${method} ${path} answered ${status}, which the document does not list for it`,
      );
    }
    const content = (
      responses[String(status)] as {
        content?: Record<string, { example?: { message?: unknown }; examples?: Record<string, unknown> }>;
      }
    ).content?.['application/json'];
    const documented = content?.example?.message;
    // An error's code must be one the document lists for that status of this operation.
    const code = (body as { code?: unknown } | null)?.code;
    if (
      status >= 400 &&
      typeof code === 'string' &&
      !(content?.examples && Object.hasOwn(content.examples, code))
    ) {
      throw new Error(
        `contract: ${method} ${path} → ${status} answered the code ${code}, which the document does not list for it`,
      );
    }
    const message = (body as { message?: unknown } | null)?.message;
    if (status < 300 && documented !== message) {
      throw new Error(
        `contract: ${method} ${path} → ${status} answered the message ${JSON.stringify(message)}; the document's example says ${JSON.stringify(documented)}`,
      );
    }
    schemaPath = pointer(
      'paths',
      operation.documented,
      method.toLowerCase(),
      'responses',
      String(status),
      'content',
      'application/json',
      'schema',
    );
  } else if (status >= 400) {
    schemaPath = pointer('components', 'schemas', status === 401 ? 'Unauthorized' : 'Error');
  } else {
    return; // a fixture route of a test gateway: not part of the API
  }
  const validate = validatorAt(schemaPath);
  if (!validate(body)) {
    throw new Error(
      `contract: ${method} ${path} → ${status} does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
    );
  }
}
