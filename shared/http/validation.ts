import type * as z from 'zod/mini';
import { type FieldError, ValidationError } from '#shared/errors.ts';

/** Schemas the stack accepts: any zod (mini) schema. */
export type Schema = z.ZodMiniType;

/**
 * Validates `value` against `schema`, naming fields relative to `location` (`query.limit`, or the
 * bare field name for bodies). Unknown keys of strict objects become one error per key.
 */
export function parseOrThrow<S extends Schema>(schema: S, value: unknown, location?: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data as z.output<S>;
  const prefix = (path: PropertyKey[]) => [location, ...path.map(String)].filter(Boolean).join('.');
  const errors: FieldError[] = result.error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: prefix([...issue.path, key]), message: 'Unknown field' }))
      : [{ field: prefix(issue.path) || (location ?? 'body'), message: issue.message }],
  );
  throw new ValidationError(errors);
}
