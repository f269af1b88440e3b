/**
 * Typed readers of environment variables for `shared/config.ts`: each takes the raw value (or
 * undefined) and returns the parsed one, or throws a problem that names what is wrong. Hand-written
 * rather than a schema library: the configuration is read at every cold start, and building its
 * schemas with zod (the library then) cost each function about 5 ms of its import (the bench).
 */
export type Reader<T> = (raw: string | undefined) => T;

export class EnvProblem extends Error {}

const problem = (message: string): never => {
  throw new EnvProblem(message);
};

/** A string, at least `min` characters, matching `pattern` when given. */
export function text(options: { min?: number; pattern?: RegExp; message?: string } = {}): Reader<string> {
  return (raw) => {
    const value = raw ?? problem('Required');
    if (value.length < (options.min ?? 0)) problem(`Must be at least ${options.min} characters`);
    if (options.pattern && !options.pattern.test(value))
      problem(options.message ?? `Must match ${options.pattern}`);
    return value;
  };
}

/** A URL the URL parser accepts. */
export function url(): Reader<string> {
  return (raw) => {
    const value = raw ?? problem('Required');
    if (!URL.canParse(value)) problem('Invalid URL');
    return value;
  };
}

/** A number (whole when `integer`), within the bounds given. */
export function number(
  options: { integer?: boolean; min?: number; max?: number; positive?: boolean } = {},
): Reader<number> {
  return (raw) => {
    const value = Number(raw ?? problem('Required'));
    if (!Number.isFinite(value)) problem('Must be a number');
    if (options.integer && !Number.isInteger(value)) problem('Must be a whole number');
    if (options.min !== undefined && value < options.min) problem(`Must be at least ${options.min}`);
    if (options.max !== undefined && value > options.max) problem(`Must be at most ${options.max}`);
    if (options.positive && !(value > 0)) problem('Must be positive');
    return value;
  };
}

/** One of the values listed. */
export function oneOf<const T extends string>(values: readonly T[]): Reader<T> {
  return (raw) => {
    const value = raw ?? problem('Required');
    if (!(values as readonly string[]).includes(value)) problem(`Must be one of ${values.join(', ')}`);
    return value as T;
  };
}

/** The reader's value, or undefined where the variable is unset. */
export function optional<T>(read: Reader<T>): Reader<T | undefined> {
  return (raw) => (raw === undefined ? undefined : read(raw));
}

/** The reader's value, or `fallback` where the variable is unset. */
export function withDefault<T>(read: Reader<T>, fallback: string): Reader<T> {
  return (raw) => read(raw ?? fallback);
}

/**
 * Reads every variable of `readers` from `env`, collecting every problem: one error lists them all,
 * so a misconfigured function fails loudly at cold start with everything to fix.
 */
export function readEnv<R extends Record<string, Reader<unknown>>>(
  env: Record<string, string | undefined>,
  readers: R,
): { [K in keyof R]: ReturnType<R[K]> } {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, read] of Object.entries(readers)) {
    try {
      values[name] = read(env[name]);
    } catch (error) {
      if (!(error instanceof EnvProblem)) throw error;
      problems.push(`${name}: ${error.message}`);
    }
  }
  if (problems.length > 0) throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  return values as { [K in keyof R]: ReturnType<R[K]> };
}
