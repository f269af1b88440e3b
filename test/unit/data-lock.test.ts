import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataFolderInUse, holdDataFolder, LOCK_FILE } from '#infra/local/data-lock.ts';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
const aFolder = () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'naira-lock-'));
  folders.push(folder);
  return folder;
};

describe('the data folder held by one npm start', () => {
  it('is taken when free, and the lock names this process', () => {
    const folder = aFolder();
    holdDataFolder(folder);
    expect(readFileSync(path.join(folder, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
  });

  it('is refused while the process that holds it runs, naming it', () => {
    const folder = aFolder();
    // This test's parent (vitest's main process) runs.
    writeFileSync(path.join(folder, LOCK_FILE), `${process.ppid}\n`);
    expect(() => holdDataFolder(folder)).toThrow(DataFolderInUse);
    expect(() => holdDataFolder(folder)).toThrow(`in use by another npm start (process ${process.ppid})`);
    expect(readFileSync(path.join(folder, LOCK_FILE), 'utf8').trim()).toBe(String(process.ppid));
  });

  it.each([
    ['a process that is gone (an npm start killed with SIGKILL)', () => `${spawnSync('true').pid}\n`],
    ['no process id', () => ''],
  ])('is taken over from %s', (_, content) => {
    const folder = aFolder();
    writeFileSync(path.join(folder, LOCK_FILE), content());
    holdDataFolder(folder);
    expect(readFileSync(path.join(folder, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
  });
});
