import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DataFolderInUse, holdDataFolder, openDataFolderWarning } from '#infra/local/data-lock.ts';
import { changedPortSettings, DEFAULT_PORTS, portSetting } from '#infra/local/ports.ts';
import { startRuntime } from '#infra/local/runtime.ts';
import { lacksPaystackKey, loadLocalSecrets } from '#infra/local/secrets.ts';
import { forgetService, recordService, settingsOf } from '#infra/local/service-record.ts';
import { startLocalServices } from '#infra/local/services.ts';
import { DEFAULT_TABLE_PREFIX } from '#shared/definitions/tables.ts';

/**
 * `npm start`: the whole service on this machine. DynamoDB Local, local SQS, the sandbox partner,
 * the local API gateway and the queue poller; the handlers are the ones deployed to Lambda.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const fresh = process.argv.includes('--fresh');
const env = process.env;
const portOf = (name: keyof typeof DEFAULT_PORTS) => portSetting(name, env[name], DEFAULT_PORTS[name]);

/** A value as one shell word: as it is when it needs no quoting, else in single quotes. */
const shellWord = (value: string) =>
  /^[\w./:@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;

interface DemoMerchant {
  merchant_id: string;
  name: string;
  account_number: string;
  api_key: string;
  api_secret: string;
}

/**
 * The demo merchant: created on first start, its key pair kept in the data folder (a local
 * convenience only) so every start can print it.
 */
async function demoMerchant(dataDir: string, partnerName: string): Promise<DemoMerchant> {
  // One demo merchant per partner: its wallet is an account at that partner.
  const file = path.join(
    dataDir,
    partnerName === 'sandbox' ? 'demo-merchant.json' : `demo-merchant-${partnerName}.json`,
  );
  const { getMerchant } = await import('#shared/merchants/store.ts');
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as DemoMerchant;
    if (await getMerchant(saved.merchant_id)) return saved;
  }
  const { onboardMerchant } = await import('#shared/merchants/onboard.ts');
  const { merchant, key, apiSecret } = await onboardMerchant('Demo Merchant');
  const demo = {
    merchant_id: merchant.merchant_id,
    name: merchant.name,
    account_number: merchant.account_number,
    api_key: key.api_key,
    api_secret: apiSecret,
  };
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return demo;
}

interface DemoUser {
  email: string;
  password: string;
  /** Two-factor authentication turned on by whoever uses it (not saved: asked of Cognito at each start). */
  totp?: boolean;
}

/**
 * The demo merchant's dashboard user: made on first start with a random password (kept in the data
 * folder beside the demo key, a local convenience only), so every start can print it.
 */
async function demoUser(dataDir: string, demo: DemoMerchant, partnerName: string): Promise<DemoUser> {
  const suffix = partnerName === 'sandbox' ? '' : `-${partnerName}`;
  const file = path.join(dataDir, `demo-user${suffix}.json`);
  const { createDashboardUser, DuplicateUser } = await import('#shared/dashboard/users.ts');
  const { signIn } = await import('#shared/dashboard/sign-in.ts');
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as DemoUser;
    const signedIn = await signIn(saved.email, saved.password).catch(() => undefined);
    if (signedIn && 'merchant_id' in signedIn && signedIn.merchant_id === demo.merchant_id) return saved;
    // Its password is right and it asks for a code: two-factor turned on by whoever uses it. Kept,
    // with it, if it is still this merchant's (never made afresh without the factor chosen).
    if (signedIn && 'challenge' in signedIn && signedIn.challenge === 'SOFTWARE_TOKEN_MFA') {
      const { getDashboardUser } = await import('#shared/dashboard/users.ts');
      const user = await getDashboardUser(saved.email).catch(() => undefined);
      if (user?.merchantId === demo.merchant_id) return { ...saved, totp: true };
    }
  }
  const { temporaryPassword } = await import('#shared/dashboard/passwords.ts');
  const user = { email: `demo${suffix}@nairapay.test`, password: temporaryPassword() };
  await createDashboardUser({ merchantId: demo.merchant_id, ...user, permanent: true }).catch(
    async (error: unknown) => {
      if (!(error instanceof DuplicateUser)) throw error;
      // A user left from an earlier demo merchant (its data wiped): start it afresh.
      const { deleteDashboardUser } = await import('#shared/dashboard/users.ts');
      await deleteDashboardUser(user.email);
      await createDashboardUser({ merchantId: demo.merchant_id, ...user, permanent: true });
    },
  );
  writeFileSync(file, `${JSON.stringify(user, null, 2)}\n`, { mode: 0o600 });
  return user;
}

