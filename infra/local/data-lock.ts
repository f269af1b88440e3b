import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * How a running `npm start` holds its data folder: a file named with its process id. A second
 * `npm start` on the same folder must touch nothing in it (it would compact the running one's queue
 * journal from under it, or wipe it with `--fresh`), so it takes this first, before anything else.
 */
export const lockFileOf = (pid: number) => `npm-start.${pid}.lock`;
const LOCK_FILE = /^npm-start\.(\d+)\.lock$/;

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

/** The other processes' locks in `dataDir`: each file and the process id it names. */
function othersLocks(dataDir: string): { entry: string; pid: number }[] {
  return readdirSync(dataDir).flatMap((entry) => {
    const pid = Number(LOCK_FILE.exec(entry)?.[1] ?? Number.NaN);
    return Number.isSafeInteger(pid) && pid !== process.pid ? [{ entry, pid }] : [];
  });
}

/** The running process that holds `dataDir`, if one does (a folder that does not exist: none). */
export function holderOf(dataDir: string): number | undefined {
  try {
    return othersLocks(dataDir).find(({ pid }) => running(pid))?.pid;
  } catch {
    return undefined;
  }
}

/**
 * Holds `dataDir` (which exists) for this process until it exits, or throws `DataFolderInUse`
 * naming a process that holds it; returns the lock file's name. Each start writes its own lock
 * first, then looks for another's: of two starting at once, at least the later one sees the
 * other's (both may refuse; neither runs beside the other). A lock of a process that no longer
 * runs (an `npm start` killed with SIGKILL) is removed: that process can hold nothing.
 */
export function holdDataFolder(dataDir: string): string {
  const own = lockFileOf(process.pid);
  const file = path.join(dataDir, own);
  writeFileSync(file, `${process.pid}\n`, { mode: 0o600 });
  for (const { entry, pid } of othersLocks(dataDir)) {
    if (running(pid)) {
      rmSync(file, { force: true });
      throw new DataFolderInUse(
        `The data folder ${dataDir} is in use by another npm start (process ${pid}): stop it first, or give this one a DATA_DIR of its own (and other ports). If no npm start is running, delete ${path.join(dataDir, entry)}.`,
      );
    }
    rmSync(path.join(dataDir, entry), { force: true });
  }
  process.on('exit', () => rmSync(file, { force: true }));
  return own;
}

/**
 * What to tell the owner of a data folder others may read (one made by an older checkout, or a
 * `DATA_DIR` made before `npm start`): it holds the local keys, the webhook secret and the journal
 * of every payment; `npm start` makes its folder for its owner alone, but leaves an existing one's
 * mode as it is. Undefined when only its owner may enter it (or on Windows, which has no such mode).
 */
export function openDataFolderWarning(dataDir: string): string | undefined {
  if (process.platform === 'win32') return undefined;
  const mode = statSync(dataDir).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  return `The data folder ${dataDir} may be read by other users of this machine (mode ${mode.toString(8)}): it holds the local keys and secrets. Close it with: chmod 700 '${dataDir}'`;
}
