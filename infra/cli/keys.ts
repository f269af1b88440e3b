import { pathToFileURL } from 'node:url';
import { SSMClient } from '@aws-sdk/client-ssm';
import * as v from 'valibot';
import { loadStageConfig, resolveRegion, useStageEnvironment } from '#infra/cli/aws-stage.ts';
import {
  checkLocalPepper,
  parseCommandLine,
  Refusal,
  refuseOptionsNotTaken,
  runMain,
  usage,
  useLocalEnvironment,
} from '#infra/cli/command-line.ts';
import { lacksPaystackKey } from '#infra/local/secrets.ts';
import { isKeyId } from '#shared/api-keys/secrets.ts';
import { gatewayKeys } from '#shared/api-keys/usage-plan.ts';
import { apiGateway } from '#shared/aws/api-gateway.ts';
import { DASHBOARD_USER_POOL } from '#shared/dashboard/user-pool.ts';
import { DEFAULT_TABLE_PREFIX } from '#shared/definitions/tables.ts';
import { isEmail, isIsoDateTime, namingTextSchema } from '#shared/schemas.ts';

/** When the authorizer acts on a change: its key-record cache, plus API Gateway's verdict cache on AWS. */
const ENFORCED_WITHIN = 'AUTH_CACHE_SECONDS, 5 s by default; on AWS within 35 s';

/**
 * Operator CLI (API.md §6): `npm run keys -- create|revoke|list`. Without `--stage` it talks to
 * the DynamoDB of a running `npm start`; with `--stage <name>` to a deployed stack (AWS credentials
 * from the usual chain, one region for every call: `--region` or the profile's), where it also
 * registers each key in the API Gateway usage plan.
 */
const USAGE = `Usage:
  npm run keys -- create --name "Acme Ltd" [--email ops@acme.ng] [--phone +2348012345678] [--ip 203.0.113.0/24]... [--expires 2027-01-01T00:00:00Z] [--json] [--stage prod]
  npm run keys -- create --merchant <merchant_id> [--ip CIDR]... [--expires ISO-8601] [--json] [--stage prod]
  npm run keys -- roll <api_key> [--old-expires-in-hours 24] [--json] [--stage prod]
  npm run keys -- revoke <api_key> [--stage prod]
  npm run keys -- allow-ips <api_key> (--ip CIDR... | --any-ip) [--stage prod]
  npm run keys -- list --merchant <merchant_id> [--json] [--stage prod]
  npm run keys -- invite --merchant <merchant_id> --email <email> [--json] [--stage prod]
  npm run keys -- reset-mfa --email <email> [--json] [--stage prod]   (a user who lost their authenticator)
  npm run keys -- reset-password --email <email> [--json] [--stage prod]   (a user who forgot their password)
With --stage, --region <region> sets the AWS region of every call (default: AWS_REGION, else the profile's region).`;

/** The options each command reads (as USAGE lists them), besides `EVERY_COMMAND_TAKES`'s. */
const OPTIONS_OF: Record<string, readonly string[]> = {
  create: ['name', 'email', 'phone', 'merchant', 'ip', 'expires'],
  roll: ['old-expires-in-hours'],
  revoke: [],
  'allow-ips': ['ip', 'any-ip'],
  list: ['merchant'],
  invite: ['merchant', 'email'],
  'reset-mfa': ['email'],
  'reset-password': ['email'],
};

/** A phone number as the partner takes it: international (+ and 8-15 digits) or Nigerian (0 and 10). */
const PHONE = /^(?:\+[1-9]\d{7,14}|0\d{10})$/;
/** A merchant's name at most, as a virtual account's customer name (code points). */
const MERCHANT_NAME_MAX = 100;

/** What a refusal says: the field's message of a validation error, else the error's own. */
function reasonOf(error: Error): string {
  const details = (error as Error & { details?: { errors?: { message: string }[] } }).details;
  return details?.errors?.[0]?.message ?? error.message;
}

/** A merchant's keys at their limit is a refusal (exit 3); any other failure stays what it is. */
function refusedAtLimit(error: Error): never {
  if (error.name === 'LimitReached') throw new Refusal(error.message);
  throw error;
}

