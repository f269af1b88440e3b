import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLING } from '#infra/bundling.ts';
import { bundleAll, pairedImportTimes, profileImport } from '#test/bench/bundles.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** A fresh directory, and in it the bundle of a module that burns 80 ms at import. */
async function burnBundle(prefix: string) {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  dirs.push(dir);
  const [bundle] = await bundleAll(
    root,
    BUNDLING,
    [{ name: 'burn', entry: path.join(root, 'test/fixtures/import-profile/entry.ts') }],
    dir,
  );
  return { dir, file: bundle?.file ?? '' };
}

describe("the bench's import profile", () => {
  it('charges the milliseconds a bundle spends in its own code to where that code came from', async () => {
    const { file } = await burnBundle('naira-import-profile-test-');
    const shares = await profileImport(file, root);
    const own = shares.find((share) => share.input === 'test/');
    // 80 ms burnt in test/fixtures/import-profile/burn.ts, sampled every 100 µs; under the load of a
    // full CI run as little as 58% of it was sampled (23 of 40 ms), hence 80 against 30.
    // (Not asserted to be the largest share: on a loaded machine a descheduled process charges its
    // wait to whatever frame was running, Node's module loader as often as not.)
    expect(own?.ms).toBeGreaterThan(30);
    // The rest is V8 and Node (this bundle is too small for its compile to be sampled every time).
    expect(shares.filter((share) => share.input.endsWith('/') && share.input !== 'test/')).toEqual([]);
  });
});

describe("the bench's paired import times", () => {
  it('sets each import against a baseline import made next to it', async () => {
    const { dir, file: slow } = await burnBundle('naira-paired-imports-test-');
    const empty = path.join(dir, 'empty.mjs');
    const alsoEmpty = path.join(dir, 'also-empty.mjs');
    await writeFile(empty, 'export const nothing = 0;\n');
    await writeFile(alsoEmpty, 'export const nothing = 0;\n');
    const rounds: number[] = [];
    const { files, baselineMs } = await pairedImportTimes([slow, alsoEmpty], empty, 3, (round) =>
      rounds.push(round),
    );
    expect(rounds).toEqual([1, 2, 3]);
    const [burnt, same] = files;
    // 80 ms burnt at import against a module of one line (a fresh node imports it in well under
    // 10 ms, under CI's load in under 40).
    expect(burnt?.medianMs).toBeGreaterThan(80);
    expect(burnt?.medianMs ?? 0).toBeGreaterThan(baselineMs + 40);
    expect(burnt?.ratio).toBeGreaterThan(2);
    // The same module against itself: a ratio about 1, whatever the machine's speed.
    expect(same?.ratio).toBeGreaterThan(0.5);
    expect(same?.ratio).toBeLessThan(2);
  });
});