async function main() {
  // Paystack's key is first read when the demo wallet is opened at Paystack, after every local
  // service has started, and its absence would then read as "The banking partner is unavailable":
  // so it is said here, before anything starts or is written.
  if (lacksPaystackKey(env)) {
    console.error(
      '\nCould not start: PARTNER=paystack needs PAYSTACK_SECRET_KEY, the Paystack secret key (sk_test_… or sk_live_…), or the key `npm run paystack:stand-in` prints.',
    );
    process.exit(1);
  }
  const dataDir = path.resolve(root, env.DATA_DIR || '.data');
  // Made for its owner alone: it holds the keys, the webhook secret and the dashboard users'
  // passwords (their own folder is closed whatever this one's mode: infra/local/cognito.ts). A
  // folder that exists keeps the mode it has (DATA_DIR may name any folder).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const open = openDataFolderWarning(dataDir);
  if (open) console.warn(open);
  // Held before anything in it is read or written: a second npm start on the same folder would
  // otherwise compact the running one's queue journal from under it (every message acknowledged
  // since then lost at its next crash), or wipe it all with --fresh.
  let lock: string;
  try {
    lock = holdDataFolder(dataDir);
    // A record of an earlier start is another service's settings: gone before anything else.
    forgetService(dataDir);
  } catch (error) {
    if (!(error instanceof DataFolderInUse)) throw error;
    console.error(`\nCould not start: ${error.message}`);
    process.exit(1);
  }
  if (fresh) {
    for (const entry of readdirSync(dataDir)) {
      if (entry !== lock) rmSync(path.join(dataDir, entry), { recursive: true, force: true });
    }
  }
  // As the user would type it: relative to the checkout when inside it.
  const shownDataDir = path.relative(root, dataDir).startsWith('..') ? dataDir : path.relative(root, dataDir);

  const stops: (() => Promise<void>)[] = [];
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping...');
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  try {
    const port = portOf('PORT');
    const sandboxPort = portOf('SANDBOX_PORT');
    // A local CLI as the user types it: each setting this start was given that the CLI finds the
    // service by is repeated (its data folder, ports and table prefix).
    const cliLine = (ports: Parameters<typeof changedPortSettings>[0], command: string, partner = false) =>
      `${[
        env.DATA_DIR && `DATA_DIR=${shellWord(env.DATA_DIR)}`,
        partner && env.PARTNER && env.PARTNER !== 'sandbox' && `PARTNER=${shellWord(env.PARTNER)}`,
        ...changedPortSettings(ports, env),
        env.TABLE_PREFIX !== undefined &&
          env.TABLE_PREFIX !== DEFAULT_TABLE_PREFIX &&
          `TABLE_PREFIX=${shellWord(env.TABLE_PREFIX)}`,
      ]
        .filter(Boolean)
        .map((setting) => `${setting} `)
        .join('')}${command}`;
    // The sandbox CLI finds the gateway, the sandbox partner and the tables in DynamoDB Local
    // (where `pay` sees the credit), and the demo merchant's keys by the data folder and the partner.
    const sandboxCli = cliLine(['PORT', 'SANDBOX_PORT', 'DYNAMODB_PORT'], 'npm run sandbox --', true);
    // The keys CLI finds the local Cognito's pool by its port and the table prefix.
    const keysCli = cliLine(['COGNITO_PORT', 'DYNAMODB_PORT'], 'npm run keys --');
    const secrets = loadLocalSecrets(dataDir);
    const services = await startLocalServices({
      ports: {
        dynamodb: portOf('DYNAMODB_PORT'),
        sqs: portOf('SQS_PORT'),
        sandbox: sandboxPort,
        cognito: portOf('COGNITO_PORT'),
      },
      tablePrefix: env.TABLE_PREFIX ?? DEFAULT_TABLE_PREFIX,
      dataDir,
      sandbox: {
        webhookUrl: `http://127.0.0.1:${port}/webhooks/payments`,
        webhookSecret: secrets.PARTNER_WEBHOOK_SECRET,
        // The bank of the accounts it issues (README: `PARTNER_BANK_CODE`); 101 when unset.
        ...(env.PARTNER_BANK_CODE ? { bankCode: env.PARTNER_BANK_CODE } : {}),
      },
    });
    stops.push(services.stop);
    // Without DynamoDB Local nothing acknowledged could be processed: stop rather than go on
    // accepting webhooks whose messages would fail until they reached a dead-letter queue. What was
    // acknowledged is in the queue's journal, processed at the next start.
    void services.lost.then(async (what) => {
      // A Ctrl-C reaches the children too: their end is then this process's own stop.
      await sleep(500);
      if (stopping) return;
      console.error(
        `\n${what}: the service cannot go on without it. Stopping; run npm start again (what was acknowledged is kept and processed then).`,
      );
      void shutdown(1);
    });
    // Handlers read their configuration from the environment, exactly as on Lambda.
    Object.assign(process.env, services.env, secrets);
    // Local receivers (npm run sandbox -- listen) are on this machine: never set on AWS.
    process.env.MERCHANT_WEBHOOK_ALLOW_PRIVATE ??= 'true';

    const { gateway, stop } = await startRuntime({
      port,
      rootDir: root,
      env: services.env,
      onPollerError: (error) => console.error('queue poller:', error),
      dataDir,
    });
    stops.push(stop);

    const partnerName = env.PARTNER ?? 'sandbox';
    // The local CLIs run with these, as `--stage` runs them with the stage's.
    recordService(dataDir, {
      pid: process.pid,
      dynamodbEndpoint: services.env.DYNAMODB_ENDPOINT ?? '',
      tablePrefix: services.env.TABLE_PREFIX ?? DEFAULT_TABLE_PREFIX,
      partner: partnerName,
      settings: settingsOf(env),
    });
    const demo = await demoMerchant(dataDir, partnerName);
    const user = await demoUser(dataDir, demo, partnerName);
    const auth = `-H "X-API-Key: ${demo.api_key}" -H "X-API-Secret: ${demo.api_secret}"`;
    console.log(
      [
        '',
        `Payments API running at ${gateway.url}`,
        `  API reference:    ${gateway.url}/docs (OpenAPI: ${gateway.url}/openapi.json)`,
        `  local Cognito:    ${services.env.COGNITO_ENDPOINT} (dashboard sign-in)`,
        `  routes served:    ${gateway.routes.map((route) => route.name).join(', ')}`,
        partnerName === 'paystack'
          ? `  partner:          Paystack at ${env.PAYSTACK_BASE_URL ?? 'https://api.paystack.co'} (its webhook URL: ${gateway.url}/webhooks/paystack)`
          : `  sandbox partner:  ${services.env.PARTNER_BASE_URL}`,
        `  DynamoDB Local:   ${services.env.DYNAMODB_ENDPOINT} (data in ${shownDataDir}/, --fresh wipes it)`,
        `  local SQS:        ${services.env.SQS_ENDPOINT} (messages kept in ${shownDataDir}/sqs/)`,
        '',
        `Demo merchant ${demo.merchant_id} (wallet ${demo.account_number}):`,
        `  X-API-Key:    ${demo.api_key}`,
        `  X-API-Secret: ${demo.api_secret}`,
        ...(partnerName === 'paystack'
          ? []
          : [`Partner webhook secret (PARTNER_WEBHOOK_SECRET): ${secrets.PARTNER_WEBHOOK_SECRET}`]),
        '',
        `Dashboard: ${gateway.url}/dashboard/`,
        `  Demo user: ${user.email}`,
        `  Password: ${user.password}${
          user.totp
            ? ` (two-factor on: sign-in asks for a code; ${keysCli} reset-mfa --email ${user.email} turns it off)`
            : ''
        }`,
        '',
        'Try:',
        `  curl -sS ${gateway.url}/api/v1/developer/banks`,
        `  curl -sS ${gateway.url}/api/v1/developer/balance ${auth}`,
        `  curl -sS ${gateway.url}/api/v1/developer/virtual-accounts ${auth} -H "Content-Type: application/json" -d '{"amount":500000}'`,
        `  ${sandboxCli} listen     # in another terminal: your events, delivered to a local endpoint`,
        partnerName === 'paystack'
          ? "  # the payment: Paystack sends charge.success to the webhook URL above once the customer pays (with the repository's stand-in: type pay <account> <kobo> in its terminal)"
          : `  ${sandboxCli} pay --account ${demo.account_number} --amount 500000`,
        `  curl -sS ${gateway.url}/api/v1/developer/payments/<reference> ${auth}`,
        '',
        'Ctrl-C stops everything.',
      ].join('\n'),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const inUse = /EADDRINUSE|Address already in use|BindException/.test(
      `${message} ${String((error as Error)?.cause)}`,
    );
    console.error(`\nCould not start: ${message}`);
    if (inUse) {
      console.error(
        'A port is in use: stop the other process, or set PORT / DYNAMODB_PORT / SQS_PORT / SANDBOX_PORT / COGNITO_PORT (a second npm start also needs a DATA_DIR of its own).',
      );
    }
    await shutdown(1);
  }
}

void main();
