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
  /** Everything the start script printed so far. */
  output(): string;
  /** SIGTERM, wait for the exit; resolves with the exit code. Removes the data folder. */
  stop(): Promise<number | null>;
}

/**
 * Runs the real `npm start` script (`infra/local/start.ts`) on free ports with a fresh data folder,
 * and resolves once it prints that it is serving.
 */
export async function startNpmStart(env: Record<string, string> = {}): Promise<RunningService> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'naira-start-'));
  const ports = { gateway: await freePort(), dynamodb: await freePort() };
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts', '--fresh'], {
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
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const code = await exited;
    rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  const deadline = Date.now() + 60_000;
  while (!output.includes('Payments API running at')) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`npm start did not come up:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url: `http://127.0.0.1:${ports.gateway}`, ports, child, output: () => output, stop };
}
