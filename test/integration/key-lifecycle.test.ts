import { randomBytes } from 'node:crypto';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { authenticate, clearAuthCache } from '#shared/api-keys/authenticate.ts';
import {
  createKey,
  editAllowedIps,
  type KeyRegistry,
  MAX_ROLL_OVERLAP_MS,
  ROLL_CLOCK_SKEW_MS,
  revokeKey,
  rollKey,
} from '#shared/api-keys/lifecycle.ts';
import {
  createApiKey,
  getApiKey,
  listApiKeys,
  listApiKeysPage,
  MAX_USABLE_KEYS,
  setAllowedIps,
} from '#shared/api-keys/store.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { ApiError, LimitReached, NotFound, Unauthorized, ValidationError } from '#shared/errors.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { listingCalls } from '#test/support/sdk-calls.ts';

/** The key lifecycle module (API.md §10) the operator CLI and the dashboard share, on DynamoDB Local. */
const IP = '198.51.100.9';
beforeEach(() => clearAuthCache());

describe('key lifecycle', () => {
  it('rolls: a new pair with the same allowlist; the old one works until the chosen expiry, never later', async () => {
    const merchant = await aMerchant({ allowedIps: ['198.51.100.0/24'] });
    const in2h = new Date(Date.now() + 2 * 3_600_000);
    const rolled = await rollKey(merchant.apiKey, in2h, { merchantId: merchant.merchant.merchant_id });
    expect(rolled.record.allowed_ips).toEqual(['198.51.100.0/24']);
    expect(rolled.old.expires_at).toBe(in2h.toISOString());
    for (const [apiKey, apiSecret] of [
      [merchant.apiKey, merchant.apiSecret],
      [rolled.record.api_key, rolled.apiSecret],
    ]) {
      await expect(authenticate({ apiKey, apiSecret, sourceIp: IP })).resolves.toMatchObject({
        merchantId: merchant.merchant.merchant_id,
      });
    }
    // A later roll of the same old key cannot give it a longer life.
    const second = await rollKey(merchant.apiKey, new Date(Date.now() + 5 * 3_600_000));
    expect(second.old.expires_at).toBe(in2h.toISOString());
    // The new keys have no expiry of their own, the old one's expiring notwithstanding (the README).
    expect([rolled.record.expires_at, second.record.expires_at]).toEqual([undefined, undefined]);
  });

  it('rolls a key whose allowlist was stored before the stricter check, carrying it over as it is', async () => {
    const merchant = await aMerchant();
    await setAllowedIps(merchant.apiKey, ['198.51.100.9/032']);
    const rolled = await rollKey(merchant.apiKey, new Date(Date.now() + 3_600_000));
    expect(rolled.record.allowed_ips).toEqual(['198.51.100.9/032']);
    await expect(
      authenticate({ apiKey: rolled.record.api_key, apiSecret: rolled.apiSecret, sourceIp: IP }),
    ).resolves.toBeTruthy();
    // A new allowlist is held to the check.
    await expect(editAllowedIps(rolled.record.api_key, ['198.51.100.9/032'])).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it("reads a chosen expiry a little outside now … now + 7 days (a browser's clock off) as that end", async () => {
    const now = new Date();
    const ahead = await aMerchant();
    const week = await rollKey(ahead.apiKey, new Date(now.getTime() + MAX_ROLL_OVERLAP_MS + 30_000), { now });
    expect(week.old.expires_at).toBe(new Date(now.getTime() + MAX_ROLL_OVERLAP_MS).toISOString());
    const behind = await aMerchant();
    const at = new Date();
    const rolled = await rollKey(behind.apiKey, new Date(at.getTime() - 30_000), { now: at });
    expect(rolled.old.expires_at).toBe(at.toISOString());
    await expect(
      authenticate({ apiKey: behind.apiKey, apiSecret: behind.apiSecret, sourceIp: IP }),
    ).rejects.toBeInstanceOf(Unauthorized);
  });

  it('refuses an overlap past 7 days, a key of another merchant, and an expired or revoked key', async () => {
    const merchant = await aMerchant();
    const other = await aMerchant();
    const tooLate = new Date(Date.now() + MAX_ROLL_OVERLAP_MS + ROLL_CLOCK_SKEW_MS + 5_000);
    await expect(rollKey(merchant.apiKey, tooLate)).rejects.toBeInstanceOf(ValidationError);
    const tooEarly = new Date(Date.now() - ROLL_CLOCK_SKEW_MS - 5_000);
    await expect(rollKey(merchant.apiKey, tooEarly)).rejects.toBeInstanceOf(ValidationError);
    await expect(
      rollKey(merchant.apiKey, new Date(), { merchantId: other.merchant.merchant_id }),
    ).rejects.toBeInstanceOf(NotFound);
    await expect(
      revokeKey(merchant.apiKey, { merchantId: other.merchant.merchant_id }),
    ).rejects.toBeInstanceOf(NotFound);
    expect((await getApiKey(merchant.apiKey))?.status).toBe('active');

    await rollKey(merchant.apiKey, new Date());
    await expect(
      authenticate({ apiKey: merchant.apiKey, apiSecret: merchant.apiSecret, sourceIp: IP }),
    ).rejects.toBeInstanceOf(Unauthorized);
    await expect(rollKey(merchant.apiKey, new Date())).rejects.toBeInstanceOf(NotFound);

    await revokeKey(other.apiKey);
    await expect(rollKey(other.apiKey, new Date())).rejects.toBeInstanceOf(NotFound);
  });

  it('registers a new key in the usage plan before storing it: a failed registration stores nothing', async () => {
    const { merchant } = await aMerchant();
    const registered: string[] = [];
    const stored = async () => (await listApiKeys(merchant.merchant_id)).map((key) => key.api_key);
    const before = await stored();
    const registry: KeyRegistry = {
      async register(apiKey, merchantId) {
        // Not stored yet when the plan is told of it.
        expect(await getApiKey(apiKey, { consistent: true })).toBeUndefined();
        expect(merchantId).toBe(merchant.merchant_id);
        registered.push(apiKey);
      },
      remove: async () => {},
    };
    const { record } = await createKey(merchant.merchant_id, {}, registry);
    expect(registered).toEqual([record.api_key]);
    expect(await stored()).toEqual([record.api_key, ...before]);

    const down: KeyRegistry = {
      register: async () => {
        throw new Error('API Gateway is down');
      },
      remove: async () => {},
    };
    await expect(createKey(merchant.merchant_id, {}, down)).rejects.toThrow('API Gateway is down');
    await expect(rollKey(record.api_key, new Date(), { registry: down })).rejects.toThrow(
      'API Gateway is down',
    );
    // No key the merchant was never shown, and the rolled key untouched.
    expect(await stored()).toEqual([record.api_key, ...before]);
    expect((await getApiKey(record.api_key))?.expires_at).toBeUndefined();
  });

  it('stores nothing when a roll meets a revocation, and takes the registered key out of the plan', async () => {
    const { merchant, apiKey } = await aMerchant();
    const stored = async () => (await listApiKeys(merchant.merchant_id)).map((key) => key.api_key);
    const before = await stored();
    const removed: string[] = [];
    let registered = '';
    // The revocation lands between the roll's read of the old key and its write.
    const racing: KeyRegistry = {
      async register(newKey) {
        registered = newKey;
        await revokeKey(apiKey);
      },
      remove: async (newKey) => {
        removed.push(newKey);
      },
    };
    await expect(
      rollKey(apiKey, new Date(Date.now() + 3_600_000), { registry: racing }),
    ).rejects.toBeInstanceOf(NotFound);
    // No active key nobody was shown: nothing new stored, and the plan told to drop it.
    expect(await stored()).toEqual(before);
    expect(removed).toEqual([registered]);
    expect((await getApiKey(apiKey))?.status).toBe('revoked');
  });

  it('rolls a key rolled meanwhile to expire sooner, keeping the sooner expiry', async () => {
    const { apiKey } = await aMerchant();
    const sooner = new Date(Date.now() + 600_000).toISOString();
    const racing: KeyRegistry = {
      // Another roll, to a sooner expiry, lands in the window.
      register: async () => {
        await rollKey(apiKey, new Date(sooner));
      },
      remove: async () => {},
    };
    const rolled = await rollKey(apiKey, new Date(Date.now() + 3_600_000), { registry: racing });
    expect(rolled.old.expires_at).toBe(sooner);
    expect((await getApiKey(apiKey, { consistent: true }))?.expires_at).toBe(sooner);
    expect((await getApiKey(rolled.record.api_key, { consistent: true }))?.status).toBe('active');
  });

  it("gives a rolled key's successor the allowlist edited while the roll was on its way, and answers it", async () => {
    const { apiKey } = await aMerchant({ allowedIps: ['198.51.100.0/24'] });
    for (const edited of [['203.0.113.0/24', '192.0.2.7'], []]) {
      const racing: KeyRegistry = {
        // A colleague's allowlist edit lands between the roll's read of the old key and its write.
        register: async () => void (await editAllowedIps(apiKey, edited)),
        remove: async () => {},
      };
      const rolled = await rollKey(apiKey, new Date(Date.now() + 3_600_000), { registry: racing });
      const successor = await getApiKey(rolled.record.api_key, { consistent: true });
      const expected = edited.length ? edited : undefined;
      expect(successor?.allowed_ips).toEqual(expected);
      expect(rolled.record.allowed_ips).toEqual(expected);
    }
  });

  it('rolls a key whose stored allowlist is an empty list (written by hand): the successor takes any address', async () => {
    const { apiKey } = await aMerchant();
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName('apiKeys'),
        Key: { api_key: apiKey },
        UpdateExpression: 'SET allowed_ips = :none',
        ExpressionAttributeValues: { ':none': [] },
      }),
    );
    const rolled = await rollKey(apiKey, new Date(Date.now() + 3_600_000));
    expect(rolled.record.allowed_ips).toBeUndefined();
    expect((await getApiKey(rolled.record.api_key, { consistent: true }))?.status).toBe('active');
  });

  it('refuses an allowlist edit of a key revoked or expired after the edit read it (404), storing nothing', async () => {
    const { apiKey } = await aMerchant();
    await revokeKey(apiKey);
    // The write after editAllowedIps's check, reached once the key is revoked.
    await expect(setAllowedIps(apiKey, ['203.0.113.0/24'])).rejects.toBeInstanceOf(NotFound);
    expect((await getApiKey(apiKey, { consistent: true }))?.allowed_ips).toBeUndefined();
    const expired = await aMerchant();
    await rollKey(expired.apiKey, new Date());
    await expect(setAllowedIps(expired.apiKey, [], new Date(Date.now() + 5_000))).rejects.toBeInstanceOf(
      NotFound,
    );
  });

  it('answers every key a burst of rolls and a revocation stored: none active that nobody was shown', async () => {
    const { merchant, apiKey } = await aMerchant();
    const before = new Set((await listApiKeys(merchant.merchant_id)).map((key) => key.api_key));
    const in2h = new Date(Date.now() + 7_200_000);
    const rolls = Array.from({ length: 8 }, () => rollKey(apiKey, in2h));
    const [outcomes] = await Promise.all([Promise.allSettled(rolls), revokeKey(apiKey)]);
    const shown = new Set(
      outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.record.api_key] : [])),
    );
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(NotFound);
    }
    const added = (await listApiKeys(merchant.merchant_id))
      .map((key) => key.api_key)
      .filter((key) => !before.has(key));
    expect(new Set(added)).toEqual(shown);
    expect((await getApiKey(apiKey, { consistent: true }))?.status).toBe('revoked');
  });

  it(`lets at most ${MAX_USABLE_KEYS} keys of a merchant work at once, even when they are made at the same moment`, async () => {
    const { merchant, apiKey } = await aMerchant();
    const m = merchant.merchant_id;
    const registered: string[] = [];
    const registry: KeyRegistry = {
      register: async (newKey) => {
        registered.push(newKey);
      },
      remove: async () => {},
    };
    // 20 at once beside the merchant's first key: exactly enough for the limit are made.
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => createKey(m, {}, registry)));
    const made = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(made).toHaveLength(MAX_USABLE_KEYS - 1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') {
        expect(outcome.reason).toBeInstanceOf(LimitReached);
        expect(outcome.reason.code).toBe('limit_reached');
      }
    }
    const usable = (await listApiKeys(m)).filter((key) => key.status === 'active');
    expect(usable).toHaveLength(MAX_USABLE_KEYS);
    // At the limit: a create, and a roll that keeps the old key working, are refused before any
    // registration; a roll that ends the old key now is not.
    const before = registered.length;
    await expect(createKey(m, {}, registry)).rejects.toBeInstanceOf(LimitReached);
    await expect(rollKey(apiKey, new Date(Date.now() + 3_600_000), { registry })).rejects.toBeInstanceOf(
      LimitReached,
    );
    expect(registered).toHaveLength(before);
    const rolled = await rollKey(apiKey, new Date(), { registry });
    expect(rolled.old.api_key).toBe(apiKey);
    // A revoked key frees its place.
    await revokeKey(rolled.record.api_key);
    await createKey(m, {}, registry);
    await expect(createKey(m, {}, registry)).rejects.toBeInstanceOf(LimitReached);
  });

  it('takes out of API Gateway every key that can no longer work: revoked, expired after a roll, or never stored', async () => {
    const { merchant, apiKey } = await aMerchant();
    const removed: string[] = [];
    const registry: KeyRegistry = {
      register: async () => {},
      remove: async (key) => {
        removed.push(key);
      },
    };
    // Rolled to expire now: gone from the plan as the roll is stored.
    const rolled = await rollKey(apiKey, new Date(), { registry });
    expect(removed).toEqual([apiKey]);
    // Rolled to expire soon (a roll read as made a minute ago, so "soon" is not "now" to it): gone
    // at the merchant's next create or roll after it expired.
    const soon = new Date(Date.now() + 1_000);
    const second = await rollKey(rolled.record.api_key, soon, {
      registry,
      now: new Date(soon.getTime() - 60_000),
    });
    expect(removed).toEqual([apiKey]);
    await new Promise((resolve) => setTimeout(resolve, soon.getTime() - Date.now() + 50));
    const made = await createKey(merchant.merchant_id, {}, registry);
    expect(removed).toEqual([apiKey, rolled.record.api_key]);
    // Revoked: gone at once.
    await revokeKey(made.record.api_key, { registry });
    expect(removed).toEqual([apiKey, rolled.record.api_key, made.record.api_key]);
    expect((await getApiKey(second.record.api_key))?.status).toBe('active');
  });

  it('rolls the dashboard\'s "Now" (a second ahead) as now, and lets a merchant over the limit from before it roll that way', async () => {
    const { merchant, apiKey } = await aMerchant();
    const m = merchant.merchant_id;
    for (let i = 1; i < MAX_USABLE_KEYS; i++) await createApiKey(m);
    const rolled = await rollKey(apiKey, new Date(Date.now() + 1_000));
    expect(Date.parse(rolled.old.expires_at ?? '')).toBeLessThanOrEqual(Date.now());
    // Two keys more than the limit, stored as before it existed (no record of keys in use).
    await dynamo.send(
      new DeleteCommand({ TableName: tableName('apiKeys'), Key: { api_key: `in-use:${m}` } }),
    );
    const stored = await getApiKey(rolled.record.api_key, { consistent: true });
    for (const extra of [randomBytes(16), randomBytes(16)]) {
      const item = { ...stored, api_key: `pk_${extra.toString('hex')}` };
      await dynamo.send(new PutCommand({ TableName: tableName('apiKeys'), Item: item }));
    }
    await expect(createKey(m)).rejects.toBeInstanceOf(LimitReached);
    await expect(rollKey(rolled.record.api_key, new Date(Date.now() + 3_600_000))).rejects.toBeInstanceOf(
      LimitReached,
    );
    // A roll that ends the old key now adds no working key: it passes.
    const again = await rollKey(rolled.record.api_key, new Date());
    expect((await getApiKey(again.record.api_key, { consistent: true }))?.status).toBe('active');
  });

  it('never lets two rolls of one key, both ending it now, pass the limit', async () => {
    const { merchant, apiKey } = await aMerchant();
    const m = merchant.merchant_id;
    for (let i = 1; i < MAX_USABLE_KEYS; i++) await createApiKey(m);
    // The other roll lands between this one's reads and its write.
    const racing: KeyRegistry = {
      register: async () => {
        await rollKey(apiKey, new Date());
      },
      remove: async () => {},
    };
    await expect(rollKey(apiKey, new Date(), { registry: racing })).rejects.toBeInstanceOf(ApiError);
    const now = Date.now();
    const working = (await listApiKeys(m)).filter(
      (key) => key.status === 'active' && (key.expires_at === undefined || Date.parse(key.expires_at) > now),
    );
    expect(working).toHaveLength(MAX_USABLE_KEYS);
  });

  it('counts the keys a merchant made before the limit existed', async () => {
    const { merchant } = await aMerchant();
    const m = merchant.merchant_id;
    for (let i = 1; i < MAX_USABLE_KEYS; i++) await createApiKey(m);
    // As the store stood before: keys, and no record of which are in use.
    await dynamo.send(
      new DeleteCommand({ TableName: tableName('apiKeys'), Key: { api_key: `in-use:${m}` } }),
    );
    await expect(createKey(m)).rejects.toBeInstanceOf(LimitReached);
  });

  it('never takes the record of keys in use for a key', async () => {
    const { merchant } = await aMerchant();
    const id = `in-use:${merchant.merchant_id}`;
    expect(await getApiKey(id, { consistent: true })).toBeDefined();
    await expect(revokeKey(id)).rejects.toBeInstanceOf(NotFound);
    await expect(rollKey(id, new Date())).rejects.toBeInstanceOf(NotFound);
    await expect(editAllowedIps(id, [])).rejects.toBeInstanceOf(NotFound);
    expect((await listApiKeys(merchant.merchant_id)).map((key) => key.api_key)).not.toContain(id);
  });

  it('edits the allowlist: malformed blocks refused, empty means any address', async () => {
    const merchant = await aMerchant();
    await expect(editAllowedIps(merchant.apiKey, ['300.1.1.1/8'])).rejects.toBeInstanceOf(ValidationError);
    await editAllowedIps(merchant.apiKey, ['203.0.113.0/24']);
    await expect(
      authenticate({ apiKey: merchant.apiKey, apiSecret: merchant.apiSecret, sourceIp: IP }),
    ).rejects.toBeInstanceOf(Unauthorized);
    clearAuthCache();
    await editAllowedIps(merchant.apiKey, []);
    expect((await getApiKey(merchant.apiKey))?.allowed_ips).toBeUndefined();
    await expect(
      authenticate({ apiKey: merchant.apiKey, apiSecret: merchant.apiSecret, sourceIp: IP }),
    ).resolves.toMatchObject({ apiKey: merchant.apiKey });
  });
});

