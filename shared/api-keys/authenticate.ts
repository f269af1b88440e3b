import { BlockList, isIP } from 'node:net';
import { isKeyId, secretMatches } from '#shared/api-keys/secrets.ts';
import {
  type ApiKeyRecord,
  getApiKey,
  LAST_USED_RESOLUTION_MS,
  touchLastUsed,
} from '#shared/api-keys/store.ts';
import { config } from '#shared/config.ts';
import { Unauthorized } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { apiKeyPepper } from '#shared/secrets.ts';

/** Who is calling: the merchant the verified key belongs to. */
export interface Caller {
  merchantId: string;
  apiKey: string;
}

export interface Credentials {
  apiKey: string | undefined;
  apiSecret: string | undefined;
  /** From the request context (the connection), never from X-Forwarded-For. */
  sourceIp: string | undefined;
}

interface CachedKey {
  record: ApiKeyRecord;
  allowlist: Allowlist | undefined;
  fetchedAt: number;
}

/**
 * Key records read in the last AUTH_CACHE_SECONDS (5 s by default: with API Gateway's 30 s verdict
 * cache on AWS, a revocation lands within 35 s, inside the contract's minute).
 * Only the record is cached, never a verdict: every request's secret is hashed and compared again.
 */
const cache = new Map<string, CachedKey>();
const MAX_CACHED_KEYS = 10_000;

/**
 * Why an allowlist entry about to be stored is not a clean IPv4 or IPv6 address or CIDR block, or
 * nothing. Stricter than `toAllowlist` reads: a prefix is digits without a leading zero or space
 * (`/24 ` or `/024` is a typo, not a prefix), one prefix only, and no zone (`fe80::1%eth0` names an
 * interface of this host and can never match a client).
 */
export function allowlistEntryProblem(entry: string): string | undefined {
  const [address = '', prefixText, ...extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || address.includes('%')) return `Not an IP address or CIDR block: ${entry}`;
  const max = family === 4 ? 32 : 128;
  if (extra.length > 0) return `Bad prefix length in ${entry}`;
  if (prefixText === undefined) return undefined;
  if (!/^(?:0|[1-9]\d{0,2})$/.test(prefixText) || Number(prefixText) > max) {
    return `Bad prefix length in ${entry}`;
  }
  return undefined;
}

/** A key's allowed client addresses. */
export interface Allowlist {
  allows(ip: string | undefined): boolean;
}

/** IPv6's block of IPv4-mapped addresses (`::ffff:a.b.c.d`). */
const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

/**
 * Parses stored CIDR blocks (or single addresses) into an allowlist; throws on a malformed entry. As
 * lenient as the checks keys were stored under before `allowlistEntryProblem`: a key saved with
 * `/024` keeps working as it did. An IPv4 client is matched by IPv4 entries, and by IPv6 entries
 * only within the IPv4-mapped block (`::ffff:203.0.113.0/120`); an IPv6 client by IPv6 entries (one
 * IPv4-mapped, `::ffff:a.b.c.d`, is the IPv4 client it names). Node's `BlockList` alone matches an
 * IPv4 address against every IPv6 block containing its mapped form: `::/0`, written for "any IPv6",
 * let in every IPv4 client.
 */
export function toAllowlist(cidrs: readonly string[]): Allowlist {
  const ipv4 = new BlockList();
  const ipv6 = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefixText] = cidr.split('/');
    const family = isIP(address);
    if (family === 0) throw new Error(`not an IP address or CIDR block: ${cidr}`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const max = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText ?? '0') === '') {
      throw new Error(`bad prefix length in ${cidr}`);
    }
    const mapped = family === 6 && prefix >= 96 && IPV4_MAPPED.check(address, 'ipv6');
    (family === 4 || mapped ? ipv4 : ipv6).addSubnet(address, prefix, type);
  }
  return {
    allows(ip) {
      const family = ip ? isIP(ip) : 0;
      if (!ip || family === 0) return false;
      if (family === 4) return ipv4.check(ip, 'ipv4');
      return IPV4_MAPPED.check(ip, 'ipv6') ? ipv4.check(ip, 'ipv6') : ipv6.check(ip, 'ipv6');
    },
  };
}

