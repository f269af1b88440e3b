import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockFileOf } from '#infra/local/data-lock.ts';
import {
  readServiceRecord,
  recordService,
  type ServiceRecord,
  settingsOf,
  useRunningServiceSettings,
  useServiceSettings,
} from '#infra/local/service-record.ts';

/** A process that runs and is not this one: what holds the folder, as a running `npm start` would. */
const holder = process.ppid;
const record: ServiceRecord = {
  pid: holder,
  dynamodbEndpoint: 'http://127.0.0.1:8000',
  tablePrefix: 'naira-',
  partner: 'paystack',
  settings: { MAX_BALANCE: '30000' },
};

describe("a local CLI run with the running service's settings", () => {
  it("takes the service's values, drops the shell's where the service has none, and says so", () => {
    const env: NodeJS.ProcessEnv = {
      MAX_BALANCE: '9',
      MAX_PAYMENT_AMOUNT: '5',
      LOG_LEVEL: 'DEBUG',
      PARTNER: 'paystack',
    };
    expect(useServiceSettings(env, record, { callsPartner: true })).toEqual([
      "Using the running service's MAX_PAYMENT_AMOUNT (its default), not this shell's 5.",
      "Using the running service's MAX_BALANCE (30000), not this shell's 9.",
    ]);
    // The CLI's own log level stays its own.
    expect(env).toEqual({ MAX_BALANCE: '30000', LOG_LEVEL: 'DEBUG', PARTNER: 'paystack' });
  });

  it("sets what the shell lacks silently, and names a partner that is not the service's to a command that calls it", () => {
    const env: NodeJS.ProcessEnv = {};
    expect(useServiceSettings(env, record, { callsPartner: false })).toEqual([]);
    expect(env.MAX_BALANCE).toBe('30000');
    expect(useServiceSettings({}, record, { callsPartner: true })).toEqual([
      "The running service's partner is paystack, this shell's sandbox: give this command the service's PARTNER (and its PAYSTACK_* settings).",
    ]);
  });

  it('records only the settings a deploy may give, and never LOG_LEVEL', () => {
    expect(
      settingsOf({ MAX_BALANCE: '1', LOG_LEVEL: 'DEBUG', PORT: '3000', TRANSFER_FEE_TIERS: '[]' }),
    ).toEqual({
      MAX_BALANCE: '1',
      TRANSFER_FEE_TIERS: '[]',
    });
  });
});

describe('which record a local CLI applies', () => {
  let dataDir = '';
  const folder = () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'service-record-'));
    return dataDir;
  };
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));
  const local = { tablePrefix: 'naira-', callsPartner: false };
  const env = () => ({ DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', MAX_BALANCE: '9' }) as NodeJS.ProcessEnv;
  const hold = (dir: string, pid: number) => writeFileSync(path.join(dir, lockFileOf(pid)), `${pid}\n`);

  it("the holding npm start's, for its own tables", () => {
    const dir = folder();
    hold(dir, holder);
    recordService(dir, record);
    const shell = env();
    expect(useRunningServiceSettings(dir, shell, local)).toEqual({
      applied: true,
      notes: ["Using the running service's MAX_BALANCE (30000), not this shell's 9."],
    });
    expect(shell.MAX_BALANCE).toBe('30000');
  });

  it('none while no npm start holds the folder: a stopped service decides nothing, and nothing is said', () => {
    const dir = folder();
    recordService(dir, record);
    const shell = env();
    expect(useRunningServiceSettings(dir, shell, local)).toEqual({ applied: false, notes: [] });
    expect(shell.MAX_BALANCE).toBe('9');
  });

  it('none of an earlier start, nor of a service with other tables, and it says so', () => {
    const dir = folder();
    hold(dir, holder);
    recordService(dir, { ...record, pid: holder + 1_000_000 });
    const shell = env();
    expect(useRunningServiceSettings(dir, shell, local)).toEqual({
      applied: false,
      notes: [expect.stringContaining(`(process ${holder}) has not recorded its settings yet`)],
    });
    recordService(dir, { ...record, dynamodbEndpoint: 'http://127.0.0.1:9999' });
    expect(useRunningServiceSettings(dir, shell, local)).toEqual({
      applied: false,
      notes: [
        expect.stringMatching(
          /serves the tables at http:\/\/127\.0\.0\.1:9999 \(prefix naira-\), not those this command uses .*For that service, give it DYNAMODB_PORT=9999 as well/,
        ),
      ],
    });
    // The same DynamoDB, other tables (another TABLE_PREFIX): another service too.
    recordService(dir, { ...record, tablePrefix: 'naira-other-' });
    expect(useRunningServiceSettings(dir, shell, local)).toEqual({
      applied: false,
      notes: [
        expect.stringMatching(
          /serves the tables at http:\/\/127\.0\.0\.1:8000 \(prefix naira-other-\), not those this command uses .*For that service, give it TABLE_PREFIX=naira-other- as well/,
        ),
      ],
    });
    expect(shell.MAX_BALANCE).toBe('9');
  });

  it('reads no record that is not whole: no settings, settings not an object, not JSON', () => {
    const dir = folder();
    const file = path.join(dir, 'service.json');
    const { settings: _left, ...noSettings } = record;
    for (const body of [
      JSON.stringify(noSettings),
      JSON.stringify({ ...record, settings: null }),
      JSON.stringify({ ...record, settings: ['1'] }),
      JSON.stringify({ ...record, settings: { MAX_BALANCE: 1 } }),
      JSON.stringify({ ...record, pid: 'x' }),
      'null',
      '{',
    ]) {
      writeFileSync(file, body);
      expect(readServiceRecord(dir), body).toBeUndefined();
    }
  });
});
