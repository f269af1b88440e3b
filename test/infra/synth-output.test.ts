import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, DockerImage, Stack } from 'aws-cdk-lib';
import { LogLevel } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLING, quietBundlingProgress } from '#infra/bundling.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Bundles one asset the way every function is bundled (aws-cdk-lib's asset staging, local
 * bundling) and returns what reached stderr meanwhile; `quiet` installs `quietBundlingProgress`.
 */
function bundleOneAsset(quiet: boolean): { stderr: string; bundled: number | undefined } {
  const source = mkdtempSync(path.join(tmpdir(), 'synth-output-src-'));
  const outdir = mkdtempSync(path.join(tmpdir(), 'synth-output-out-'));
  dirs.push(source, outdir);
  writeFileSync(path.join(source, 'handler.ts'), 'export const handler = () => 1;');
  let stderr = '';
  const write = process.stderr.write;
  process.stderr.write = ((chunk: unknown) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  const progress = quiet ? quietBundlingProgress() : undefined;
  let bundled: number | undefined;
  try {
    const stack = new Stack(new App({ outdir }), 'Quiet');
    new Asset(stack, 'Bundled', {
      path: source,
      bundling: {
        image: DockerImage.fromRegistry('never-pulled'),
        local: {
          tryBundle(outputDir) {
            writeFileSync(path.join(outputDir, 'index.mjs'), 'export const handler = () => 1;');
            return true;
          },
        },
      },
    });
    process.stderr.write('a warning of its own\n');
  } finally {
    bundled = progress?.restore();
    process.stderr.write = write;
  }
  return { stderr, bundled };
}

describe('npm run synth output', () => {
  it("drops aws-cdk-lib's per-asset 'Bundling asset' line, counting it, and lets everything else through", () => {
    // Without it, cdk-lib prints the line (so the test notices if cdk-lib changes its wording).
    expect(bundleOneAsset(false).stderr).toMatch(/^Bundling asset Quiet\/Bundled\/Stage\.\.\.\n/m);
    const quiet = bundleOneAsset(true);
    expect(quiet.stderr).toBe('a warning of its own\n');
    expect(quiet.bundled).toBe(1);
  });

  it('has esbuild report only warnings and errors, not a size summary per function', () => {
    expect(BUNDLING.logLevel).toBe(LogLevel.WARNING);
  });
});
