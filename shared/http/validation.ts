import type * as z from 'zod/mini';
import { type FieldError, ValidationError } from '#shared/errors.ts';

/** Schemas the stack accepts: any zod (mini) schema. */
export type Schema = z.ZodMiniType;

/**
 * Validates `value` against `schema`, naming fields relative to `location` (`query.limit`, or the
 * bare field name for bodies). Unknown keys of strict objects become one error per key.
 */
export function parseOrThrow<S extends Schema>(schema: S, value: unknown, location?: string): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data as z.output<S>;
  const prefix = (path: PropertyKey[]) => [location, ...path.map(String)].filter(Boolean).join('.');
  const errors: FieldError[] = result.error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: prefix([...issue.path, key]), message: 'Unknown field' }))
      : [{ field: prefix(issue.path) || (location ?? 'body'), message: messageOf(issue) }],
  );
  throw new ValidationError(errors);
}

/** Words zod/mini leaves generic ("Invalid input"), said as the caller can act on them. */
const GENERIC = 'Invalid input';

/**
 * An issue in words that say what is wrong and what is allowed: a missing field is "Required", a
 * wrong type names the type, a value outside a list names the list. Schema-given messages stay.
 */
function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.message !== GENERIC) return issue.message;
  if (issue.code === 'invalid_type') {
    return issue.input === undefined
      ? 'Required'
      : `Must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
  }
  if (issue.code === 'invalid_value') {
    return `Must be one of: ${issue.values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`;
  }
  return issue.message;
}

/**
 * A `Content-Type` header read: the bare media type (lower case) and its `charset`, if given. Of
 * several `charset` parameters (`charset=utf-8; charset=utf-16`), one that is not UTF-8 wins, so a
 * body that could be read two ways is refused rather than guessed.
 */
export function contentTypeOf(header: string | undefined): { mediaType: string; charset?: string } {
  const [type = '', ...parameters] = (header ?? '').split(';');
  const charsets = parameters
    .map((parameter) => parameter.split('='))
    .filter(([name]) => name?.trim().toLowerCase() === 'charset')
    .map(([, value = '']) =>
      value
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase(),
    );
  const charset = charsets.find((value) => !isUtf8Charset(value)) ?? charsets[0];
  return { mediaType: type.trim().toLowerCase(), ...(charset === undefined ? {} : { charset }) };
}

/** Whether a `charset` parameter names UTF-8 (the only one JSON bodies may use), or none was given. */
export function isUtf8Charset(charset: string | undefined): boolean {
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

export type Headers = Record<string, string | undefined> | null | undefined;
export type MultiValueHeaders = Record<string, string[] | undefined> | null | undefined;

/**
 * Every value sent for each of `names` (lower case), whatever the case of its name. API Gateway and
 * the local gateway both put every occurrence in `multiValueHeaders`; `headers` is the fallback.
 */
export function headerValues(
  headers: Headers,
  multiValueHeaders: MultiValueHeaders,
  names: readonly string[],
): Record<string, string[]> {
  // Null-prototype: a header called `constructor` or `__proto__` is just another header.
  const found: Record<string, string[]> = Object.create(null);
  for (const name of names) found[name] = [];
  const source: Record<string, readonly (string | undefined)[] | undefined> = multiValueHeaders
    ? multiValueHeaders
    : Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, [value]]));
  for (const [name, values] of Object.entries(source)) {
    const lower = name.toLowerCase();
    if (lower in found) found[lower]?.push(...(values ?? []).filter((value) => value !== undefined));
  }
  return found;
}

/** Where a request's query string is found: REST API events, and function URL (payload v2) events. */
interface QuerySource {
  multiValueQueryStringParameters?: Record<string, string[] | undefined> | null;
  queryStringParameters?: Record<string, string | undefined> | null;
  rawQueryString?: string;
}

/**
 * The names of the query parameters given more than once (`?type=credit&type=debit`): API Gateway
 * keeps only the last in `queryStringParameters`, so the repeats are read from the multi-value
 * map (REST API) or the raw query string (function URL events, which join repeats with commas).
 */
export function repeatedQueryParameters(event: QuerySource): string[] {
  if (event.multiValueQueryStringParameters) {
    return Object.entries(event.multiValueQueryStringParameters)
      .filter(([, values]) => (values?.length ?? 0) > 1)
      .map(([name]) => name);
  }
  if (event.rawQueryString) {
    const names = [...new URLSearchParams(event.rawQueryString).keys()];
    return [...new Set(names.filter((name, i) => names.indexOf(name) !== i))];
  }
  return [];
}