describe("a merchant's keys, listed", () => {
  it('a page at a time from the index, however many keys: newest first, every key once across the pages', async () => {
    const merchant = await aMerchant();
    const m = merchant.merchant.merchant_id;
    // Revoked as they go: at most MAX_USABLE_KEYS work at once, and the list shows every key made.
    for (let i = 0; i < 24; i++) await revokeKey((await createApiKey(m)).record.api_key);
    const all = await listApiKeys(m);
    expect(all).toHaveLength(25);
    const paged: string[] = [];
    const limits: unknown[] = [];
    let cursor: string | undefined;
    do {
      const { result, calls } = await listingCalls(
        dynamo,
        () => listApiKeysPage(m, 7, cursor),
        (_command, input) => limits.push(input.Limit),
      );
      // One Query per page, of at most 10 items (queryPage reads the page and one more, to know
      // whether more follow, and never fewer than 10 at a time): never the whole list.
      expect(calls).toEqual(['QueryCommand']);
      paged.push(...result.items.map((key) => key.api_key));
      cursor = result.nextCursor ?? undefined;
    } while (cursor);
    expect(limits).toEqual([10, 10, 10, 10]);
    expect(paged).toEqual(all.map((key) => key.api_key));
    const created = all.map((key) => key.created_at);
    expect(created).toEqual([...created].sort().reverse());
  });
});
