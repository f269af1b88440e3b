import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEPLOY_SETTINGS } from '#infra/stack-names.ts';

/**
 * What a running `npm start` serves with, kept in its data folder for the local operator CLIs: as
 * `--stage` runs them with the stage's settings, a local run takes the service's, never its own
 * shell's (an `unmatched credit` from a shell without the service's lower `MAX_BALANCE` credited
 * past it). Only the settings a deploy may give by name: the CLI's own `LOG_LEVEL` stays its own.
 */
export const SERVICE_SETTINGS = DEPLOY_SETTINGS.filter((name) => name !== 'LOG_LEVEL');

export interface ServiceRecord {
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

/** The settings of `env` a record keeps. */
export function settingsOf(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    SERVICE_SETTINGS.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])),
  );
}

/** The data folder's record, if it has a readable one. */
export function readServiceRecord(dataDir: string): ServiceRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(recordFile(dataDir), 'utf8')) as Partial<ServiceRecord>;
    const settings = record.settings ?? {};
    const strings = Object.values(settings).every((value) => typeof value === 'string');
    return typeof record.dynamodbEndpoint === 'string' &&
      typeof record.tablePrefix === 'string' &&
      typeof record.partner === 'string' &&
      strings
      ? (record as ServiceRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Gives `env` the service's settings where its own differ (one the service was not given is
 * removed, so the CLI too runs with its default); returns a line for each it changed, naming the
 * shell's value it did not use, and one if the shell's partner is not the service's.
 */
export function useServiceSettings(env: NodeJS.ProcessEnv, record: ServiceRecord): string[] {
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
  if (partner !== record.partner)
    notes.push(
      `The running service's partner is ${record.partner}, this shell's ${partner}: give this command the service's PARTNER (and its PAYSTACK_* settings).`,
    );
  return notes;
}
