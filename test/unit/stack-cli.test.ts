import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLING } from '#infra/bundling.ts';
import { UsageError } from '#infra/cli/command-line.ts';
import { runStack } from '#infra/cli/stack.ts';
import { bundleAll } from '#test/bench/bundles.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** What a deployed function logs when its handler throws: the bundle's stack, no source maps. */
async function deployedStack(name: string, event: unknown): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'naira-stack-test-'));
  dirs.push(dir);
  const [bundle] = await bundleAll(
    root,
    BUNDLING,
    [{ name, entry: path.join(root, 'functions', `${name}.ts`) }],
    dir,
  );
  const file = bundle?.file ?? '';
  const program = `const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)}); try { await handler(${JSON.stringify(event)}); } catch (error) { process.stdout.write(error.stack); }`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program], {
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      LOG_LEVEL: 'SILENT',
      NODE_NO_WARNINGS: '1',
    },
  });
  return stdout;
}

describe('npm run stack: a logged stack trace mapped back to the source', () => {
  it('maps the frames of a deployed bundle to the TypeScript line that threw', async () => {
    // No requestContext: the 405 function throws reading its request id (functions/refuse-method.ts:12).
    const stack = await deployedStack('refuse-method', { resource: '/balance' });
    expect(stack).toMatch(/index\.mjs:\d+:\d+/);
    expect(stack).not.toContain('refuse-method.ts');
    const mapped = await runStack(['refuse-method'], () => stack);
    expect(mapped).toContain('TypeError');
    expect(mapped).toMatch(/functions\/refuse-method\.ts:12:\d+/);
    expect(mapped).not.toMatch(/index\.mjs:\d+:\d+/);
  });

  it('keeps a position the source map has no source for, and says so', async () => {
    // Line 1 is the bundle's banner, which esbuild maps to no source.
    const mapped = await runStack(['refuse-method'], () => 'at x (file:///var/task/index.mjs:1:50)');
    expect(mapped).toBe(
      "at x (file:///var/task/index.mjs:1:50 (no source: generated code, or not this commit's bundle))",
    );
  });

  it("marks a position the bundle does not have (another commit's bundle), never maps it to the last line", async () => {
    for (const position of ['index.mjs:99999:1', 'index.mjs:3:999999']) {
      const mapped = await runStack(['refuse-method'], () => `at x (file:///var/task/${position})`);
      expect(mapped).toBe(
        `at x (file:///var/task/${position} (no such position in this commit's bundle: not the bundle deployed))`,
      );
    }
  });

  it('refuses an unknown function, and a stack with no bundle position', async () => {
    await expect(runStack(['no-such-function'], () => 'at x (index.mjs:1:2)')).rejects.toBeInstanceOf(
      UsageError,
    );
    await expect(runStack(['../package'], () => 'at x (index.mjs:1:2)')).rejects.toBeInstanceOf(UsageError);
    await expect(runStack(['refuse-method'], () => 'Error: nothing mappable')).rejects.toBeInstanceOf(
      UsageError,
    );
    await expect(runStack([], () => '')).rejects.toBeInstanceOf(UsageError);
  });
});
