import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { parseWebhookSecrets } from '#shared/config.ts';
import { sign, signatureProblem } from '#shared/crypto/standard-webhooks.ts';
import { signedHeaders } from '#shared/merchant-webhooks/deliver.ts';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const [key] = parseWebhookSecrets(secret) as [Buffer];
const now = 1_800_000_000_000;
const ts = String(now / 1000);
const body = '{"type":"payment.received","data":{"session_id":"s1","amount":100}}';
const good = { id: 'msg_1', timestamp: ts, signature: sign(key, 'msg_1', ts, body), body };

describe('Standard Webhooks signatures', () => {
  it('accept a correct signature', () => {
    expect(signatureProblem(good, [key], now)).toBeUndefined();
  });

  it.each([
    ['a tampered body', { body: body.replace('100', '900') }],
    ['re-serialised JSON', { body: JSON.stringify(JSON.parse(body), null, 1) }],
    ['another webhook id', { id: 'msg_2' }],
    ['a non-numeric timestamp', { timestamp: '17e8' }],
    ['a missing id', { id: undefined }],
    ['a missing timestamp', { timestamp: undefined }],
    ['a missing signature', { signature: undefined }],
    ['a short signature', { signature: 'v1,AAAA' }],
    ['an empty signature', { signature: 'v1,' }],
    ['an over-long signature header', { signature: `v1,${'A'.repeat(5000)}` }],
    ['a signature without the v1 prefix', { signature: good.signature.slice(3) }],
    ['a v2 signature', { signature: good.signature.replace('v1,', 'v2,') }],
  ])('reject %s', (_label, change) => {
    expect(signatureProblem({ ...good, ...change }, [key], now)).toEqual(expect.any(String));
  });

  it('reject a signature made with another secret', () => {
    const other = Buffer.from(randomBytes(32));
    expect(signatureProblem({ ...good, signature: sign(other, 'msg_1', ts, body) }, [key], now)).toBe(
      'signature mismatch',
    );
  });

  it('reject a timestamp 5 minutes and a second or more away, though signed with it', () => {
    for (const offset of [-360, -301, 301, 360]) {
      const t = String(now / 1000 + offset);
      expect(
        signatureProblem({ ...good, timestamp: t, signature: sign(key, 'msg_1', t, body) }, [key], now),
      ).toBe('timestamp outside tolerance');
    }
  });

  it('accept the timestamp at the edge of the ±5 minute tolerance', () => {
    for (const offset of [-300, 300]) {
      const t = String(now / 1000 + offset);
      expect(
        signatureProblem({ ...good, timestamp: t, signature: sign(key, 'msg_1', t, body) }, [key], now),
      ).toBeUndefined();
    }
  });

  it('accept any one valid signature among several, and any of several secrets (rotation)', () => {
    const old = Buffer.from(randomBytes(32));
    const many = `v1,${randomBytes(32).toString('base64')} ${good.signature}`;
    expect(signatureProblem({ ...good, signature: many }, [key], now)).toBeUndefined();
    expect(signatureProblem(good, [old, key], now)).toBeUndefined();
    expect(signatureProblem(good, [old], now)).toBe('signature mismatch');
  });
});

describe('webhook secrets', () => {
  it('parse one or several space-separated whsec_ secrets', () => {
    const two = `${secret}  whsec_${randomBytes(24).toString('base64')}`;
    expect(parseWebhookSecrets(two)).toHaveLength(2);
  });

  it.each(['', 'plain', 'whsec_', `whsec_${randomBytes(16).toString('base64')}`, 'whsec_!!!!'])(
    'refuse %j',
    (text) => {
      expect(() => parseWebhookSecrets(text)).toThrow(/PARTNER_WEBHOOK_SECRET/);
    },
  );
});

describe("the README's verification of a delivery to your endpoint", () => {
  // The ```ts block after "**Verifying a delivery**", compiled and run as a merchant would paste it.
  const readme = readFileSync(path.join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  const [, source = ''] = /\*\*Verifying a delivery\*\*[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme) ?? [];
  const { code } = transformSync(source.replace(/^import .*$/m, ''), { loader: 'ts', format: 'cjs' });
  const verified = new Function('createHmac', 'timingSafeEqual', `${code}; return verified;`)(
    createHmac,
    timingSafeEqual,
  ) as (secret: string, headers: Record<string, string>, rawBody: string) => boolean;
  const event = { id: 'evt_0123', type: 'transfer.failed', created_at: '2026-11-25T10:00:00.000Z', data: {} };
  const raw = JSON.stringify(event);
  const other = `whsec_${randomBytes(32).toString('base64')}`;

  it('accepts what the service signs, with one secret or two (after a rotation)', () => {
    expect(source).toContain('function verified');
    expect(verified(secret, signedHeaders(event as never, raw, [secret]), raw)).toBe(true);
    expect(verified(secret, signedHeaders(event as never, raw, [other, secret]), raw)).toBe(true);
    expect(verified(other, signedHeaders(event as never, raw, [other, secret]), raw)).toBe(true);
  });

  it('refuses another secret, another body, another id and an old timestamp', () => {
    const headers = signedHeaders(event as never, raw, [secret]);
    expect(verified(other, headers, raw)).toBe(false);
    expect(verified(secret, headers, raw.replace('failed', 'success'))).toBe(false);
    expect(verified(secret, { ...headers, 'webhook-id': 'evt_other' }, raw)).toBe(false);
    const old = signedHeaders(event as never, raw, [secret], Date.now() - 6 * 60_000);
    expect(verified(secret, old, raw)).toBe(false);
  });
});
