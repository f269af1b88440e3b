import path from 'node:path';
import { parseArgs } from 'node:util';
import { localCredentials } from '#infra/local/process.ts';
import { loadLocalSecrets } from '#infra/local/secrets.ts';

/**
 * Operator CLI (API.md §6): `npm run keys -- create|revoke|list`. Talks to the DynamoDB that
 * `npm start` runs (it must be running: new wallets are issued by the sandbox partner).
 */
const USAGE = `Usage:
  npm run keys -- create --name "Acme Ltd" [--ip 203.0.113.0/24]... [--expires 2027-01-01T00:00:00Z] [--json]
  npm run keys -- create --merchant <merchant_id> [--ip CIDR]... [--expires ISO-8601] [--json]
  npm run keys -- revoke <api_key>
  npm run keys -- list --merchant <merchant_id> [--json]`;

const root = path.resolve(import.meta.dirname, '..', '..');

/** Points the shared modules at the local stand-ins, unless the environment says otherwise. */
function useLocalEnvironment(): void {
  const env = process.env;
  env.AWS_REGION ??= 'us-east-1';
  env.AWS_ACCESS_KEY_ID ??= localCredentials.accessKeyId;
  env.AWS_SECRET_ACCESS_KEY ??= localCredentials.secretAccessKey;
  env.DYNAMODB_ENDPOINT ??= `http://127.0.0.1:${env.DYNAMODB_PORT ?? 8000}`;
  env.PARTNER_BASE_URL ??= `http://127.0.0.1:${env.SANDBOX_PORT ?? 3100}`;
  env.LOG_LEVEL ??= 'ERROR';
  env.API_KEY_PEPPER ??= loadLocalSecrets(path.resolve(root, env.DATA_DIR ?? '.data')).API_KEY_PEPPER;
}

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      merchant: { type: 'string' },
      ip: { type: 'string', multiple: true },
      expires: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  useLocalEnvironment();
  // Imported after the environment is set: the shared modules read their configuration at load.
  const { toAllowlist } = await import('#shared/api-keys/authenticate.ts');
  const keys = await import('#shared/api-keys/store.ts');
  const { onboardMerchant } = await import('#shared/merchants/onboard.ts');
  const { getMerchant } = await import('#shared/merchants/store.ts');
  const print = (json: object, text: string) => console.log(values.json ? JSON.stringify(json) : text);

  switch (command) {
    case 'create': {
      const allowedIps = values.ip ?? [];
      try {
        toAllowlist(allowedIps);
      } catch (error) {
        fail(`--ip: ${(error as Error).message}`);
      }
      if (values.expires !== undefined && Number.isNaN(Date.parse(values.expires))) {
        fail('--expires must be an ISO 8601 date-time');
      }
      const keyOptions = { allowedIps, expiresAt: values.expires && new Date(values.expires).toISOString() };
      if ((values.name !== undefined) === (values.merchant !== undefined))
        fail('give exactly one of --name or --merchant');
      if (values.name !== undefined) {
        if (!values.name.trim()) fail('--name must not be empty');
        const { merchant, key, apiSecret } = await onboardMerchant(values.name.trim(), keyOptions);
        return print(
          {
            merchant_id: merchant.merchant_id,
            api_key: key.api_key,
            api_secret: apiSecret,
            account_number: merchant.account_number,
            account_name: merchant.account_name,
          },
          [
            `Merchant created: ${merchant.merchant_id} (${merchant.name})`,
            `  wallet:     ${merchant.account_number} ${merchant.account_name}`,
            `  api_key:    ${key.api_key}`,
            `  api_secret: ${apiSecret}`,
            'The secret is shown once: store it now.',
          ].join('\n'),
        );
      }
      const merchantId = values.merchant ?? '';
      if (!(await getMerchant(merchantId))) fail(`no merchant ${merchantId}`);
      const { record, apiSecret } = await keys.createApiKey(merchantId, keyOptions);
      return print(
        { merchant_id: merchantId, api_key: record.api_key, api_secret: apiSecret },
        `New key for ${merchantId}\n  api_key:    ${record.api_key}\n  api_secret: ${apiSecret}\nThe secret is shown once: store it now.`,
      );
    }
    case 'revoke': {
      const apiKey = rest[0] ?? fail('revoke needs the api_key');
      const record = await keys.revokeApiKey(apiKey).catch(() => fail(`no key ${apiKey}`));
      return print(
        { api_key: record.api_key, status: record.status, revoked_at: record.revoked_at },
        `Revoked ${record.api_key} (takes effect within 60 seconds)`,
      );
    }
    case 'list': {
      const merchantId = values.merchant ?? fail('list needs --merchant <merchant_id>');
      const list = (await keys.listApiKeys(merchantId)).map((key) => ({
        api_key: key.api_key,
        status: key.status,
        created_at: key.created_at,
        last_used_at: key.last_used_at ?? null,
        expires_at: key.expires_at ?? null,
        allowed_ips: key.allowed_ips ?? [],
      }));
      return print(
        list,
        list.length === 0
          ? `No keys for ${merchantId}`
          : list
              .map(
                (k) =>
                  `${k.api_key}  ${k.status.padEnd(7)}  created ${k.created_at}  last used ${k.last_used_at ?? 'never'}` +
                  (k.expires_at ? `  expires ${k.expires_at}` : '') +
                  (k.allowed_ips.length ? `  ips ${k.allowed_ips.join(',')}` : ''),
              )
              .join('\n'),
      );
    }
    default:
      fail(`unknown command ${command}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const text = String((error as Error)?.message ?? error);
  const down = /ECONNREFUSED|fetch failed|partner is unavailable/i.test(
    `${text} ${String((error as Error)?.cause)}`,
  );
  console.error(down ? 'Could not reach the local service: is `npm start` running?' : `Failed: ${text}`);
  process.exit(1);
});
