import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// How a function reads its secrets on AWS (`shared/secrets.ts`): Secrets Manager is mocked, the
// module is imported fresh for each test with the secret's name in the environment, as Lambda sets it.
const secrets = mockClient(SecretsManagerClient);
const savedEnv = { ...process.env };
const ARN = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:naira/prod/paystack';

async function freshModule() {
  vi.resetModules();
  process.env = { ...savedEnv, AWS_REGION: 'eu-west-1', PAYSTACK_SECRET_KEY_ARN: ARN };
  delete process.env.PAYSTACK_SECRET_KEY;
  return import('#shared/secrets.ts');
}

beforeEach(() => {
  secrets.reset();
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(() => vi.useRealTimers());
afterAll(() => {
  process.env = savedEnv;
});

describe('secrets read from Secrets Manager', () => {
  it('reads a secret once for concurrent callers, and reuses it for five minutes', async () => {
    secrets.on(GetSecretValueCommand, { SecretId: ARN }).resolves({ SecretString: ' sk_live_one\n' });
    const { paystackSecretKey } = await freshModule();
    const first = await Promise.all([paystackSecretKey(), paystackSecretKey(), paystackSecretKey()]);
    expect(first).toEqual(['sk_live_one', 'sk_live_one', 'sk_live_one']);
    vi.advanceTimersByTime(299_000);
    expect(await paystackSecretKey()).toBe('sk_live_one');
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);

    // A rotated secret is read once the five minutes are over.
    secrets.on(GetSecretValueCommand, { SecretId: ARN }).resolves({ SecretString: 'sk_live_two' });
    vi.advanceTimersByTime(1_000);
    expect(await paystackSecretKey()).toBe('sk_live_two');
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('forgets a failed read, so the next call tries again', async () => {
    secrets
      .on(GetSecretValueCommand)
      .rejectsOnce(new Error('ThrottlingException'))
      .resolves({ SecretString: 'sk_live_one' });
    const { paystackSecretKey } = await freshModule();
    await expect(paystackSecretKey()).rejects.toThrow('ThrottlingException');
    expect(await paystackSecretKey()).toBe('sk_live_one');
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('refuses an empty or binary secret rather than using it', async () => {
    secrets.on(GetSecretValueCommand).resolves({ SecretBinary: new Uint8Array([1, 2, 3]) });
    const { paystackSecretKey } = await freshModule();
    await expect(paystackSecretKey()).rejects.toThrow(`secret ${ARN} is empty (or binary)`);
  });
});
