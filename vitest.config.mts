import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/{unit,integration,e2e,infra}/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // The default output, and a failed run if any test was skipped or left to do.
    reporters: ['default', './test/support/no-skipped-tests.ts'],
  },
});
