import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { groupAlive } from '#test/support/npm-start.ts';

/**
 * A test that starts `npm start` (or anything) in a process group of its own and then dies before
 * stopping it (an exception, a `process.exit` ahead of its `finally`) must not leave the group
 * running: DynamoDB Local and the local servers would keep their ports and memory after the run.
 */
describe('a process group started by a test', () => {
  it.each([
    ['an uncaught exception', "throw new Error('the test failed before its finally');"],
    ['process.exit', 'process.exit(1);'],
  ])('is killed when the test process ends by %s', async (_, end) => {
    const script = [
      "import { spawnInGroup } from '#test/support/npm-start.ts';",
      "const { child } = spawnInGroup('sleep', ['30'], {});",
      'console.log(child.pid);',
      'await new Promise((resolve) => setTimeout(resolve, 100));',
      end,
    ].join('\n');
    const run = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: process.cwd() },
    ).catch((error: { stdout: string; code: number }) => error);
    expect(run).toMatchObject({ code: 1 });
    const pid = Number(run.stdout.trim());
    expect(pid).toBeGreaterThan(1);
    await expect.poll(() => groupAlive(pid), { timeout: 2_000 }).toBe(false);
  });
});
