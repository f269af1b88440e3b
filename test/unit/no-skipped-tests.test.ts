import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CONFIG = path.join(ROOT, 'test/fixtures/skipped-tests/vitest.config.mts');

/** Runs the fixture's cases in a vitest of their own (none of this run's variables), as `npm test` would. */
function runCases(extra: string[], env: Record<string, string> = {}) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith('VITEST') && key !== 'TEST' && key !== 'NODE_ENV',
    ),
  );
  const result = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', CONFIG, ...extra],
    { cwd: ROOT, env: { ...clean, NO_COLOR: '1', ...env }, encoding: 'utf8', timeout: 60_000 },
  );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('a run with a skipped or unfinished test', () => {
  it('fails, naming each one, however it was skipped', () => {
    const { status, output } = runCases([], { SKIP_CASES: '1' });
    expect(output).toContain('3 test(s) skipped or left to do');
    expect(output).toContain('cases.ts > is left to do (todo)');
    expect(output).toContain('cases.ts > is skipped by a condition (skip)');
    expect(output).toContain('cases.ts > skips itself');
    expect(status).toBe(1);
  });

  it('passes when every test ran, and when a filter by name (-t) or line left the others out on purpose', () => {
    const ran = runCases([], { SKIP_CASES: '0' });
    expect(ran.output).toMatch(/Tests\s+3 passed \(3\)/);
    expect(ran.output).not.toContain('skipped or left to do');
    expect(ran.status).toBe(0);
    const cases = path.join(path.dirname(CONFIG), 'cases.ts');
    // By name, and by line (the first test's), as an editor runs one test.
    for (const filter of [['-t', 'runs'], [`${cases}:5`]]) {
      const filtered = runCases(filter, { SKIP_CASES: '1' });
      expect(filtered.output, filter.join(' ')).toMatch(/Tests\s+1 passed/);
      expect(filtered.output, filter.join(' ')).not.toContain('skipped or left to do');
      expect(filtered.status, filter.join(' ')).toBe(0);
    }
  });
});
