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
  /** SIGKILL of the whole process group (the start script, DynamoDB Local's Java): a crash. */
  crash(): Promise<void>;
}

export interface NpmStartOptions {
  /**
   * A data folder the caller owns (kept on stop, so a second start finds its data); without it, a
   * fresh temporary folder removed on stop.
   */
  dataDir?: string;
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
  const ports = { gateway: await freePort(), dynamodb: await freePort() };
  const args = ['--import', 'tsx', 'infra/local/start.ts', ...(options.dataDir ? [] : ['--fresh'])];
  const child = spawn(process.execPath, args, {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      PORT: String(ports.gateway),
      DYNAMODB_PORT: String(ports.dynamodb),
      SQS_PORT: String(await freePort()),
      SANDBOX_PORT: String(await freePort()),
      DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that a crash can take the Java child down with it.
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (alive()) child.kill('SIGTERM');
    const code = await exited;
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  const crash = async () => {
    try {
      process.kill(-(child.pid ?? 0), 'SIGKILL');
    } catch {
      // The group is gone already.
    }
    await exited;
  };
  const deadline = Date.now() + 60_000;
  while (!output.includes('Payments API running at')) {
    if (Date.now() > deadline || !alive()) {
      await crash();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`npm start did not come up:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url: `http://127.0.0.1:${ports.gateway}`,
    ports,
    child,
    dataDir,
    output: () => output,
    stop,
    crash,
  };
}