/**
 * A stored allowlist, or, if it cannot be read, one that allows nothing: the key is refused (401)
 * and operators are told, rather than every request failing with a 500.
 */
function storedAllowlist(record: ApiKeyRecord): Allowlist | undefined {
  if (!record.allowed_ips?.length) return undefined;
  try {
    return toAllowlist(record.allowed_ips);
  } catch (error) {
    logger.error('stored IP allowlist cannot be read: the key is refused until it is replaced', {
      api_key: record.api_key,
      error: String(error),
    });
    return toAllowlist([]);
  }
}

async function loadKey(apiKey: string, now: number): Promise<CachedKey | undefined> {
  const cached = cache.get(apiKey);
  if (cached && now - cached.fetchedAt < config.authCacheSeconds * 1000) return cached;
  // Consistent: a key is used right after it was made or rolled, which an eventually consistent
  // read on AWS may not see yet (a spurious 401, counted against the caller's IP). Once per key
  // and container every AUTH_CACHE_SECONDS.
  const record = await getApiKey(apiKey, { consistent: true });
  if (!record) {
    cache.delete(apiKey);
    return undefined;
  }
  const entry = {
    record,
    allowlist: storedAllowlist(record),
    fetchedAt: now,
  };
  if (cache.size >= MAX_CACHED_KEYS) cache.clear();
  cache.set(apiKey, entry);
  return entry;
}

/**
 * Verifies a request's API key and secret. Every failure throws `Unauthorized` (one 401 body for
 * all); the reason is logged without the secret.
 */
export async function authenticate(credentials: Credentials, now = Date.now()): Promise<Caller> {
  const { apiKey, apiSecret, sourceIp } = credentials;
  const fail = (reason: string, known?: { merchant_id: string; source_ip?: string }): never => {
    // The key's merchant and, for an allowlist's refusal, the address refused: what on-call tells
    // the merchant (which address to allow). Never the secret.
    logger.warn('authentication failed', {
      reason,
      api_key: apiKey && isKeyId(apiKey) ? apiKey : undefined,
      ...known,
    });
    throw new Unauthorized(reason);
  };
  if (!apiKey || !apiSecret) return fail('missing credentials');
  if (!isKeyId(apiKey) || apiSecret.length > 256) return fail('malformed credentials');
  const pepper = await apiKeyPepper();
  const key = await loadKey(apiKey, now);
  if (!key) return fail('unknown key');
  if (!secretMatches(apiSecret, key.record.secret_hash, pepper)) return fail('wrong secret');
  const merchant = { merchant_id: key.record.merchant_id };
  if (key.record.status !== 'active') return fail('revoked key', merchant);
  if (key.record.expires_at && Date.parse(key.record.expires_at) <= now) return fail('expired key', merchant);
  if (key.allowlist && !key.allowlist.allows(sourceIp))
    return fail('ip not allowed', { ...merchant, source_ip: sourceIp });
  // At most one write per key per minute: the cached record remembers the last use it recorded, so
  // a busy key does not pay a (conditional, usually refused) UpdateItem on every request.
  const lastUsed = key.record.last_used_at ? Date.parse(key.record.last_used_at) : 0;
  if (now - lastUsed >= LAST_USED_RESOLUTION_MS) {
    await touchLastUsed(apiKey, new Date(now)).catch((error: unknown) =>
      logger.warn('could not record key use', { error: String(error) }),
    );
    key.record.last_used_at = new Date(now).toISOString();
  }
  return { merchantId: key.record.merchant_id, apiKey };
}

/** Forgets cached key records (tests, and operators' tools that revoke in-process). */
export function clearAuthCache(): void {
  cache.clear();
}
