import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { DEFAULT_PORTS } from '#infra/local/ports.ts';
import { localCredentials } from '#infra/local/process.ts';
import { loadLocalSecrets, localSecretsFile } from '#infra/local/secrets.ts';
import { useRunningServiceSettings } from '#infra/local/service-record.ts';
import { DEFAULT_TABLE_PREFIX } from '#shared/definitions/tables.ts';
import { PartnerUnavailable } from '#shared/errors.ts';

/** What the operator CLIs (`npm run keys`, `npm run ops`) share: errors, exit codes, local addresses. */

const root = path.resolve(import.meta.dirname, '..', '..');

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {}

export const usage = (message: string): never => {
  throw new UsageError(message);
};

/**
 * node:util `parseArgs` with positionals, refusing an option given twice unless it takes several
 * values (`parseArgs` would keep the last silently, and `unmatched credit … --merchant A --merchant B`
 * would credit B), and blank values and arguments.
 */
export function parseCommandLine<const O extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: O,
) {
  const parsed = parseArgs({ args, options, allowPositionals: true, tokens: true });
  const given = new Set<string>();
  for (const token of parsed.tokens) {
    // A blank value is a slip (an unset shell variable), never a value: `--merchant ""` reached
    // DynamoDB as an empty key (exit 1, its raw error).
    if (token.kind === 'option' && token.value !== undefined && token.value.trim() === '')
      usage(`${token.rawName} needs a value`);
    if (token.kind === 'positional' && token.value.trim() === '') usage('an argument is empty');
    if (token.kind !== 'option' || options[token.name]?.multiple) continue;
    if (given.has(token.name)) usage(`${token.rawName} is given more than once`);
    given.add(token.name);
  }
  return parsed;
}

/** The options every command of a CLI takes. */
export const EVERY_COMMAND_TAKES = ['json', 'stage', 'region', 'help'];

/**
 * Refuses (usage, exit code 2) an option `command` does not read: a mistake said, never silently
 * dropped (`roll … --phone`, `ledger audit --reason …`).
 */
export function refuseOptionsNotTaken(
  tokens: ReturnType<typeof parseArgs>['tokens'],
  command: string,
  takes: readonly string[],
): void {
  for (const token of tokens ?? []) {
    if (token.kind === 'option' && !takes.includes(token.name) && !EVERY_COMMAND_TAKES.includes(token.name))
      usage(`${token.rawName} does not go with ${command}`);
  }
}

/** A well-formed request the service's state refuses (e.g. already resolved): printed, exit code 3. */
export class Refusal extends Error {}

/** The local stand-ins a command talks to; `pepper` reads the local key-hash pepper of `.data/`. */
type LocalNeed = 'dynamodb' | 'sqs' | 'partner' | 'pepper' | 'cognito';

/** The environment variable that names each local address, for the message when nothing answers. */
const ADDRESS_OF: Partial<Record<LocalNeed, string>> = {
  dynamodb: 'DYNAMODB_ENDPOINT',
  sqs: 'SQS_ENDPOINT',
  partner: 'PARTNER_BASE_URL',
  cognito: 'COGNITO_ENDPOINT',
};

/**
 * Points the shared modules at the local stand-ins of `npm start`, unless the environment says
 * otherwise, and gives the CLI the running service's deploy settings in place of its shell's (the
 * differences, and a record it could not apply, said on stderr: `useRunningServiceSettings`).
 */
