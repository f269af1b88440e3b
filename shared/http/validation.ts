import * as v from 'valibot';
import { type FieldError, ValidationError } from '#shared/errors.ts';

/** Schemas the stack accepts: any valibot schema. */
export type Schema = v.GenericSchema;

/**
 * Validates `value` against `schema`, naming fields relative to `location` (`query.limit`, or the
 * bare field name for bodies). Each unknown key of a strict object is its own error; of a field's
 * checks, the first that fails is its error (`1.5` kobo is not a whole number, whatever its size).
 */
export function parseOrThrow<S extends Schema>(
  schema: S,
  value: unknown,
  location?: string,
): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { message: messageOf, abortPipeEarly: true });
  if (result.success) return result.output;
  const errors: FieldError[] = result.issues.map((issue) => {
    const keys = (issue.path ?? []).map((item) => String(item.key));
    return {
      // A query parameter is named as sent, an empty name too (`?=1` is `query.`), as on the routes
      // that read no query (`refuseAnyQuery`); a body's path leaves out empty keys.
      field: location ? [location, ...keys].join('.') : keys.filter(Boolean).join('.') || 'body',
      message: issue.message,
    };
  });
  throw new ValidationError(errors);
}

/**
 * The words of an issue whose schema gives none, said as the caller can act on them: a missing
 * field is "Required", an unknown one "Unknown field", a wrong type names the type, a value outside
 * a list names the list. Schema-given messages are used as they are.
 */
function messageOf(issue: v.BaseIssue<unknown>): string {
  if (issue.kind === 'schema') {
    if (issue.expected === 'never') return 'Unknown field';
    if (issue.input === undefined) return 'Required';
    // A variant's key (`challenge`) names its options as a picklist does.
    if (issue.type === 'picklist' || issue.type === 'literal' || issue.type === 'variant') {
      return `Must be one of: ${(issue.expected ?? '')
        .replace(/^\((.*)\)$/, '$1')
        .split(' | ')
        .map(unquote)
        .join(', ')}`;
    }
    const expected = (issue.expected ?? 'value').toLowerCase();
    return `Must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`;
  }
  const requirement = (issue as { requirement?: unknown }).requirement;
  switch (issue.type) {
    case 'min_length':
      return requirement === 1 ? 'Must not be empty' : `Must be at least ${requirement} characters`;
    case 'max_length':
      return `Must be at most ${requirement} characters`;
    case 'min_value':
      return `Must be at least ${requirement}`;
    case 'max_value':
      return `Must be at most ${requirement}`;
    case 'safe_integer':
      return 'Must be a whole number';
    default:
      return 'Invalid value';
  }
}

/** `"credit"` → `credit`: a string option as the caller types it; others as JSON. */
function unquote(option: string): string {
  return option.replace(/^"(.*)"$/, '$1');
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
