import { DEFAULT_TABLE_PREFIX } from '#shared/definitions/tables.ts';
import { number, oneOf, optional, readEnv, text, url, withDefault } from '#shared/env.ts';
import { PARTNER_NAMES } from '#shared/partners/partner.ts';

const port = number({ integer: true, min: 1, max: 65535 });
const positiveInt = number({ integer: true, min: 1 });
const nonNegativeInt = number({ integer: true, min: 0 });
const optionalUrl = optional(url());
const optionalText = optional(text({ min: 1 }));

/**
 * The longest a partner call may take. A requery round (50 s, `REQUERY_TIMEOUT_SECONDS`) asks
 * nothing new in its last call and 3 s, and sends a transfer the partner does not know again only
 * with time for the resend's 4 calls left: after one slow question, 6 calls and 3 s must fit in a
 * round, or a transfer lost before its send would never be sent again and its money stay held.
 * (The partner routes' 28 s hold a transfer's 3 calls too.)
 */
export const MAX_PARTNER_TIMEOUT_MS = 7_500;

const ENV = {
  /** Lambda always sets it; unset elsewhere, the SDK resolves the region itself (the profile's). */
  AWS_REGION: optionalText,
  /** Set locally (DynamoDB Local); unset on AWS so the SDK uses the regional endpoint. */
  DYNAMODB_ENDPOINT: optionalUrl,
  SQS_ENDPOINT: optionalUrl,
  /** Every table name is this prefix plus the logical name of `shared/definitions/tables.ts`. */
  TABLE_PREFIX: withDefault(text({ pattern: /^[A-Za-z0-9_.-]*$/ }), DEFAULT_TABLE_PREFIX),
  PAYMENTS_QUEUE_URL: optionalUrl,
  /** The banking partner of this deployment (API.md §9). */
  PARTNER: withDefault(oneOf(PARTNER_NAMES), 'sandbox'),
  /** The sandbox partner's API. */
  PARTNER_BASE_URL: withDefault(url(), 'http://127.0.0.1:3100'),
  /** One partner call's limit (at most `MAX_PARTNER_TIMEOUT_MS`). */
  PARTNER_TIMEOUT_MS: withDefault(number({ integer: true, min: 1, max: MAX_PARTNER_TIMEOUT_MS }), '5000'),
  /** The bank that issues wallet and virtual account numbers: the partner's own CBN code. */
  PARTNER_BANK_CODE: withDefault(text({ pattern: /^\d{3}$|^\d{6}$/ }), '101'),
  /** Server-side pepper for API secret hashes (locally); on AWS the Secrets Manager secret below. */
  API_KEY_PEPPER: optional(text({ min: 32 })),
  API_KEY_PEPPER_SECRET: optionalText,
  /** How long a verified key record may be reused; revocation must land within 60 s. */
  AUTH_CACHE_SECONDS: withDefault(number({ integer: true, min: 0, max: 60 }), '5'),
  NAME_ENQUIRY_CACHE_SECONDS: withDefault(nonNegativeInt, '3600'),
  /** `max_amount:fee` tiers in kobo, ascending, the last `*:fee` (API.md §4's default schedule). */
  TRANSFER_FEE_TIERS: withDefault(text(), '500000:1000,5000000:2500,*:5000'),
  /** `whsec_<base64>` secrets of the partner's webhooks, space-separated (rotation: old and new). */
  PARTNER_WEBHOOK_SECRET: optional(text()),
  PARTNER_WEBHOOK_SECRET_ARN: optionalText,
  PAYSTACK_BASE_URL: withDefault(url(), 'https://api.paystack.co'),
  /** Paystack's secret key locally; on AWS the Secrets Manager secret below. */
  PAYSTACK_SECRET_KEY: optionalText,
  PAYSTACK_SECRET_KEY_ARN: optionalText,
  /** Addresses Paystack's webhooks may come from, comma-separated; empty: not checked. */
  PAYSTACK_WEBHOOK_IPS: withDefault(text(), ''),
  /** The domain of the synthetic emails Paystack charges and customers need. */
  PAYSTACK_EMAIL_DOMAIN: withDefault(text({ pattern: /^[a-z0-9.-]+\.[a-z]{2,}$/ }), 'customers.nairapay.ng'),
  /** The bank of merchants' dedicated virtual accounts (Paystack's `preferred_bank` slug). */
  PAYSTACK_DVA_BANK: withDefault(text({ min: 1 }), 'wema-bank'),
  /** A transfer still pending this long after it was sent is asked about at the partner (API.md §7). */
  TRANSFER_REQUERY_AFTER_SECONDS: withDefault(nonNegativeInt, '60'),
  TRANSFER_REQUERY_INTERVAL_SECONDS: withDefault(positiveInt, '60'),
  /** A transfer pending this long is reported to operators (never settled by guess). */
  TRANSFER_REQUERY_ALERT_HOURS: withDefault(number({ positive: true }), '24'),
  /** Master key merchant webhook secrets are derived from (locally; on AWS the secret below). */
  MERCHANT_WEBHOOK_KEY: optional(text({ min: 32 })),
  MERCHANT_WEBHOOK_KEY_SECRET: optionalText,
  /** Local only: lets endpoints be http:// and loopback or private addresses (never link-local). */
  MERCHANT_WEBHOOK_ALLOW_PRIVATE: withDefault(oneOf(['true', 'false']), 'false'),
  /** Seconds between delivery attempts (API.md §8); `1,2,3,5` in tests. */
  MERCHANT_WEBHOOK_RETRY_SCHEDULE: withDefault(
    text({ pattern: /^\d+(,\d+)*$/, message: 'Seconds, comma-separated' }),
    '5,60,300,1800,7200,21600,43200,86400,86400,86400',
  ),
  MERCHANT_WEBHOOK_TIMEOUT_MS: withDefault(positiveInt, '10000'),
  WEBHOOK_DELIVERIES_QUEUE_URL: optionalUrl,
  /** Largest payment credited without an operator (kobo; default NGN 100,000,000), inclusive. */
  MAX_PAYMENT_AMOUNT: withDefault(positiveInt, '10000000000'),
  /** Largest balance a credit may reach (kobo; default NGN 10,000,000,000), inclusive. */
  MAX_BALANCE: withDefault(positiveInt, '1000000000000'),
  /** The dashboard's Cognito user pool and app client (API.md §10). */
  USER_POOL_ID: optional(text({ pattern: /^[\w-]+_[0-9A-Za-z]+$/ })),
  USER_POOL_CLIENT_ID: optional(text({ pattern: /^[\w+]+$/ })),
  /** Set locally (the Cognito stand-in); unset on AWS so the SDK uses the regional endpoint. */
  COGNITO_ENDPOINT: optionalUrl,
  /** The API Gateway usage plan a dashboard-made key is registered in (unset locally). */
  USAGE_PLAN_ID: optionalText,
  /** On AWS the plan is found by its name (the stack cannot hand its functions the id), on first use. */
  USAGE_PLAN_NAME: optionalText,
  /** Where the key routes' API Gateway calls go (the SDK's own name for it); unset: the regional endpoint. */
  AWS_ENDPOINT_URL_API_GATEWAY: optionalUrl,
  /** Where secrets are read from (the SDK's own name for it); unset: the regional endpoint. */
  AWS_ENDPOINT_URL_SECRETS_MANAGER: optionalUrl,
  LOG_LEVEL: withDefault(oneOf(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']), 'INFO'),
  /** Set by Lambda: the function's own name (the dimension of the service's metrics); unset locally. */
  AWS_LAMBDA_FUNCTION_NAME: optionalText,
  PORT: withDefault(port, '3000'),
};

export type Config = ReturnType<typeof loadConfig>;

/** One step of the transfer fee schedule: amounts up to and including `upTo` pay `fee` (kobo). */
export interface FeeTier {
  upTo: number;
  fee: number;
}

/**
 * Parses `whsec_<base64> [whsec_<base64>…]` into HMAC keys; each must decode to at least 24 bytes.
 */
export function parseWebhookSecrets(text: string): Buffer[] {
  const secrets = text.split(/\s+/).filter(Boolean);
  if (secrets.length === 0) throw new Error('PARTNER_WEBHOOK_SECRET: no secret given');
  return secrets.map((secret, i) => {
    const body = secret.startsWith('whsec_') ? secret.slice(6) : '';
    const key = Buffer.from(body, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || key.length < 24) {
      throw new Error(`PARTNER_WEBHOOK_SECRET: secret ${i + 1} must be whsec_ + base64 of at least 24 bytes`);
    }
    return key;
  });
}

/** Parses `500000:1000,5000000:2500,*:5000`; throws unless ascending and ending in `*`. */
export function parseFeeTiers(text: string): FeeTier[] {
  const tiers = text.split(',').map((part) => {
    const [limit = '', fee = ''] = part.trim().split(':');
    const upTo = limit === '*' ? Number.POSITIVE_INFINITY : Number(limit);
    if (!(upTo > 0) || !/^\d+$/.test(fee)) throw new Error(`TRANSFER_FEE_TIERS: bad tier "${part}"`);
    return { upTo, fee: Number(fee) };
  });
  const ascending = tiers.every((tier, i) => i === 0 || tier.upTo > (tiers[i - 1]?.upTo ?? 0));
  if (!ascending || tiers.at(-1)?.upTo !== Number.POSITIVE_INFINITY) {
    throw new Error('TRANSFER_FEE_TIERS: tiers must ascend and end with *:fee');
  }
  return tiers;
}

/**
 * Parses and validates the service configuration from an environment. Throws at cold start with
 * every problem listed, so a misconfigured function fails loudly instead of on its first request.
 */
export function loadConfig(env: Record<string, string | undefined>) {
  const e = readEnv(env, ENV);
  return {
    region: e.AWS_REGION,
    dynamoEndpoint: e.DYNAMODB_ENDPOINT,
    sqsEndpoint: e.SQS_ENDPOINT,
    secretsManagerEndpoint: e.AWS_ENDPOINT_URL_SECRETS_MANAGER,
    tablePrefix: e.TABLE_PREFIX,
    paymentsQueueUrl: e.PAYMENTS_QUEUE_URL,
    partner: {
      name: e.PARTNER,
      baseUrl: e.PARTNER_BASE_URL,
      timeoutMs: e.PARTNER_TIMEOUT_MS,
      bankCode: e.PARTNER_BANK_CODE,
    },
    paystack: {
      baseUrl: e.PAYSTACK_BASE_URL,
      secretKey: e.PAYSTACK_SECRET_KEY,
      secretKeyArn: e.PAYSTACK_SECRET_KEY_ARN,
      webhookIps: e.PAYSTACK_WEBHOOK_IPS.split(',')
        .map((ip) => ip.trim())
        .filter(Boolean),
      emailDomain: e.PAYSTACK_EMAIL_DOMAIN,
      dvaBank: e.PAYSTACK_DVA_BANK,
    },
    requery: {
      afterSeconds: e.TRANSFER_REQUERY_AFTER_SECONDS,
      intervalSeconds: e.TRANSFER_REQUERY_INTERVAL_SECONDS,
      alertHours: e.TRANSFER_REQUERY_ALERT_HOURS,
    },
    apiKeyPepper: e.API_KEY_PEPPER,
    apiKeyPepperSecret: e.API_KEY_PEPPER_SECRET,
    authCacheSeconds: e.AUTH_CACHE_SECONDS,
    nameEnquiryCacheSeconds: e.NAME_ENQUIRY_CACHE_SECONDS,
    transferFeeTiers: parseFeeTiers(e.TRANSFER_FEE_TIERS),
    webhookSecrets:
      e.PARTNER_WEBHOOK_SECRET === undefined ? undefined : parseWebhookSecrets(e.PARTNER_WEBHOOK_SECRET),
    webhookSecretArn: e.PARTNER_WEBHOOK_SECRET_ARN,
    merchantWebhooks: {
      key: e.MERCHANT_WEBHOOK_KEY,
      keySecret: e.MERCHANT_WEBHOOK_KEY_SECRET,
      allowPrivate: e.MERCHANT_WEBHOOK_ALLOW_PRIVATE === 'true',
      retrySchedule: e.MERCHANT_WEBHOOK_RETRY_SCHEDULE.split(',').map(Number),
      timeoutMs: e.MERCHANT_WEBHOOK_TIMEOUT_MS,
      queueUrl: e.WEBHOOK_DELIVERIES_QUEUE_URL,
    },
    dashboard: {
      userPoolId: e.USER_POOL_ID,
      clientId: e.USER_POOL_CLIENT_ID,
      cognitoEndpoint: e.COGNITO_ENDPOINT,
      usagePlanId: e.USAGE_PLAN_ID,
      usagePlanName: e.USAGE_PLAN_NAME,
      apiGatewayEndpoint: e.AWS_ENDPOINT_URL_API_GATEWAY,
    },
    limits: { maxPaymentAmount: e.MAX_PAYMENT_AMOUNT, maxBalance: e.MAX_BALANCE },
    logLevel: e.LOG_LEVEL,
    functionName: e.AWS_LAMBDA_FUNCTION_NAME,
    port: e.PORT,
  } as const;
}