export function useLocalEnvironment(needs: readonly LocalNeed[]): void {
  const env = process.env;
  env.AWS_REGION ??= 'us-east-1';
  env.AWS_ACCESS_KEY_ID ??= localCredentials.accessKeyId;
  env.AWS_SECRET_ACCESS_KEY ??= localCredentials.secretAccessKey;
  const at = (name: keyof typeof DEFAULT_PORTS) => `http://127.0.0.1:${env[name] ?? DEFAULT_PORTS[name]}`;
  if (needs.includes('dynamodb')) env.DYNAMODB_ENDPOINT ??= at('DYNAMODB_PORT');
  if (needs.includes('sqs')) env.SQS_ENDPOINT ??= at('SQS_PORT');
  if (needs.includes('partner')) env.PARTNER_BASE_URL ??= at('SANDBOX_PORT');
  if (needs.includes('cognito')) env.COGNITO_ENDPOINT ??= at('COGNITO_PORT');
  // The running service's settings (MAX_BALANCE, fees, ...), if this data folder's service is the
  // one these tables are: a CLI of another shell decides with the service's values, not its own.
  const { applied, notes } = useRunningServiceSettings(localDataDir(env), env, {
    tablePrefix: env.TABLE_PREFIX ?? DEFAULT_TABLE_PREFIX,
    callsPartner: needs.includes('partner'),
  });
  // Said already when a running service's record could not be applied.
  settingsOfTheService = applied || notes.length > 0;
  for (const note of notes) console.error(note);
  if (needs.includes('pepper') && env.API_KEY_PEPPER === undefined) {
    // Only `npm start` makes a data folder's secrets: a pepper made here would hash keys the
    // running service can never verify. Without them, `checkLocalPepper` refuses (after the
    // command line is checked).
    pepperFromDataDir = localDataDir(env);
    if (existsSync(localSecretsFile(pepperFromDataDir)))
      env.API_KEY_PEPPER = loadLocalSecrets(pepperFromDataDir).API_KEY_PEPPER;
  }
}

/** Whether `useLocalEnvironment` gave the CLI the running service's recorded settings, or said why not. */
let settingsOfTheService = false;

/**
 * For a local command that decides by one of the service's settings (`unmatched credit`:
 * `MAX_BALANCE`, `value` as this CLI reads it): a line for stderr when it runs with its shell's
 * instead, no running `npm start` holding the data folder the environment names.
 */
export function shellSettingsNote(name: string, value: number | string): string | undefined {
  if (settingsOfTheService) return undefined;
  const given = process.env[name] === undefined ? `${value}, its default` : String(value);
  return `No running npm start holds ${localDataDir(process.env)}: this command checks with this shell's ${name} (${given}). Give it the DATA_DIR of the npm start it talks to, to check with that service's.`;
}

/** The data folder of `npm start` the environment names. */
function localDataDir(env: NodeJS.ProcessEnv): string {
  return path.resolve(root, env.DATA_DIR || '.data');
}

/** Set when `useLocalEnvironment` read the pepper from a data folder (not pinned by the environment). */
let pepperFromDataDir: string | undefined;

/**
 * Before a key is hashed with a data folder's pepper: that folder must be the one of the service the
 * CLI talks to, or the key would never work (a 401 on every call). Each `npm start` keeps its demo
 * merchant's key pair in its folder (`demo-merchant*.json`): one of them must be stored in this
 * DynamoDB under the hash this pepper gives. A folder without a demo key is not checked; one without
 * secrets is refused.
 */
export async function checkLocalPepper(): Promise<void> {
  const dataDir = pepperFromDataDir;
  if (!dataDir) return;
  const pepper = process.env.API_KEY_PEPPER;
  if (!pepper) {
    throw new Error(
      `No local secrets in ${dataDir}: that is no data folder of \`npm start\`. Run this with the DATA_DIR of the \`npm start\` you use (it makes the folder on its first run).`,
    );
  }
  const demos = readdirSync(dataDir)
    .filter((name) => /^demo-merchant(-[\w-]+)?\.json$/.test(name))
    .flatMap((name) => {
      try {
        const saved = JSON.parse(readFileSync(path.join(dataDir, name), 'utf8')) as Record<string, unknown>;
        return typeof saved.api_key === 'string' && typeof saved.api_secret === 'string'
          ? [{ apiKey: saved.api_key, apiSecret: saved.api_secret }]
          : [];
      } catch {
        return [];
      }
    });
  if (demos.length === 0) return;
  const [{ getApiKey }, { secretMatches }] = await Promise.all([
    import('#shared/api-keys/store.ts'),
    import('#shared/api-keys/secrets.ts'),
  ]);
  for (const demo of demos) {
    const stored = await getApiKey(demo.apiKey, { consistent: true });
    if (stored && secretMatches(demo.apiSecret, stored.secret_hash, pepper)) return;
  }
  throw new Error(
    `The data folder ${dataDir} is not the one of the service at ${process.env.DYNAMODB_ENDPOINT}: a key made with its secrets would never work there. Run this with the DATA_DIR (and ports) of the \`npm start\` you use.`,
  );
}

