import { createHash } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type SecretsManagerStandIn,
  startSecretsManagerStandIn,
} from '#test/support/secrets-manager-stand-in.ts';
import { STAND_IN_SECRET_KEY } from '#test/support/sigv4.ts';

// How a function reads its secrets on AWS (`shared/secrets.ts`): Secrets Manager's GetSecretValue,
// sent without the SDK's client, to a stand-in that checks each signature. The module is imported
// fresh for each test with the secret's name in the environment, as Lambda sets it; the SDK's
// client is the reference the request is held to.
let secretsManager: SecretsManagerStandIn;
const savedEnv = { ...process.env };
const ARN = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:naira/prod/paystack';
const CREDENTIALS = { accessKeyId: 'AKIDFUNCTION', secretAccessKey: STAND_IN_SECRET_KEY };

async function freshModule() {
  vi.resetModules();
  process.env = {
    ...savedEnv,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.url,
    PAYSTACK_SECRET_KEY_ARN: ARN,
  };
  delete process.env.PAYSTACK_SECRET_KEY;
  delete process.env.AWS_SESSION_TOKEN;
  return import('#shared/secrets.ts');
}

beforeAll(async () => {
  secretsManager = await startSecretsManagerStandIn();
});
beforeEach(() => {
  secretsManager.requests.length = 0;
  secretsManager.secrets.clear();
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(() => vi.useRealTimers());
afterAll(async () => {
  process.env = savedEnv;
  await secretsManager.close();
});

describe('secrets read from Secrets Manager', () => {
  it('sends GetSecretValue as the SDK client does: same target, media type, body and signing scope', async () => {
    secretsManager.secrets.set(ARN, { SecretString: 'sk_live_one' });
    const { paystackSecretKey } = await freshModule();
    expect(await paystackSecretKey()).toBe('sk_live_one');
    const client = new SecretsManagerClient({
      region: 'eu-west-1',
      endpoint: secretsManager.url,
      credentials: CREDENTIALS,
    });
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: ARN }));
    expect(SecretString).toBe('sk_live_one');
    const [ours, sdk] = secretsManager.requests;
    expect(ours).toEqual(sdk);
    expect(ours).toEqual({
      target: 'secretsmanager.GetSecretValue',
      contentType: 'application/x-amz-json-1.1',
      body: { SecretId: ARN },
      scope: { accessKeyId: 'AKIDFUNCTION', region: 'eu-west-1', service: 'secretsmanager' },
      signatureValid: true,
    });
  });

  it('reads a secret once for concurrent callers, and reuses it for five minutes', async () => {
    secretsManager.secrets.set(ARN, { SecretString: ' sk_live_one\n' });
    const { paystackSecretKey } = await freshModule();
    const first = await Promise.all([paystackSecretKey(), paystackSecretKey(), paystackSecretKey()]);
    expect(first).toEqual(['sk_live_one', 'sk_live_one', 'sk_live_one']);
    vi.advanceTimersByTime(299_000);
    expect(await paystackSecretKey()).toBe('sk_live_one');
    expect(secretsManager.requests).toHaveLength(1);

    // A rotated secret is read once the five minutes are over.
    secretsManager.secrets.set(ARN, { SecretString: 'sk_live_two' });
    vi.advanceTimersByTime(1_000);
    expect(await paystackSecretKey()).toBe('sk_live_two');
    expect(secretsManager.requests).toHaveLength(2);
  });

  it('retries a throttled or failed read as the SDK does, three attempts in all', async () => {
    secretsManager.secrets.set(ARN, { SecretString: 'sk_live_one' });
    secretsManager.failNext(400, 500);
    const { paystackSecretKey } = await freshModule();
    expect(await paystackSecretKey()).toBe('sk_live_one');
    expect(secretsManager.requests).toHaveLength(3);
  });

  it('gives up on a Secrets Manager that takes the request and never answers, within the call timeout', async () => {
    secretsManager.secrets.set(ARN, { SecretString: 'sk_live_one' });
    secretsManager.stallNext(1);
    const { paystackSecretKey } = await freshModule();
    const { CALL_TIMEOUT_MS } = await import('#shared/aws/service.ts');
    const started = performance.now();
    await expect(paystackSecretKey()).rejects.toMatchObject({
      name: 'TimeoutError',
      message: `secretsmanager did not answer within ${CALL_TIMEOUT_MS} ms`,
    });
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(CALL_TIMEOUT_MS - 50);
    expect(waited).toBeLessThan(CALL_TIMEOUT_MS + 1_500);
    // Not retried once the time is spent, and forgotten: the next call reads again.
    expect(secretsManager.requests).toHaveLength(1);
    expect(await paystackSecretKey()).toBe('sk_live_one');
    expect(secretsManager.requests).toHaveLength(2);
  });

  it('ends a hanging read in time for the invocation to answer, and starts none with no time left', async () => {
    secretsManager.secrets.set(ARN, { SecretString: 'sk_live_one' });
    secretsManager.stallNext(1);
    const { paystackSecretKey } = await freshModule();
    const { ANSWER_RESERVE_MS, MIN_CALL_MS, withInvocationDeadline } = await import('#shared/deadline.ts');
    // A function with 1.2 s left before its answer reserve: the read gets those, not the 4 s.
    const inInvocation = (remainingMs: number) =>
      withInvocationDeadline(remainingMs, () =>
        paystackSecretKey().then(
          (key) => key as unknown,
          (error: unknown) => error,
        ),
      );
    const started = performance.now();
    expect(await inInvocation(ANSWER_RESERVE_MS + 1_200)).toMatchObject({
      name: 'TimeoutError',
      message: 'secretsmanager did not answer within 1200 ms',
    });
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(1_150);
    expect(waited).toBeLessThan(2_500);
    expect(secretsManager.requests).toHaveLength(1);
    // Less than a useful call left: none is made.
    expect(await inInvocation(ANSWER_RESERVE_MS + MIN_CALL_MS - 1)).toMatchObject({
      name: 'TimeoutError',
      message: 'secretsmanager was not called: the invocation has no time left for it',
    });
    expect(secretsManager.requests).toHaveLength(1);
    // Outside an invocation's deadline (this test's own context), the full call timeout again.
    expect(await paystackSecretKey()).toBe('sk_live_one');
    expect(secretsManager.requests).toHaveLength(2);
  });

  it('forgets a failed read, so the next call tries again', async () => {
    const { paystackSecretKey } = await freshModule();
    await expect(paystackSecretKey()).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      message: "Secrets Manager can't find the specified secret.",
    });
    // A refusal is final: not retried.
    expect(secretsManager.requests).toHaveLength(1);
    secretsManager.secrets.set(ARN, { SecretString: 'sk_live_one' });
    expect(await paystackSecretKey()).toBe('sk_live_one');
    expect(secretsManager.requests).toHaveLength(2);
  });

  it('refuses an empty or binary secret rather than using it', async () => {
    secretsManager.secrets.set(ARN, { SecretBinary: Buffer.from([1, 2, 3]) });
    const { paystackSecretKey } = await freshModule();
    await expect(paystackSecretKey()).rejects.toThrow(`secret ${ARN} is empty (or binary)`);
    secretsManager.secrets.set(ARN, { SecretString: '  \n' });
    const again = await freshModule();
    await expect(again.paystackSecretKey()).rejects.toThrow(`secret ${ARN} is empty (or binary)`);
  });

  it('is checked by a stand-in that refuses a body changed after signing, as AWS does', async () => {
    secretsManager.secrets.set('other', { SecretString: 'not for you' });
    const signed = JSON.stringify({ SecretId: 'signed' });
    const url = new URL(secretsManager.url);
    const request = await new SignatureV4({
      service: 'secretsmanager',
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      sha256: Sha256,
    }).sign(
      new HttpRequest({
        method: 'POST',
        hostname: url.hostname,
        port: Number(url.port),
        path: '/',
        headers: {
          host: url.host,
          'content-type': 'application/x-amz-json-1.1',
          'x-amz-target': 'secretsmanager.GetSecretValue',
          'x-amz-content-sha256': createHash('sha256').update(signed).digest('hex'),
        },
        body: signed,
      }),
    );
    const answer = await fetch(secretsManager.url, {
      method: 'POST',
      headers: request.headers,
      body: JSON.stringify({ SecretId: 'other' }),
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ __type: 'InvalidSignatureException' });
  });
});
