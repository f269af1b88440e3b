import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '#infra/local/process.ts';

const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface RunningService {
  url: string;
  ports: { gateway: number; dynamodb: number };
  child: ChildProcess;
  dataDir: string;
  /** Everything the start script printed so far. */
  output(): string;
  /** SIGTERM, wait for the exit; resolves with the exit code. Removes a data folder it made. */
  stop(): Promise<number | null>;
  /**
   * SIGKILL of the whole process group (the start script, DynamoDB Local's Java): a crash. Removes a
   * data folder it made, as `stop` does.
   */
  crash(): Promise<void>;
}

export interface NpmStartOptions {
  /**
   * A data folder the caller owns (kept on stop, so a second start finds its data); without it, a
   * fresh temporary folder removed on stop.
   */
  dataDir?: string;
}

/** The four ports `npm start` listens on, each free a moment ago, as its environment names them. */
export async function startPorts(): Promise<
  Record<'PORT' | 'DYNAMODB_PORT' | 'SQS_PORT' | 'SANDBOX_PORT' | 'COGNITO_PORT', string>
> {
  return {
    PORT: String(await freePort()),
    DYNAMODB_PORT: String(await freePort()),
    SQS_PORT: String(await freePort()),
    SANDBOX_PORT: String(await freePort()),
    COGNITO_PORT: String(await freePort()),
  };
}

/** The process groups this process started and has not seen end: killed when it exits. */
const startedGroups = new Set<number>();

/**
 * Kills every group still running when this process exits, however it exits (a thrown error, a
 * `process.exit` before a `finally` ran): a group of its own is taken down by nothing else, and
 * would keep DynamoDB Local and the local servers on their ports after the test.
 */
function killOnExit(pid: number): void {
  if (startedGroups.size === 0) {
    process.once('exit', () => {
      for (const group of startedGroups) {
        try {
          process.kill(-group, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    });
  }
  startedGroups.add(pid);
}

/** Forgets a group once nothing of it is left (so its id, if reused, is never killed). */
function forgetIfGone(pid: number | undefined): void {
  if (pid !== undefined && !groupAlive(pid)) startedGroups.delete(pid);
}

/**
 * Runs a command from the project root in its own process group (so a test can take down
 * everything it started), collecting what it prints. The group is killed when this process exits,
 * if it is still there.
 */
export function spawnInGroup(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (child.pid !== undefined) killOnExit(child.pid);
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve)).then((code) => {
    forgetIfGone(child.pid);
    return code;
  });
  return { child, output: () => output, exited };
}

/** Whether any process of the group led by `pid` is still there. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs the real `npm start` script (`infra/local/start.ts`) on free ports, in its own process
 * group, and resolves once it prints that it is serving.
 */
export async function startNpmStart(
  env: Record<string, string> = {},
  options: NpmStartOptions = {},
): Promise<RunningService> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'naira-start-'));
  const ports = await startPorts();
  const args = ['--import', 'tsx', 'infra/local/start.ts', ...(options.dataDir ? [] : ['--fresh'])];
  const { child, output, exited } = spawnInGroup(process.execPath, args, {
    ...ports,
    DATA_DIR: dataDir,
    ...env,
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  /** The data folder this call made (not the caller's) goes with the service. */
  const removeOwnData = () => {
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const stop = async () => {
    if (alive()) child.kill('SIGTERM');
    const code = await exited;
    removeOwnData();
    return code;
  };
  const crash = async () => {
    try {
      process.kill(-(child.pid ?? 0), 'SIGKILL');
    } catch {
      // The group is gone already.
    }
    await exited;
    removeOwnData();
  };
  const deadline = Date.now() + 60_000;
  while (!output().includes('Payments API running at')) {
    if (Date.now() > deadline || !alive()) {
      await crash();
      throw new Error(`npm start did not come up:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url: `http://127.0.0.1:${ports.PORT}`,
    ports: { gateway: Number(ports.PORT), dynamodb: Number(ports.DYNAMODB_PORT) },
    child,
    dataDir,
    output,
    stop,
    crash,
  };
}
