import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/process.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';
import { type RunningService, startNpmStart } from '#test/support/npm-start.ts';

let service: RunningService | undefined;
afterAll(async () => {
  await service?.crash();
});

describe('npm start', () => {
  it('serves the API from the real start script and leaves no process behind on SIGTERM', async () => {
    service = await startNpmStart({ TABLE_PREFIX: 'start-test-' });
    expect(service.output()).toContain(`curl -s ${service.url}/api/v1/developer/banks`);
    expect(service.output()).toMatch(/X-API-Key: +pk_[0-9a-f]{32}/);

    const response = await fetch(`${service.url}/banks/list`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe('success');

    expect(await service.stop()).toBe(0);
    // DynamoDB Local (a Java child) must be gone: nothing listens on its port any more.
    await expect(fetch(`http://127.0.0.1:${service.ports.dynamodb}`)).rejects.toThrow();
  }, 90_000);
});

describe('npm start, stopped as a process manager stops it', () => {
  it('leaves no process of its group behind when the npm process gets SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'naira-npm-term-'));
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        PORT: String(await freePort()),
        DYNAMODB_PORT: String(await freePort()),
        SQS_PORT: String(await freePort()),
        SANDBOX_PORT: String(await freePort()),
        DATA_DIR: dataDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const group = npm.pid ?? 0;
    /** Whether any process of the group (npm, node, DynamoDB Local's Java) is still there. */
    const groupAlive = () => {
      try {
        process.kill(-group, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      let output = '';
      npm.stdout?.on('data', (chunk) => {
        output += chunk;
      });
      npm.stderr?.on('data', (chunk) => {
        output += chunk;
      });
      const deadline = Date.now() + 60_000;
      while (!output.includes('Payments API running at')) {
        if (Date.now() > deadline) throw new Error(`npm start did not come up:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      npm.kill('SIGTERM');
      const stopBy = Date.now() + 20_000;
      while (groupAlive() && Date.now() < stopBy) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(groupAlive()).toBe(false);
    } finally {
      if (groupAlive()) process.kill(-group, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
