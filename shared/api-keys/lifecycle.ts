import { allowlistEntryProblem } from '#shared/api-keys/authenticate.ts';
import { isKeyId } from '#shared/api-keys/secrets.ts';
import {
  type ApiKeyRecord,
  createApiKey,
  getApiKey,
  revokeApiKey,
  rollApiKey,
  setAllowedIps,
  usableAt,
} from '#shared/api-keys/store.ts';
import { NotFound, ValidationError } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';

/**
 * The life of an API key (API.md §10), in one place for the operator CLI and the dashboard: create
 * (the secret returned once), roll (a new key; the old one keeps working until a chosen expiry of at
 * most 7 days), revoke, and the IP allowlist. A revocation or expiry is enforced by the authorizer
 * within AUTH_CACHE_SECONDS (its key-record cache, 5 s by default), plus on AWS API Gateway's 30 s
 * verdict cache: 35 s, inside the contract's 60 s.
 */

/** The usage plan's side of a key on AWS; nothing to do locally. */
export interface KeyRegistry {
  register(apiKey: string, merchantId: string): Promise<void>;
  /** Takes a key that can no longer work out of API Gateway (its keys per Region are few). */
  remove(apiKey: string): Promise<void>;
}

/**
 * Takes keys that can no longer work out of the registry. A removal that fails is logged, never
 * reported: the authorizer refuses those keys whatever API Gateway still holds.
 */
async function removeAll(registry: KeyRegistry, apiKeys: readonly string[], what: string): Promise<void> {
  for (const apiKey of apiKeys) {
    await registry.remove(apiKey).catch((error: unknown) =>
      logger.warn(`${what} is still in API Gateway (the authorizer refuses it)`, {
        api_key: apiKey,
        error: String(error),
      }),
    );
  }
}

/** What storing a key tells the registry: the registration first, and what it no longer needs. */
function registryHooks(registry: KeyRegistry | undefined, merchantId: string) {
  if (!registry) return {};
  return {
    beforeStoring: (apiKey: string) => registry.register(apiKey, merchantId),
    notStored: (apiKey: string) => removeAll(registry, [apiKey], 'a key registered but not stored'),
    expired: (apiKeys: string[]) => removeAll(registry, apiKeys, 'an expired key'),
  };
}

/** The longest an old key may keep working after a roll. */
export const MAX_ROLL_OVERLAP_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * How far a chosen expiry may fall outside now … now + 7 days and still be read as its nearest
 * end: a browser's clock a little behind or ahead of ours ("now", "in 7 days") is no mistake.
 */
export const ROLL_CLOCK_SKEW_MS = 60_000;

/**
 * A chosen expiry this close after now is now: the dashboard's "Now" asks for its clock's now plus
 * a second (a request in flight must not ask for a past time), and a key at the merchant's limit of
 * working keys can only be rolled by ending the old key now.
 */
export const ROLL_NOW_MS = 2_000;

export interface KeyOptions {
  allowedIps?: readonly string[];
  expiresAt?: string;
}

function checkedAllowlist(allowedIps: readonly string[]): string[] {
  const errors = allowedIps.flatMap((entry, i) => {
    const problem = allowlistEntryProblem(entry);
    // Named as the schema names an entry's errors: `allowed_ips.2`.
    return problem ? [{ field: `allowed_ips.${i}`, message: problem }] : [];
  });
  if (errors.length > 0) throw new ValidationError(errors);
  return [...allowedIps];
}

/** A merchant's own key, or `NotFound` (another merchant's key is not found either). */
async function ownKey(apiKey: string, merchantId?: string): Promise<ApiKeyRecord> {
  // Only a key id names a key (the table holds each merchant's keys in use beside them).
  if (!isKeyId(apiKey)) throw new NotFound('API key');
  // Consistent: a key is revoked or rolled right after it was made, which an eventually consistent
  // read on AWS may not see yet (a spurious 404).
  const record = await getApiKey(apiKey, { consistent: true });
  if (!record || (merchantId !== undefined && record.merchant_id !== merchantId))
    throw new NotFound('API key');
  return record;
}

/** A new key pair for a merchant; `apiSecret` is never stored and never shown again. */
export async function createKey(merchantId: string, options: KeyOptions = {}, registry?: KeyRegistry) {
  const { record, apiSecret } = await createApiKey(merchantId, {
    allowedIps: checkedAllowlist(options.allowedIps ?? []),
    expiresAt: options.expiresAt,
    // Registered before it is stored: a registration that fails leaves a key in the plan that no
    // record backs (the authorizer refuses it), never an active key the plan does not throttle.
    ...registryHooks(registry, merchantId),
  });
  return { record, apiSecret };
}

/**
 * Rolls a key: a new key pair with the same allowlist, and the old key expiring at `oldExpiresAt`
 * (now at the earliest, 7 days from now at the latest, a minute's clock skew either way taken as
 * that end; never later than it already expires).
 * `merchantId`, when given, must own the key.
 */
export async function rollKey(
  apiKey: string,
  oldExpiresAt: Date,
  options: { merchantId?: string; registry?: KeyRegistry; now?: Date } = {},
) {
  const now = options.now ?? new Date();
  const chosen = oldExpiresAt.getTime();
  const earliest = now.getTime();
  const latest = earliest + MAX_ROLL_OVERLAP_MS;
  if (
    !Number.isFinite(chosen) ||
    chosen < earliest - ROLL_CLOCK_SKEW_MS ||
    chosen > latest + ROLL_CLOCK_SKEW_MS
  ) {
    throw new ValidationError([
      { field: 'old_key_expires_at', message: 'The old key must expire between now and 7 days from now' },
    ]);
  }
  const old = await ownKey(apiKey, options.merchantId);
  const at = chosen <= earliest + ROLL_NOW_MS ? earliest : Math.min(chosen, latest);
  // The new key and the old key's expiry are stored together, only while the old key is usable: a
  // roll that meets a revocation stores nothing (and its registration is taken out of the plan).
  // The new key carries the old key's allowlist as stored then (not checked again).
  return rollApiKey(old, new Date(at).toISOString(), {
    now,
    ...registryHooks(options.registry, old.merchant_id),
  });
}

/**
 * Revokes a key (the authorizer refuses it within 35 s on AWS) and takes it out of API Gateway. The
 * revocation is what counts: a removal that fails is logged, never reported as a failed revoke.
 */
export async function revokeKey(
  apiKey: string,
  options: { merchantId?: string; registry?: KeyRegistry } = {},
) {
  await ownKey(apiKey, options.merchantId);
  const record = await revokeApiKey(apiKey);
  if (options.registry) await removeAll(options.registry, [apiKey], 'a revoked key');
  return record;
}

/**
 * Replaces a key's IP allowlist (CIDR blocks or addresses; empty: any address). A revoked or expired
 * key is `NotFound`, as for a roll: it can never be used again, so an allowlist would mean nothing.
 */
export async function editAllowedIps(
  apiKey: string,
  allowedIps: readonly string[],
  options: { merchantId?: string } = {},
) {
  const key = await ownKey(apiKey, options.merchantId);
  if (!usableAt(key, new Date())) throw new NotFound('API key');
  return setAllowedIps(apiKey, checkedAllowlist(allowedIps));
}