/**
 * Runs a CLI's command and prints what it returns. A usage error prints the message and the usage
 * and exits 2; a refusal exits 3; a service that does not answer names the addresses tried; any
 * other failure exits 1.
 */
export function runMain(
  command: () => Promise<string>,
  options: { usage: string; tried: readonly LocalNeed[]; portsHint: string },
): void {
  command().then(
    (output) => console.log(output),
    (error: unknown) => {
      const { message, exitCode } = failureOf(error, options);
      console.error(message);
      process.exit(exitCode);
    },
  );
}

/** A command's failure as printed, and its exit code. */
export function failureOf(
  error: unknown,
  options: { usage: string; tried: readonly LocalNeed[]; portsHint: string },
  env: NodeJS.ProcessEnv = process.env,
): { message: string; exitCode: number } {
  // node:util parseArgs refuses an unknown option or a missing value with ERR_PARSE_ARGS_*:
  // a mistake in the command line like any other.
  const parseError = String((error as { code?: unknown })?.code ?? '').startsWith('ERR_PARSE_ARGS');
  if (error instanceof UsageError || parseError) {
    return { message: `${(error as Error).message}\n\n${options.usage}`, exitCode: 2 };
  }
  if (error instanceof Refusal) return { message: `Refused: ${error.message}`, exitCode: 3 };
  const text = String((error as Error)?.message ?? error);
  const cause = (error as Error)?.cause;
  const causeText =
    cause instanceof Error ? `${cause.message} ${String(cause.cause ?? '')}` : String(cause ?? '');
  const unreachable = /ECONNREFUSED|fetch failed/i.test(`${text} ${causeText}`);
  // A partner `npm start` does not run (Paystack, any other), or the sandbox partner that answered
  // but not as it should: the partner, not `npm start`.
  const partner = env.PARTNER ?? 'sandbox';
  if (error instanceof PartnerUnavailable && (partner !== 'sandbox' || !unreachable)) {
    const name =
      partner === 'paystack' ? 'Paystack' : partner === 'sandbox' ? 'the sandbox partner' : partner;
    const at =
      partner === 'paystack'
        ? (env.PAYSTACK_BASE_URL ?? 'https://api.paystack.co')
        : partner === 'sandbox'
          ? env.PARTNER_BASE_URL
          : undefined;
    return {
      message: `The banking partner (${name}${at ? ` at ${at}` : ''}) did not answer as it should: ${causeText.trim() || text}. Try again once it does.`,
      exitCode: 1,
    };
  }
  const down = unreachable || error instanceof PartnerUnavailable;
  // Where it tried: the address that refused the connection, if the error names it; else the
  // addresses useLocalEnvironment set (or the operator's environment did).
  const refusedAt = /ECONNREFUSED (\S+:\d+)/.exec(`${text} ${causeText}`)?.[1];
  const tried = refusedAt
    ? `http://${refusedAt}`
    : options.tried
        .map((need) => ADDRESS_OF[need] && env[ADDRESS_OF[need]])
        .filter(Boolean)
        .join(' and ');
  return {
    message: down
      ? `Could not reach the service at ${tried || 'AWS'}: ${options.portsHint}`
      : `Failed: ${text}`,
    exitCode: 1,
  };
}
