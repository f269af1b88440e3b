import type { GetSecretValueResponse } from '@aws-sdk/client-secrets-manager';
import { awsService, jsonTargetCall } from '#shared/aws/service.ts';
import { config, parseWebhookSecrets } from '#shared/config.ts';

/** The secrets a function's role may be granted, each read through its accessor below. */
export type SecretName = 'apiKeyPepper' | 'partnerWebhookKeys' | 'paystackSecretKey' | 'merchantWebhookKey';

/**
 * Locally, IAM's part (infra/local/table-grants.ts): called with a secret's name before every read,
 * it throws for a function whose role on AWS could not read that secret, where locally every
 * function finds every secret in the environment. Never set on AWS, where the role decides.
 */
let beforeRead: ((secret: SecretName) => void) | undefined;

/** Sets the local runtime's check of secret reads (see `beforeRead`). */
export function checkSecretReads(check: (secret: SecretName) => void): void {
  beforeRead = check;
}

/** How long a container reuses a secret read from Secrets Manager (a rotation lands within this). */
const SECRET_MAX_AGE_MS = 300_000;

/** Made on the first read: functions that never read a secret (every local run) never build it. */
let send: ReturnType<typeof awsService> | undefined;

/** Each secret's read, shared by concurrent callers and reused until it is older than the max age. */
const reads = new Map<string, { value: Promise<string>; readAt: number }>();

/**
 * Secrets Manager's GetSecretValue (AWS JSON 1.1), sent as the SDK's client sends it, without the
 * client (`shared/aws/service.ts`): the client was 13 KB of every function that reads a secret,
 * for this one call.
 */
async function readSecret(name: string): Promise<string> {
  send ??= awsService({
    service: 'secretsmanager',
    region: config.region,
    endpoint: config.secretsManagerEndpoint,
  });
  const { SecretString } = (await send(
    jsonTargetCall('secretsmanager.GetSecretValue', { SecretId: name }),
  )) as GetSecretValueResponse;
  const value = SecretString?.trim();
  if (!value) throw new Error(`secret ${name} is empty (or binary)`);
  return value;
}

/**
 * A secret's string, read once per container and reused for `SECRET_MAX_AGE_MS`; a failed read is
 * forgotten at once, so the next call tries again.
 */
function fromSecretsManager(name: string): Promise<string> {
  const now = Date.now();
  const cached = reads.get(name);
  if (cached && now - cached.readAt < SECRET_MAX_AGE_MS) return cached.value;
  const value = readSecret(name);
  reads.set(name, { value, readAt: now });
  value.catch(() => {
    if (reads.get(name)?.value === value) reads.delete(name);
  });
  return value;
}

/**
 * The pepper of API secret hashes: `API_KEY_PEPPER` locally, the Secrets Manager secret named by
 * `API_KEY_PEPPER_SECRET` on AWS (read once per container, cached). Keys can be neither made nor
 * checked without it.
 */
export async function apiKeyPepper(): Promise<string> {
  beforeRead?.('apiKeyPepper');
  if (config.apiKeyPepper) return config.apiKeyPepper;
  if (!config.apiKeyPepperSecret) throw new Error('API_KEY_PEPPER is not configured');
  const pepper = await fromSecretsManager(config.apiKeyPepperSecret);
  if (pepper.length < 32) throw new Error('the API key pepper must be at least 32 characters');
  return pepper;
}

/** The partner's webhook signing keys: `PARTNER_WEBHOOK_SECRET` locally, Secrets Manager on AWS. */
export async function webhookKeys(): Promise<Buffer[]> {
  beforeRead?.('partnerWebhookKeys');
  if (config.webhookSecrets) return config.webhookSecrets;
  if (!config.webhookSecretArn) throw new Error('PARTNER_WEBHOOK_SECRET is not configured');
  return parseWebhookSecrets(await fromSecretsManager(config.webhookSecretArn));
}

/** Paystack's secret key: `PAYSTACK_SECRET_KEY` locally, Secrets Manager on AWS. */
export async function paystackSecretKey(): Promise<string> {
  beforeRead?.('paystackSecretKey');
  if (config.paystack.secretKey) return config.paystack.secretKey;
  if (!config.paystack.secretKeyArn) throw new Error('PAYSTACK_SECRET_KEY is not configured');
  return fromSecretsManager(config.paystack.secretKeyArn);
}

/** The master key merchant webhook secrets derive from: `MERCHANT_WEBHOOK_KEY` locally, Secrets Manager on AWS. */
export async function merchantWebhookKey(): Promise<string> {
  beforeRead?.('merchantWebhookKey');
  if (config.merchantWebhooks.key) return config.merchantWebhooks.key;
  if (!config.merchantWebhooks.keySecret) throw new Error('MERCHANT_WEBHOOK_KEY is not configured');
  const key = await fromSecretsManager(config.merchantWebhooks.keySecret);
  if (key.length < 32) throw new Error('the merchant webhook key must be at least 32 characters');
  return key;
}
