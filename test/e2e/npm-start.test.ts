import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { holderOf, lockFileOf } from '#infra/local/data-lock.ts';
import { readServiceRecord } from '#infra/local/service-record.ts';
import { isValidNuban } from '#shared/banks/nuban.ts';
import { DEFAULT_TABLE_PREFIX } from '#shared/definitions/tables.ts';
import { totpCode } from '#test/support/dashboard.ts';
import {
  groupAlive,
  type RunningService,
  spawnInGroup,
  startNpmStart,
  startPorts,
} from '#test/support/npm-start.ts';

let service: RunningService | undefined;
afterAll(async () => {
  await service?.crash();
});

describe('npm start', () => {
  it('serves the API from the real start script and leaves no process behind on SIGTERM', async () => {
    // PARTNER_BANK_CODE names the sandbox's own bank: the demo wallet is a GTBank number here.
    service = await startNpmStart({ TABLE_PREFIX: 'start-test-', PARTNER_BANK_CODE: '058' });
    expect(service.output()).toContain(`curl -sS ${service.url}/api/v1/developer/banks`);
    expect(service.output()).toMatch(/X-API-Key: +pk_[0-9a-f]{32}/);
    const wallet = /\(wallet (\d{10})\)/.exec(service.output())?.[1] ?? '';
    expect(wallet).toMatch(/^50/);
    expect(isValidNuban('058', wallet)).toBe(true);
    expect(isValidNuban('101', wallet)).toBe(false);

    const response = await fetch(`${service.url}/banks/list`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe('success');

    expect(await service.stop()).toBe(0);
    // DynamoDB Local (a Java child) must be gone: nothing listens on its port any more.
    await expect(fetch(`http://127.0.0.1:${service.ports.dynamodb}`)).rejects.toThrow();
  }, 90_000);
});

describe('npm start, stopped as a process manager stops it', () => {
  it('records what it runs with for the local CLIs, and leaves no process of its group behind when the npm process gets SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'naira-npm-term-'));
    const ports = await startPorts();
    const npm = spawnInGroup('npm', ['start', '--silent'], {
      ...ports,
      DATA_DIR: dataDir,
      MAX_BALANCE: '5000000',
    });
    const group = npm.child.pid ?? 0;
    try {
      const deadline = Date.now() + 60_000;
      while (!npm.output().includes('Payments API running at')) {
        if (Date.now() > deadline) throw new Error(`npm start did not come up:\n${npm.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // The dashboard users' passwords (cognito-local keeps them as typed) are the owner's alone.
      expect(statSync(path.join(dataDir, 'cognito')).mode & 0o077).toBe(0);
      // What it runs with, for the local operator CLIs (they take its MAX_BALANCE, not their shell's).
      expect(readServiceRecord(dataDir)).toEqual({
        // The process holding the folder (npm's child): a CLI applies the record only while it runs.
        pid: holderOf(dataDir),
        dynamodbEndpoint: `http://127.0.0.1:${ports.DYNAMODB_PORT}`,
        tablePrefix: process.env.TABLE_PREFIX ?? DEFAULT_TABLE_PREFIX,
        partner: process.env.PARTNER ?? 'sandbox',
        settings: expect.objectContaining({ MAX_BALANCE: '5000000' }),
      });
      npm.child.kill('SIGTERM');
      // Every process of the group (npm, node, DynamoDB Local's Java) must go.
      const stopBy = Date.now() + 20_000;
      while (groupAlive(group) && Date.now() < stopBy)
        await new Promise((resolve) => setTimeout(resolve, 200));
      expect(groupAlive(group)).toBe(false);
    } finally {
      if (groupAlive(group)) process.kill(-group, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('npm start, started again on its data folder', () => {
  it('keeps the demo user as it was left: a second factor turned on stays on, with the same password', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'naira-again-'));
    const shown = (output: string, label: string) => new RegExp(`${label}: (\\S+)`).exec(output)?.[1] ?? '';
    const post = async (url: string, route: string, body: unknown, idToken?: string) => {
      const response = await fetch(`${url}/api/v1/dashboard${route}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(idToken ? { Authorization: `Bearer ${idToken}` } : {}),
        },
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        data: ((await response.json()) as { data?: Record<string, string> }).data,
      };
    };
    try {
      const first = await startNpmStart({}, { dataDir });
      const [email, password] = [shown(first.output(), 'Demo user'), shown(first.output(), 'Password')];
      const session = (await post(first.url, '/sessions', { email, password })).data ?? {};
      const started =
        (await post(first.url, '/mfa/totp', { access_token: session.access_token }, session.id_token)).data ??
        {};
      const code = totpCode(started.secret ?? '');
      const verified = await post(
        first.url,
        '/mfa/totp/verify',
        { access_token: session.access_token, code },
        session.id_token,
      );
      expect(verified.status).toBe(200);
      expect(await first.stop()).toBe(0);

      const second = await startNpmStart({}, { dataDir });
      try {
        // Before, the start found no session in the answer and made the user afresh, factor gone.
        expect(shown(second.output(), 'Password')).toBe(password);
        // The command as it works against this service: its data folder, ports and tables.
        const resetMfa =
          /\(two-factor on: sign-in asks for a code; DATA_DIR=\S+ COGNITO_PORT=\d+ DYNAMODB_PORT=\d+ (?:TABLE_PREFIX=\S+ )?npm run keys -- reset-mfa --email (\S+) turns it off\)/.exec(
            second.output(),
          );
        expect(resetMfa?.[1]).toBe(email);
        expect((await post(second.url, '/sessions', { email, password })).data).toMatchObject({
          challenge: 'SOFTWARE_TOKEN_MFA',
        });
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('a second npm start on the data folder of a running one', () => {
  it('is refused before it touches anything there, --fresh too; the running one keeps its queue journal', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'naira-held-'));
    const first = await startNpmStart({ TABLE_PREFIX: 'held-test-' }, { dataDir });
    try {
      const journal = path.join(dataDir, 'sqs', 'journal.ndjson');
      const before = statSync(journal).ino;
      // Other ports: only the data folder is shared. Before the lock, the plain one rewrote the
      // journal through a new file (the running one then appended to a deleted copy) and the
      // --fresh one wiped the folder.
      const seconds = await Promise.all(
        [[], ['--fresh']].map(async (extra) =>
          spawnInGroup(process.execPath, ['--import', 'tsx', 'infra/local/start.ts', ...extra], {
            ...(await startPorts()),
            DATA_DIR: dataDir,
          }),
        ),
      );
      // Each ends by itself within seconds; one that started instead is stopped below.
      const refusals = await Promise.all(
        seconds.map(async (second) => ({
          code: await Promise.race([second.exited, sleep(30_000).then(() => 'still running')]),
          output: second.output(),
        })),
      );
      for (const second of seconds) {
        if (groupAlive(second.child.pid ?? 0)) process.kill(-(second.child.pid ?? 0), 'SIGKILL');
      }
      expect(refusals).toHaveLength(2);
      for (const refused of refusals) {
        expect(refused.code).toBe(1);
        expect(refused.output).toContain(
          `The data folder ${dataDir} is in use by another npm start (process ${first.child.pid})`,
        );
      }
      expect(statSync(journal).ino).toBe(before);
      expect(readdirSync(dataDir)).toEqual(
        expect.arrayContaining(['demo-merchant.json', lockFileOf(first.child.pid ?? 0), 'sqs']),
      );
      expect((await fetch(`${first.url}/banks/list`)).status).toBe(200);
      expect(await first.stop()).toBe(0);
      // Stopped, it lets the folder go.
      expect(readdirSync(dataDir).filter((entry) => entry.endsWith('.lock'))).toEqual([]);
    } finally {
      await first.crash();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('npm start on a busy port', () => {
  it.each(['PORT', 'DYNAMODB_PORT', 'SQS_PORT', 'SANDBOX_PORT', 'COGNITO_PORT'])(
    'says in one line which port is in use when %s is taken, and exits 1 leaving nothing running',
    async (taken) => {
      // Holds the port; whatever connects to it (the start script probing it) is dropped at the end.
      const connected = new Set<Socket>();
      const blocker = createServer((socket) => connected.add(socket));
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      const busy = (blocker.address() as AddressInfo).port;
      const dataDir = mkdtempSync(path.join(tmpdir(), 'naira-busy-'));
      try {
        const start = spawnInGroup(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], {
          ...(await startPorts()),
          [taken]: String(busy),
          DATA_DIR: dataDir,
        });
        expect(await start.exited).toBe(1);
        const output = start.output();
        expect(output).toContain(`address already in use 127.0.0.1:${busy}`);
        expect(output).toContain(
          'A port is in use: stop the other process, or set PORT / DYNAMODB_PORT / SQS_PORT / SANDBOX_PORT / COGNITO_PORT (a second npm start also needs a DATA_DIR of its own).',
        );
        // No stack trace, Node's or Java's.
        expect(output).not.toMatch(/^\s+at /m);
        // Nothing of the group (DynamoDB Local's Java) is left behind.
        expect(groupAlive(start.child.pid ?? 0)).toBe(false);
      } finally {
        for (const socket of connected) socket.destroy();
        await new Promise((resolve) => blocker.close(resolve));
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
