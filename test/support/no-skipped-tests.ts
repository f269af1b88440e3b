import type { Reporter, TestModule, TestSpecification, Vitest } from 'vitest/node';

/**
 * Fails the run when a test was skipped or left to do (`it.skip`, `it.todo`, `it.skipIf` true,
 * `ctx.skip()`, a `describe.skip`, or every test beside an `it.only`): a skipped test passes CI while
 * checking nothing, and Biome's `noSkippedTests` sees only a literal `.skip`. A run filtered to some
 * tests (by name, `-t`; by line, `<file>:<line>`; by id, as editors do) skips the others on purpose
 * and is not judged. A test that must not run somewhere says what holds there instead (see
 * `test/unit/data-lock.test.ts`). Named in `vitest.config.mts`'s `reporters`, which a `--reporter`
 * on the command line replaces: CI runs `npm test` without one.
 */
export default class NoSkippedTests implements Reporter {
  private vitest: Vitest | undefined;
  private filtered = false;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.filtered = specifications.some(
      (specification) =>
        specification.testNamePattern !== undefined ||
        (specification.testLines?.length ?? 0) > 0 ||
        (specification.testIds?.length ?? 0) > 0,
    );
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (this.filtered || this.vitest?.config.testNamePattern !== undefined) return;
    const skipped: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        if (test.result().state !== 'skipped') continue;
        skipped.push(`  ${module.relativeModuleId} > ${test.fullName} (${test.options.mode})`);
      }
    }
    if (skipped.length === 0) return;
    process.stderr.write(
      `\n${skipped.length} test(s) skipped or left to do, which a run may not pass with:\n${skipped.join('\n')}\n`,
    );
    process.exitCode = 1;
  }
}
