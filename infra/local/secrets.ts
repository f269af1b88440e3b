import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Secrets of a local installation: made once per data folder, kept beside the data. */
export interface LocalSecrets {
  API_KEY_PEPPER: string;
  PARTNER_WEBHOOK_SECRET: string;
  MERCHANT_WEBHOOK_KEY: string;
}

/** The file a data folder keeps its secrets in. */
export function localSecretsFile(dataDir: string): string {
  return path.join(dataDir, 'local-secrets.json');
}

/**
 * Reads `<dataDir>/local-secrets.json`, creating it with fresh random values on first use.
 * Environment variables of the same names win, so an operator can pin them.
 */
export function loadLocalSecrets(dataDir: string): LocalSecrets {
  const file = localSecretsFile(dataDir);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    const fresh: LocalSecrets = {
      API_KEY_PEPPER: randomBytes(32).toString('base64url'),
      PARTNER_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      MERCHANT_WEBHOOK_KEY: randomBytes(32).toString('base64url'),
    };
    writeFileSync(file, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  }
  const stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalSecrets>;
  // Added after the first release: an older data folder gets it on its next start.
  if (!stored.MERCHANT_WEBHOOK_KEY) {
    stored.MERCHANT_WEBHOOK_KEY = randomBytes(32).toString('base64url');
    writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  }
  return {
    MERCHANT_WEBHOOK_KEY: process.env.MERCHANT_WEBHOOK_KEY ?? stored.MERCHANT_WEBHOOK_KEY,
    API_KEY_PEPPER: process.env.API_KEY_PEPPER ?? stored.API_KEY_PEPPER ?? '',
    PARTNER_WEBHOOK_SECRET: process.env.PARTNER_WEBHOOK_SECRET ?? stored.PARTNER_WEBHOOK_SECRET ?? '',
  };
}

/**
 * Whether this environment runs with Paystack but without its secret key. Locally the key is the
 * shell's (there is no Secrets Manager, so `PAYSTACK_SECRET_KEY_ARN` is never read), and its absence
 * would only show at the first Paystack call, as a partner that did not answer.
 */
export function lacksPaystackKey(env: NodeJS.ProcessEnv): boolean {
  return env.PARTNER === 'paystack' && !env.PAYSTACK_SECRET_KEY;
}
