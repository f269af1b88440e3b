import { randomBytes } from 'node:crypto';

/** A random identifier with a recognisable prefix, e.g. `mer_3f9a…`. */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}

/** The current time as the API shows it (ISO 8601 UTC). */
export function nowIso(): string {
  return new Date().toISOString();
}
