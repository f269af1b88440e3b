import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/process.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let child: ChildProcess | undefined;
const dataDir = mkdtempSync(path.join(tmpdir(), 'naira-start-'));
afterAll(() => {
  if (child?.pid && isRunning(child.pid)) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start', () => {
  it('serves the API from the real start script and leaves no process behind on SIGTERM', async () => {
    const port = await freePort();
    const dynamoPort = await freePort();
    child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts', '--fresh'], {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        DYNAMODB_PORT: String(dynamoPort),
        SQS_PORT: String(await freePort()),
        SANDBOX_PORT: String(await freePort()),
        DATA_DIR: dataDir,
        TABLE_PREFIX: 'start-test-',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    await expect.poll(() => output, { timeout: 45_000, interval: 200 }).toContain('Payments API running at');
    expect(output).toContain(`curl -s http://127.0.0.1:${port}/api/v1/developer/banks`);

    const response = await fetch(`http://127.0.0.1:${port}/banks/list`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe('success');

    const exited = new Promise<number | null>((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // DynamoDB Local (a Java child) must be gone: nothing listens on its port any more.
    await expect(fetch(`http://127.0.0.1:${dynamoPort}`)).rejects.toThrow();
  }, 60_000);
});
