import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRequery } from '#infra/local/runtime.ts';
import { REQUERY_TIMEOUT_SECONDS } from '#shared/definitions/routes.ts';

/**
 * The local runtime invokes the scheduled requery as EventBridge and Lambda do: with a context whose
 * time left is the function's timeout on AWS, so its partner calls and its round end in time
 * locally too (a send stalled without a deadline is what the one-minute start bound of a transfer's
 * send guards against). A stand-in handler records what it is given.
 */
let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'requery-context-'));
  await mkdir(path.join(root, 'functions'));
  await writeFile(
    path.join(root, 'functions', 'requery-transfers.ts'),
    `export const handler = async (_event: unknown, context: { functionName: string; getRemainingTimeInMillis(): number }) => {
  (globalThis as Record<string, unknown>).requeryInvoked = { name: context.functionName, left: context.getRemainingTimeInMillis() };
};
`,
  );
});
afterAll(async () => {
  delete (globalThis as Record<string, unknown>).requeryInvoked;
  await rm(root, { recursive: true, force: true });
});

describe('the local runtime’s requery', () => {
  it('is invoked with a Lambda context holding its AWS timeout', async () => {
    const requery = await startRequery({ port: 0, rootDir: root, env: {}, requeryIntervalSeconds: 0.05 });
    try {
      await expect
        .poll(() => (globalThis as Record<string, unknown>).requeryInvoked, { timeout: 5_000, interval: 20 })
        .toBeDefined();
    } finally {
      await requery.stop();
    }
    const invoked = (globalThis as Record<string, unknown>).requeryInvoked as { name: string; left: number };
    expect(invoked.name).toBe('requery-transfers');
    expect(invoked.left).toBeGreaterThan(REQUERY_TIMEOUT_SECONDS * 1000 - 2_000);
    expect(invoked.left).toBeLessThanOrEqual(REQUERY_TIMEOUT_SECONDS * 1000);
  });
});