/**
 * A command's key (`pk_` and 32 hex digits). Anything else (a secret, `sk_…` or `whsec_…`, given in
 * its place, with a space before it too) is refused without being repeated: the terminal, and
 * whatever keeps its output, never shows it again.
 */
function keyArgument(given: string | undefined, command: string): string {
  if (given === undefined) return usage(`${command} needs the api_key`);
  if (!isKeyId(given))
    return usage(
      `${command} needs the api_key (pk_ and 32 hex digits), and was given something else (not shown here: it may be a secret)`,
    );
  return given;
}

/** Runs one CLI command; returns what it prints. */
export async function runKeys(argv: string[]): Promise<string> {
  const { values, positionals, tokens } = parseCommandLine(argv, {
    name: { type: 'string' },
    email: { type: 'string' },
    phone: { type: 'string' },
    merchant: { type: 'string' },
    ip: { type: 'string', multiple: true },
    expires: { type: 'string' },
    'old-expires-in-hours': { type: 'string', default: '24' },
    'any-ip': { type: 'boolean', default: false },
    stage: { type: 'string' },
    region: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  const [given, ...rest] = positionals;
  if (values.help) return USAGE;
  const command =
    given ??
    usage('give a command: create, roll, revoke, allow-ips, list, invite, reset-mfa or reset-password');
  const options = Object.hasOwn(OPTIONS_OF, command)
    ? (OPTIONS_OF[command] ?? [])
    : usage(`unknown command ${command}`);
  refuseOptionsNotTaken(tokens, command, options);
  process.env.LOG_LEVEL ??= 'ERROR';
  let gateway: ReturnType<typeof gatewayKeys> | undefined;
  if (values.stage !== undefined) {
    const region = await resolveRegion(values.region);
    const stageConfig = await loadStageConfig(values.stage, new SSMClient({ region }));
    useStageEnvironment(stageConfig, region);
    gateway = gatewayKeys(
      stageConfig.usagePlanId,
      apiGateway({ region, endpoint: process.env.AWS_ENDPOINT_URL_API_GATEWAY }),
    );
  } else {
    if (values.region !== undefined) usage('--region goes with --stage');
    // Only a new key is hashed with the pepper: the other commands work whatever the data folder.
    const hashes = command === 'create' || command === 'roll';
    useLocalEnvironment(['dynamodb', 'partner', 'cognito', ...(hashes ? (['pepper'] as const) : [])]);
    if (['invite', 'reset-mfa', 'reset-password'].includes(command)) await useLocalUserPool();
  }
  // Imported after the environment is set: the shared modules read their configuration at load.
  const { allowlistEntryProblem } = await import('#shared/api-keys/authenticate.ts');
  const keys = await import('#shared/api-keys/store.ts');
  const { toApiKey } = await import('#shared/api-keys/registry.ts');
  const lifecycle = await import('#shared/api-keys/lifecycle.ts');
  const { KeylessMerchant, onboardMerchant } = await import('#shared/merchants/onboard.ts');
  const { getMerchant } = await import('#shared/merchants/store.ts');
  const print = (json: object, text: string) => (values.json ? JSON.stringify(json) : text);

  if (command === 'create') {
    const allowedIps = values.ip ?? [];
    const problem = allowedIps.map(allowlistEntryProblem).find(Boolean);
    if (problem) usage(`--ip: ${problem}`);
    // A real calendar time (2026-02-30 is no date), in the future: a key born expired is no key.
    if (
      values.expires !== undefined &&
      (!isIsoDateTime(values.expires) || Date.parse(values.expires) <= Date.now())
    ) {
      usage('--expires must be an ISO 8601 date-time in the future (2027-01-01T00:00:00Z)');
    }
    const keyOptions = { allowedIps, expiresAt: values.expires && new Date(values.expires).toISOString() };
    if ((values.name !== undefined) === (values.merchant !== undefined))
      usage('give exactly one of --name or --merchant');
    if (values.name !== undefined) {
      if (!values.name.trim()) usage('--name must not be empty');
      // The API's rule for names people read: the wallet's name is every payer's name enquiry
      // (no control characters or bidi overrides to garble it, or a terminal's escapes).
      const nameChecked = v.safeParse(namingTextSchema(MERCHANT_NAME_MAX), values.name.trim());
      if (!nameChecked.success) usage(`--name: ${nameChecked.issues[0].message}`);
      if (values.email !== undefined && !isEmail(values.email))
        usage('--email must be an email address (as the API takes one: ASCII, e.g. ops@acme.ng)');
      if (values.phone !== undefined && !PHONE.test(values.phone))
        usage('--phone must be a phone number: + and 8 to 15 digits (+2348012345678), or 0 and 10 digits');
      // Locally the wallet is opened at Paystack with this shell's key (on AWS, the stage's secret).
      if (values.stage === undefined && lacksPaystackKey(process.env))
        usage(
          'with PARTNER=paystack the new wallet is opened at Paystack: give PAYSTACK_SECRET_KEY, the one npm start has',
        );
      await checkLocalPepper();
      const { merchant, key, apiSecret } = await onboardMerchant(
        values.name.trim(),
        keyOptions,
        { email: values.email, phone: values.phone },
        gateway,
      ).catch((error: unknown) => {
        // Run again with --name, it would make a second merchant: say how to give this one its key.
        if (!(error instanceof KeylessMerchant)) throw error;
        const stage = values.stage === undefined ? '' : ` --stage ${values.stage}`;
        throw new Error(
          `${error.message}. Its wallet is ${error.merchant.account_number}; make its key with: npm run keys -- create --merchant ${error.merchant.merchant_id}${stage}`,
          { cause: error.cause },
        );
      });
      return print(
        {
          merchant_id: merchant.merchant_id,
          api_key: key.api_key,
          api_secret: apiSecret,
          expires_at: key.expires_at ?? null,
          account_number: merchant.account_number,
          account_name: merchant.account_name,
        },
        [
          `Merchant created: ${merchant.merchant_id} (${merchant.name})`,
          `  wallet:     ${merchant.account_number} ${merchant.account_name}`,
          `  api_key:    ${key.api_key}`,
          `  api_secret: ${apiSecret}`,
          ...(key.expires_at ? [`  expires:    ${key.expires_at}`] : []),
          'The secret is shown once: store it now.',
        ].join('\n'),
      );
    }
    // A wallet's contact: the merchant's wallet exists already.
    if (values.email !== undefined || values.phone !== undefined)
      usage('--email and --phone go with --name: they are given to the partner for a new wallet');
    const merchantId = values.merchant ?? '';
    const merchant = (await getMerchant(merchantId)) ?? usage(`no merchant ${merchantId}`);
    await checkLocalPepper();
    const { record, apiSecret } = await lifecycle
      .createKey(merchantId, keyOptions, gateway)
      .catch(refusedAtLimit);
    return print(
      {
        merchant_id: merchantId,
        api_key: record.api_key,
        api_secret: apiSecret,
        expires_at: record.expires_at ?? null,
        // As `create --name` prints them (API.md §6): the wallet the key's merchant is paid into.
        account_number: merchant.account_number,
        account_name: merchant.account_name,
      },
      [
        `New key for ${merchantId}`,
        `  api_key:    ${record.api_key}`,
        `  api_secret: ${apiSecret}`,
        ...(record.expires_at ? [`  expires:    ${record.expires_at}`] : []),
        'The secret is shown once: store it now.',
      ].join('\n'),
    );
  }
  if (command === 'roll') {
    const apiKey = keyArgument(rest[0], 'roll');
    const given = values['old-expires-in-hours'] ?? '';
    // Decimal hours only: `Number` reads '' as 0 (the old key ended at once) and '0x10' as 16.
    const hours = /^\d+(?:\.\d+)?$/.test(given) ? Number(given) : Number.NaN;
    if (!Number.isFinite(hours) || hours < 0 || hours > 168)
      usage('--old-expires-in-hours must be 0 to 168 (7 days)');
    await checkLocalPepper();
    const rolled = await lifecycle
      .rollKey(apiKey, new Date(Date.now() + hours * 3_600_000), { registry: gateway })
      .catch((error: Error) => {
        if (error.name === 'NotFound') usage(`no active key ${apiKey}`);
        if (error.name === 'ValidationError') usage(reasonOf(error));
        return refusedAtLimit(error);
      });
    return print(
      {
        merchant_id: rolled.record.merchant_id,
        api_key: rolled.record.api_key,
        api_secret: rolled.apiSecret,
        old_api_key: apiKey,
        old_expires_at: rolled.old.expires_at,
      },
      [
        `New key for ${rolled.record.merchant_id}`,
        `  api_key:    ${rolled.record.api_key}`,
        `  api_secret: ${rolled.apiSecret}`,
        `The old key ${apiKey} works until ${rolled.old.expires_at}.`,
        'The secret is shown once: store it now.',
      ].join('\n'),
    );
  }
  if (command === 'revoke') {
    const apiKey = keyArgument(rest[0], 'revoke');
    const record = await lifecycle
      .revokeKey(apiKey, { registry: gateway })
      .catch((error: Error) =>
        error.name === 'NotFound' ? usage(`no key ${apiKey}`) : Promise.reject(error),
      );
    return print(
      { api_key: record.api_key, status: record.status, revoked_at: record.revoked_at },
      `Revoked ${record.api_key} (refused within ${ENFORCED_WITHIN})`,
    );
  }
  if (command === 'allow-ips') {
    const apiKey = keyArgument(rest[0], 'allow-ips');
    const ips = values.ip ?? [];
    if (values['any-ip'] === ips.length > 0) usage('give --ip CIDR (one or more) or --any-ip');
    const record = await lifecycle
      .editAllowedIps(apiKey, ips)
      .catch((error: Error) =>
        usage(error.name === 'NotFound' ? `no active key ${apiKey}` : `--ip: ${reasonOf(error)}`),
      );
    return print(
      { api_key: record.api_key, allowed_ips: record.allowed_ips ?? [] },
      `${record.api_key} may be used from ${record.allowed_ips?.join(', ') ?? 'any address'} (in effect within ${ENFORCED_WITHIN})`,
    );
  }
  if (command === 'invite') return invite(values, values.stage === undefined, print);
  if (command === 'reset-mfa') return resetMfa(values, print);
  if (command === 'reset-password') return resetPassword(values, print);
  const merchantId = values.merchant ?? usage('list needs --merchant <merchant_id>');
  // A mistyped id is said, not listed as a merchant without keys.
  if (!(await getMerchant(merchantId))) usage(`no merchant ${merchantId}`);
  // As the dashboard shows them: an active key past its expiry is `expired`.
  const list = (await keys.listApiKeys(merchantId)).map((key) => toApiKey(key));
  if (values.json) return JSON.stringify(list);
  if (list.length === 0) return `No keys for ${merchantId}`;
  return list
    .map(
      (k) =>
        `${k.api_key}  ${k.status.padEnd(7)}  created ${k.created_at}  last used ${k.last_used_at ?? 'never'}` +
        (k.revoked_at ? `  revoked ${k.revoked_at}` : '') +
        (k.expires_at ? `  expires ${k.expires_at}` : '') +
        (k.allowed_ips.length ? `  ips ${k.allowed_ips.join(',')}` : ''),
    )
    .join('\n');
}

/** The pool `npm start` made in its local Cognito (the same lookup finds it, or makes it). */
async function useLocalUserPool(): Promise<void> {
  const { createDashboardUserPool } = await import('#infra/local/cognito.ts');
  const env = process.env;
  const pool = await createDashboardUserPool(
    env.COGNITO_ENDPOINT ?? '',
    env.TABLE_PREFIX ?? DEFAULT_TABLE_PREFIX,
  );
  Object.assign(env, pool);
}

/**
 * `invite`: the merchant's first (or next) dashboard user. On AWS Cognito emails the temporary
 * password; locally nothing is emailed, so a temporary password is made and printed here. Either
 * way the user chooses their own password at first sign-in.
 */
async function invite(
  values: { merchant?: string; email?: string },
  local: boolean,
  print: (json: object, text: string) => string,
): Promise<string> {
  const merchantId = values.merchant ?? usage('invite needs --merchant <merchant_id>');
  const email = values.email ?? usage('invite needs --email <email>');
  if (!isEmail(email))
    usage('--email must be an email address (as the dashboard takes one: ASCII, e.g. ada@acme.ng)');
  const { getMerchant } = await import('#shared/merchants/store.ts');
  if (!(await getMerchant(merchantId))) usage(`no merchant ${merchantId}`);
  const { createDashboardUser, DuplicateUser, getDashboardUser, setTemporaryPassword } = await import(
    '#shared/dashboard/users.ts'
  );
  const { temporaryPassword } = await import('#shared/dashboard/passwords.ts');
  const password = local ? temporaryPassword() : undefined;
  const user = await createDashboardUser({ merchantId, email, password }).catch(async (error: Error) => {
    if (!(error instanceof DuplicateUser)) throw error;
    // Invited already (a run again, or a retry whose answer was lost after Cognito made the user)?
    const existing = await getDashboardUser(error.email);
    if (existing?.merchantId !== merchantId) {
      throw new Refusal(
        existing?.merchantId
          ? `${error.message}, a user of another merchant (${existing.merchantId}): an email signs in to one merchant's dashboard`
          : error.message,
      );
    }
    return existing;
  });
  if ('status' in user) {
    // Locally nothing was emailed: the password printed at the invitation may be lost, so one who
    // never signed in is given a new one (on AWS, Cognito's RESEND; the answer says so).
    if (!password || !user.enabled || user.status !== 'FORCE_CHANGE_PASSWORD')
      return alreadyInvited(user, merchantId, print);
    await setTemporaryPassword(user.email, password);
    return alreadyInvited(user, merchantId, print, password);
  }
  return print(
    { merchant_id: merchantId, email: user.email, temporary_password: password ?? null },
    [
      `Invited ${user.email} to the dashboard of ${merchantId}.`,
      password
        ? `  temporary password: ${password} (nothing is emailed locally: pass it on; a new one is chosen at first sign-in)`
        : '  Cognito emails a temporary password; a new one is chosen at first sign-in.',
    ].join('\n'),
  );
}

/**
 * `invite` of a user the merchant has already: nothing is made or sent again (locally, one who never
 * signed in is given `newPassword`, a new temporary password); what Cognito says of them.
 */
export function alreadyInvited(
  user: { email: string; status: string; enabled: boolean; createdAt: string | undefined },
  merchantId: string,
  print: (json: object, text: string) => string,
  newPassword?: string,
): string {
  const validDays = DASHBOARD_USER_POOL.passwordPolicy.TemporaryPasswordValidityDays;
  const invitedAt = user.createdAt ? Date.parse(user.createdAt) : Number.NaN;
  const expired = Date.now() - invitedAt > validDays * 24 * 3_600_000;
  const state =
    user.status === 'CONFIRMED'
      ? 'They have signed in and chosen their password.'
      : user.status !== 'FORCE_CHANGE_PASSWORD'
        ? `Cognito's status for them: ${user.status}.`
        : newPassword
          ? `They have a temporary password not yet changed (from the invitation, or a reset-password). Nothing is emailed locally, so they have a new one (the one given before no longer works): ${newPassword}`
          : expired
            ? `They never signed in, and their temporary password has expired (${validDays} days): have Cognito send a new one with aws cognito-idp admin-create-user --user-pool-id <DashboardUserPoolId> --username ${user.email} --message-action RESEND.`
            : `They have not signed in yet: the temporary password given then still stands (for ${validDays} days after the invitation).`;
  return print(
    {
      merchant_id: merchantId,
      email: user.email,
      temporary_password: newPassword ?? null,
      already_invited_at: user.createdAt ?? null,
      signed_in: user.status === 'CONFIRMED',
      status: user.status,
      enabled: user.enabled,
    },
    [
      `${user.email} is already a dashboard user of ${merchantId} (invited ${user.createdAt ?? 'earlier'}): nothing is made${newPassword ? '' : ' or sent'} again.`,
      `  ${state}`,
      ...(user.enabled ? [] : ['  The user is disabled in Cognito: they cannot sign in.']),
    ].join('\n'),
  );
}

/**
 * The dashboard user a reset command names by `--email` (a mistyped one is said, as a mistyped
 * merchant or key is: nothing is changed), their merchant, and the command that lists its keys.
 */
async function namedUser(command: string, values: { email?: string; stage?: string }) {
  const email = values.email ?? usage(`${command} needs --email <email>`);
  const { getDashboardUser } = await import('#shared/dashboard/users.ts');
  const user = email.trim().toLowerCase();
  const found = await getDashboardUser(user);
  if (!found) return usage(`no dashboard user ${user}`);
  const merchantId = found.merchantId ?? '<merchant_id>';
  const stage = values.stage === undefined ? '' : ` --stage ${values.stage}`;
  return { user, found, merchantId, keysList: `npm run keys -- list --merchant ${merchantId}${stage}` };
}

/**
 * `reset-mfa`: turns off TOTP for a dashboard user who lost their authenticator, once the operator
 * has made sure, out of band, that the request comes from that user. The user is signed out
 * everywhere first; the next sign-in asks for the password alone, and the user sets up a new
 * authenticator in the dashboard. What a stolen session may still have done is said, with the
 * command to look (the user's merchant is read first: nothing is changed if it cannot be).
 */
async function resetMfa(
  values: { email?: string; stage?: string },
  print: (json: object, text: string) => string,
): Promise<string> {
  const { user, merchantId, keysList } = await namedUser('reset-mfa', values);
  const { turnOffTotp, UnknownUser } = await import('#shared/dashboard/users.ts');
  await turnOffTotp(user).catch((error: Error) =>
    error instanceof UnknownUser ? usage(`no dashboard user ${user}`) : Promise.reject(error),
  );
  return print(
    { email: user, merchant_id: merchantId, totp: 'off', signed_out: true },
    [
      `TOTP is off for ${user}: the next sign-in asks for the password alone, and a new authenticator can be set up in the dashboard.`,
      `Their sessions are signed out. If one was stolen, its ID token still works in the dashboard for up to an hour, for keys and webhook endpoints too: check ${keysList} and revoke any key the user did not make, and have the user check Webhooks for endpoints they did not add (and rotate the others' secrets).`,
    ].join('\n'),
  );
}

/**
 * `reset-password`: a dashboard user who forgot their password (the operator makes sure who is
 * asking first, out of band) is given a temporary password, printed here to pass on (Cognito
 * emails none for it, on AWS either), then signed out everywhere: set first, so no session can be
 * started with the old password in between. At their next sign-in they choose a new one, as at
 * their first, and their TOTP, if on, is asked after it. A disabled user is refused: they could
 * not sign in with it.
 */
async function resetPassword(
  values: { email?: string; stage?: string },
  print: (json: object, text: string) => string,
): Promise<string> {
  const { user, keysList, found } = await namedUser('reset-password', values);
  const { signOutEverywhere, setTemporaryPassword } = await import('#shared/dashboard/users.ts');
  if (!found.enabled)
    throw new Refusal(
      `${user} is disabled in Cognito: they cannot sign in; enable them first if that is meant`,
    );
  const { temporaryPassword } = await import('#shared/dashboard/passwords.ts');
  const password = temporaryPassword();
  const gone = (error: Error) =>
    error.name === 'UserNotFoundException' ? usage(`no dashboard user ${user}`) : Promise.reject(error);
  await setTemporaryPassword(user, password).catch(gone);
  await signOutEverywhere(user).catch(gone);
  const validDays = DASHBOARD_USER_POOL.passwordPolicy.TemporaryPasswordValidityDays;
  return print(
    { email: user, merchant_id: found.merchantId ?? null, temporary_password: password, signed_out: true },
    [
      `${user} has a temporary password: ${password}`,
      `  Pass it on yourself (nothing is emailed); it works for ${validDays} days, and at their next sign-in they choose a new one. The old password no longer works.`,
      `  Their sessions are signed out, but an ID token taken before still works in the dashboard for up to an hour (Cognito does not revoke ID tokens): if the password may have been stolen, check ${keysList} and revoke any key the user did not make.`,
    ].join('\n'),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runMain(() => runKeys(process.argv.slice(2)), {
    usage: USAGE,
    // The DynamoDB of `npm start` and its partner (new wallets are issued by the partner).
    tried: ['dynamodb', 'partner', 'cognito'],
    portsHint:
      'is `npm start` running (or the partner, with --stage)? DYNAMODB_PORT and SANDBOX_PORT set other ports.',
  });
}
