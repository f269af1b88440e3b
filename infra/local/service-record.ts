import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { holderOf } from '#infra/local/data-lock.ts';
import { DEPLOY_SETTINGS } from '#infra/stack-names.ts';

/**
 * What a running `npm start` serves with, kept in its data folder for the local operator CLIs: as
 * `--stage` runs them with the stage's settings, a local run takes the service's, never its own
 * shell's (an `unmatched credit` from a shell without the service's lower `MAX_BALANCE` credited
 * past it). Only the settings a deploy may give by name: the CLI's own `LOG_LEVEL` stays its own.
 */
export const SERVICE_SETTINGS = DEPLOY_SETTINGS.filter((name) => name !== 'LOG_LEVEL');

export interface ServiceRecord {
  /** The `npm start` that wrote it: applied only while that process holds the folder. */
  pid: number;
  /** Which service it is: the CLI applies the record only to the tables it talks to. */
  dynamodbEndpoint: string;
  tablePrefix: string;
  partner: string;
  /** Each setting the service was given; one it was not given runs with its default. */
  settings: Record<string, string>;
}

const recordFile = (dataDir: string) => path.join(dataDir, 'service.json');

/** Written by `npm start` once its services run (each start replaces it). */
export function recordService(dataDir: string, record: ServiceRecord): void {
  writeFileSync(recordFile(dataDir), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

/** Removed by `npm start` as soon as it holds the folder: until it writes its own, a CLI finds none. */
export function forgetService(dataDir: string): void {
  rmSync(recordFile(dataDir), { force: true });
}

/** The settings of `env` a record keeps. */
export function settingsOf(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    SERVICE_SETTINGS.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])),
  );
}

/** The data folder's record, if it has a readable one. */
export function readServiceRecord(dataDir: string): ServiceRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(recordFile(dataDir), 'utf8')) as Partial<ServiceRecord> | null;
    const settings: unknown = record?.settings;
    const settingsAreStrings =
      typeof settings === 'object' &&
      settings !== null &&
      !Array.isArray(settings) &&
      Object.values(settings).every((value) => typeof value === 'string');
    return Number.isSafeInteger(record?.pid) &&
      typeof record?.dynamodbEndpoint === 'string' &&
      typeof record.tablePrefix === 'string' &&
      typeof record.partner === 'string' &&
      settingsAreStrings
      ? (record as ServiceRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Gives `env` (a local CLI's, pointed at `env.DYNAMODB_ENDPOINT` and `tablePrefix`) the settings of
 * the `npm start` holding `dataDir`, if it serves those tables; returns whether it did, and the
 * lines to print on stderr. A folder no running `npm start` holds says nothing here (the CLI's
 * service is elsewhere, or not running: a command that decides by these settings says so itself);
 * one whose service has not recorded its settings, or serves other tables, is said, as the CLI then
 * runs with its shell's values.
 */
export function useRunningServiceSettings(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  { tablePrefix, callsPartner }: { tablePrefix: string; callsPartner: boolean },
): { applied: boolean; notes: string[] } {
  const holder = holderOf(dataDir);
  if (holder === undefined) return { applied: false, notes: [] };
  const record = readServiceRecord(dataDir);
  if (record?.pid !== holder)
    return {
      applied: false,
      notes: [
        `The npm start holding ${dataDir} (process ${holder}) has not recorded its settings yet (it may still be starting): this command uses this shell's ${SERVICE_SETTINGS.join(', ')}. Run it again once the service is up.`,
      ],
    };
  if (record.dynamodbEndpoint !== env.DYNAMODB_ENDPOINT || record.tablePrefix !== tablePrefix) {
    // Either half may be the one meant: the folder (then the service's tables, named here), or
    // the ports (then their service's folder).
    const theirs = [
      record.dynamodbEndpoint !== env.DYNAMODB_ENDPOINT &&
        `DYNAMODB_PORT=${new URL(record.dynamodbEndpoint).port || '80'}`,
      record.tablePrefix !== tablePrefix && `TABLE_PREFIX=${record.tablePrefix}`,
    ].filter(Boolean);
    return {
      applied: false,
      notes: [
        `The npm start holding ${dataDir} serves the tables at ${record.dynamodbEndpoint} (prefix ${record.tablePrefix}), not those this command uses (${env.DYNAMODB_ENDPOINT}, prefix ${tablePrefix}): it uses this shell's settings. For that service, give it ${theirs.join(' ')} as well (its other ports then follow); for the service at ${env.DYNAMODB_ENDPOINT}, its own DATA_DIR.`,
      ],
    };
  }
  return { applied: true, notes: useServiceSettings(env, record, { callsPartner }) };
}

/**
 * Gives `env` the service's settings where its own differ (one the service was not given is
 * removed, so the CLI too runs with its default); returns a line for each it changed, naming the
 * shell's value it did not use, and, for a command that calls the partner, one if the shell's
 * partner is not the service's.
 */
export function useServiceSettings(
  env: NodeJS.ProcessEnv,
  record: ServiceRecord,
  { callsPartner }: { callsPartner: boolean },
): string[] {
  const notes: string[] = [];
  for (const name of SERVICE_SETTINGS) {
    const service = record.settings[name];
    if (env[name] === service) continue;
    if (env[name] !== undefined)
      notes.push(
        `Using the running service's ${name} (${service ?? 'its default'}), not this shell's ${env[name]}.`,
      );
    if (service === undefined) delete env[name];
    else env[name] = service;
  }
  const partner = env.PARTNER ?? 'sandbox';
  if (callsPartner && partner !== record.partner)
    notes.push(
      `The running service's partner is ${record.partner}, this shell's ${partner}: give this command the service's PARTNER (and its PAYSTACK_* settings).`,
    );
  return notes;
}
