import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DataFolderInUse,
  holdDataFolder,
  holderOf,
  lockFileOf,
  openDataFolderWarning,
} from '#infra/local/data-lock.ts';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
const aFolder = () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'naira-lock-'));
  folders.push(folder);
  return folder;
};
const locks = (folder: string) => readdirSync(folder).filter((entry) => entry.endsWith('.lock'));
/** The id of a process that has ended. */
const gonePid = () => spawnSync('true').pid as number;

describe('the data folder held by one npm start', () => {
  it('is taken when free: a lock named with this process id', () => {
    const folder = aFolder();
    expect(holdDataFolder(folder)).toBe(lockFileOf(process.pid));
    expect(locks(folder)).toEqual([lockFileOf(process.pid)]);
  });

  it("is refused while another holder runs, naming it, and this start's own lock is taken back", () => {
    const folder = aFolder();
    // This test's parent (vitest's main process) runs.
    writeFileSync(path.join(folder, lockFileOf(process.ppid)), '');
    expect(() => holdDataFolder(folder)).toThrow(DataFolderInUse);
    expect(() => holdDataFolder(folder)).toThrow(`in use by another npm start (process ${process.ppid})`);
    expect(locks(folder)).toEqual([lockFileOf(process.ppid)]);
  });

  it('names its running holder to those that only look (the Paystack stand-in), never a gone one', () => {
    const folder = aFolder();
    expect(holderOf(folder)).toBeUndefined();
    expect(holderOf(path.join(folder, 'absent'))).toBeUndefined();
    writeFileSync(path.join(folder, lockFileOf(gonePid())), '');
    expect(holderOf(folder)).toBeUndefined();
    writeFileSync(path.join(folder, lockFileOf(process.ppid)), '');
    expect(holderOf(folder)).toBe(process.ppid);
  });

  it('is taken over from processes that are gone (npm starts killed with SIGKILL), theirs removed', () => {
    const folder = aFolder();
    for (const pid of [gonePid(), gonePid()]) writeFileSync(path.join(folder, lockFileOf(pid)), '');
    writeFileSync(path.join(folder, 'npm-start.lock'), `${process.ppid}\n`);
    holdDataFolder(folder);
    // Only names of the lock's form count: another file is nobody's lock.
    expect(locks(folder).sort()).toEqual([lockFileOf(process.pid), 'npm-start.lock'].sort());
  });

  it('is held by one at most of several starting at once over a stale lock', {
    timeout: 30_000,
  }, async () => {
    const folder = aFolder();
    writeFileSync(path.join(folder, lockFileOf(gonePid())), '');
    // Each holds the folder (or is refused) and keeps running a while, as npm start would.
    const script = `import('#infra/local/data-lock.ts').then((lock) => {
      try { lock.holdDataFolder(process.argv[1]); console.log('held'); setTimeout(() => {}, 2000); }
      catch (error) { console.log(error instanceof lock.DataFolderInUse ? 'refused' : String(error)); }
    })`;
    const outcomes = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<string>((resolve) => {
            const child = spawn(process.execPath, ['--import', 'tsx', '-e', script, folder]);
            let output = '';
            child.stdout.on('data', (chunk) => {
              output += chunk;
            });
            child.on('exit', () => resolve(output.trim()));
          }),
      ),
    );
    expect(outcomes.every((outcome) => outcome === 'held' || outcome === 'refused')).toBe(true);
    expect(outcomes.filter((outcome) => outcome === 'held').length).toBeLessThanOrEqual(1);
    // Each removed its own lock when it ended: nothing is left but nobody's.
    expect(locks(folder)).toEqual([]);
  });
});

describe('a data folder others may read', () => {
  it('is named with the command that closes it; one for its owner alone is not (on Windows, never: no mode bits)', () => {
    const folder = aFolder();
    chmodSync(folder, 0o755);
    expect(openDataFolderWarning(folder)).toBe(
      process.platform === 'win32'
        ? undefined
        : `The data folder ${folder} may be read by other users of this machine (mode 755): it holds the local keys and secrets. Close it with: chmod 700 '${folder}'`,
    );
    chmodSync(folder, 0o700);
    expect(openDataFolderWarning(folder)).toBeUndefined();
  });
});
