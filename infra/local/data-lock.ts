import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The file by which a running `npm start` holds its data folder: its process id. A second
 * `npm start` on the same folder must touch nothing in it (it would compact the running one's queue
 * journal from under it, or wipe it with `--fresh`), so it takes this first, before anything else.
 */
export const LOCK_FILE = 'npm-start.lock';

/** Another running process holds the data folder. */
export class DataFolderInUse extends Error {}

/** Whether a process with this id runs (another user's too: signalling it is then refused). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process id a lock file names; undefined when it is gone or names none. */
function holderOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Holds `dataDir` (which exists) for this process until it exits, or throws `DataFolderInUse`
 * naming the process that holds it. A lock left by a process that no longer runs (an `npm start`
 * killed with SIGKILL) is taken over. The file is written whole before it appears (a link to a
 * finished file), so a reader never sees it half-written.
 */
export function holdDataFolder(dataDir: string): void {
  const file = path.join(dataDir, LOCK_FILE);
  const draft = `${file}.${process.pid}`;
  writeFileSync(draft, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let tries = 0; tries < 3; tries++) {
      try {
        linkSync(draft, file);
        process.on('exit', () => {
          if (holderOf(file) === process.pid) rmSync(file, { force: true });
        });
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = holderOf(file);
      if (holder !== undefined && holder !== process.pid && running(holder)) {
        throw new DataFolderInUse(
          `The data folder ${dataDir} is in use by another npm start (process ${holder}): stop it first, or give this one a DATA_DIR of its own (and other ports). If no npm start is running, delete ${file}.`,
        );
      }
      // Left by a process that is gone: taken over.
      rmSync(file, { force: true });
    }
    throw new DataFolderInUse(`Could not take ${file}: another npm start is starting on ${dataDir}.`);
  } finally {
    rmSync(draft, { force: true });
  }
}
