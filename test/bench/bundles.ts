/**
 * Cold start proxy: every function bundled as the CDK stack bundles it (esbuild, `infra/bundling.ts`),
 * then the time a fresh `node` process takes to import each bundle.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { build, type Metafile } from 'esbuild';
import { esbuildOptions, originalPath } from '#infra/esbuild-options.ts';
import { median } from './stats.ts';

const execFileAsync = promisify(execFile);

/** A bundle on disk and what it is made of. */
export interface Bundle {
  name: string;
  file: string;
  bytes: number;
  /** Bytes in the output per package (or per top folder for project code), largest first. */
  contents: { input: string; bytes: number }[];
}

/** `node_modules/@scope/pkg/...` → `@scope/pkg`; project files → their top folder (`shared/`). */
function inputGroup(input: string): string {
  const inPackage = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  if (inPackage?.[1]) {
    // Nested node_modules: the innermost package is the one that was bundled.
    const all = [...input.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)];
    return all.at(-1)?.[1] ?? inPackage[1];
  }
  return `${input.split('/')[0] ?? input}/`;
}

function contentsOf(metafile: Metafile, outfile: string, root: string): Bundle['contents'] {
  const key = path.relative(root, outfile).split(path.sep).join('/');
  const output = metafile.outputs[key] ?? Object.values(metafile.outputs).find((o) => o.entryPoint);
  const groups = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const group = inputGroup(input);
    groups.set(group, (groups.get(group) ?? 0) + bytesInOutput);
  }
  return [...groups]
    .map(([input, bytes]) => ({ input, bytes }))
    .filter(({ bytes }) => bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
}

/** Bundles `entries` (name → entry file) into `<outDir>/<name>/index.mjs`, one after another. */
export async function bundleAll(
  root: string,
  bundling: BundlingOptions,
  entries: readonly { name: string; entry: string }[],
  outDir: string,
): Promise<Bundle[]> {
  const bundles: Bundle[] = [];
  for (const { name, entry } of entries) {
    if (!existsSync(entry)) throw new Error(`bench: no handler file ${entry}`);
    const dir = path.join(outDir, name);
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'index.mjs');
    const result = await build({ ...esbuildOptions(bundling, entry, file), absWorkingDir: root });
    if (!result.metafile) throw new Error('esbuild returned no metafile');
    bundles.push({
      name,
      file,
      bytes: (await stat(file)).size,
      contents: contentsOf(result.metafile, file, root),
    });
  }
  return bundles;
}

/** The child's program: time the import of one module, print the milliseconds, exit at once. */
const IMPORT_PROBE = [
  'const started = performance.now();',
  'await import(process.env.BENCH_IMPORT_URL);',
  "process.stdout.write(String(performance.now() - started) + '\\n');",
  'process.exit(0);',
].join(' ');

/**
 * What a function's module scope needs to load (config parsing, clients, logger), as on Lambda:
 * nothing inherited from this process, so no endpoint or secret leaks into the measurement.
 */
export const IMPORT_ENV: Readonly<Record<string, string>> = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  TABLE_PREFIX: 'bench-',
  LOG_LEVEL: 'SILENT',
  // The SDK warns about Node 20 on client construction; Lambda runs Node 22 and prints nothing.
  NODE_NO_WARNINGS: '1',
};

/**
 * One fresh `node` process importing `file`; returns the import time it measured (ms). `node` is the
 * binary (this process's by default; `npm run bench -- --import-node` names another, e.g. Node 22,
 * Lambda's runtime).
 */
export async function importOnce(
  file: string,
  env: Readonly<Record<string, string>> = IMPORT_ENV,
  node = process.execPath,
): Promise<number> {
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync(node, ['--input-type=module', '-e', IMPORT_PROBE], {
      env: { PATH: process.env.PATH ?? '', ...env, BENCH_IMPORT_URL: pathToFileURL(file).href },
      timeout: 30_000,
    }));
  } catch (error) {
    // The child's stderr quotes the minified bundle: keep only the short lines (the error itself).
    const stderr = String((error as { stderr?: unknown }).stderr ?? error);
    const lines = stderr.split('\n').filter((line) => line.length > 0 && line.length < 300);
    throw new Error(`bench: importing ${file} failed:\n${lines.slice(-12).join('\n')}`);
  }
  const ms = Number(stdout.trim());
  if (!Number.isFinite(ms))
    throw new Error(`bench: import probe of ${file} printed ${JSON.stringify(stdout)}`);
  return ms;
}

/** A function's import against the baseline's: its median time, and its median paired ratio. */
export interface PairedImport {
  medianMs: number;
  /** The median over runs of this import's time ÷ the baseline import made right before or after it. */
  ratio: number;
}

/**
 * Each file's import time against the baseline's, in adjacent pairs: every run imports each file
 * and the baseline one right after the other in fresh processes (which goes first alternates),
 * after one unmeasured warm-up import per file. A file's ratio is the median of its pairs' ratios,
 * so that drift in the machine's speed, which moves two imports made a few milliseconds apart
 * alike, cancels out. (Rounds of every file then the baseline once, as before, put seconds
 * between a file and its baseline: on this 2-core VM, six copies of the baseline itself read
 * 0.88–1.10× the baseline that way, and 0.97–1.05× in pairs, 25–31 runs each.) The baseline's
 * time is the median of all its imports.
 */
export async function pairedImportTimes(
  files: readonly string[],
  baseline: string,
  runs: number,
  onRound?: (round: number) => void,
  node = process.execPath,
): Promise<{ files: PairedImport[]; baselineMs: number }> {
  for (const file of [...files, baseline]) await importOnce(file, IMPORT_ENV, node);
  const times = files.map(() => [] as number[]);
  const ratios = files.map(() => [] as number[]);
  const baselineTimes: number[] = [];
  for (let round = 1; round <= runs; round++) {
    for (const [i, file] of files.entries()) {
      const baselineFirst = (round + i) % 2 === 0;
      const first = await importOnce(baselineFirst ? baseline : file, IMPORT_ENV, node);
      const second = await importOnce(baselineFirst ? file : baseline, IMPORT_ENV, node);
      const [fileMs, baselineMs] = baselineFirst ? [second, first] : [first, second];
      times[i]?.push(fileMs);
      ratios[i]?.push(fileMs / baselineMs);
      baselineTimes.push(baselineMs);
    }
    onRound?.(round);
  }
  return {
    files: files.map((_, i) => ({ medianMs: median(times[i] ?? []), ratio: median(ratios[i] ?? []) })),
    baselineMs: median(baselineTimes),
  };
}

/** Milliseconds of one cold import spent in one package (or project folder, or V8/Node itself). */
export interface ImportShare {
  input: string;
  ms: number;
}

interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Prints the import's start and end on the profiler's clock (microseconds, monotonic), then exits. */
const PROFILED_PROBE = [
  'const started = process.hrtime.bigint() / 1000n;',
  'await import(process.env.BENCH_IMPORT_URL);',
  "process.stdout.write(started + ' ' + process.hrtime.bigint() / 1000n + '\\n');",
  'process.exit(0);',
].join(' ');

/**
 * Where one cold import of `file` spends its milliseconds: a fresh `node --cpu-prof` (sampling every
 * 100 µs) imports it; each sample taken during the import is charged to the package or project
 * folder its bundled code came from (through the bundle's source map), to the module scope (the
 * top-level code of every package, which esbuild merges), to V8 (parsing and compiling the bundle,
 * which follows its size; garbage collection) or to Node (the built-in modules it loads).
 */
export async function profileImport(
  file: string,
  root: string,
  env: Readonly<Record<string, string>> = IMPORT_ENV,
  node = process.execPath,
): Promise<ImportShare[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'naira-import-profile-'));
  try {
    const { stdout } = await execFileAsync(
      node,
      [
        '--cpu-prof',
        `--cpu-prof-dir=${dir}`,
        '--cpu-prof-interval=100',
        '--input-type=module',
        '-e',
        PROFILED_PROBE,
      ],
      {
        env: { PATH: process.env.PATH ?? '', ...env, BENCH_IMPORT_URL: pathToFileURL(file).href },
        timeout: 30_000,
      },
    );
    const [from = 0, to = 0] = stdout.trim().split(' ').map(Number);
    const [profileFile] = await readdir(dir);
    if (!profileFile) throw new Error(`bench: no CPU profile of ${file}`);
    const profile = JSON.parse(await readFile(path.join(dir, profileFile), 'utf8')) as CpuProfile;
    const map = new SourceMap(JSON.parse(await readFile(`${file}.map`, 'utf8')));
    const bundleUrl = pathToFileURL(file).href;
    const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
    const groupOf = (frame: CpuProfile['nodes'][number]['callFrame']): string | undefined => {
      if (frame.url === bundleUrl) {
        const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string };
        // esbuild puts every ESM package's top-level statements in the one module scope.
        if (!entry.originalSource) return 'module scope (top-level code of every package)';
        const source = originalPath(entry.originalSource, path.dirname(file));
        return inputGroup(path.relative(root, source).split(path.sep).join('/'));
      }
      if (frame.functionName === 'compileSourceTextModule') return 'V8: parse and compile the bundle';
      if (frame.functionName === '(garbage collector)') return 'V8: garbage collection';
      if (frame.functionName === '(program)') return 'V8: other';
      if (frame.functionName === 'compileForInternalLoader') return 'Node: built-in modules it loads';
      if (frame.url.startsWith('node:')) return 'Node: module loader';
      return undefined;
    };
    const shares = new Map<string, number>();
    let at = profile.startTime;
    profile.samples.forEach((id, i) => {
      at += profile.timeDeltas[i] ?? 0;
      if (at < from || at > to) return;
      const frame = frames.get(id);
      const group = frame && groupOf(frame);
      // The sample's interval: the time until the next sample.
      if (group) shares.set(group, (shares.get(group) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000);
    });
    return [...shares].map(([input, ms]) => ({ input, ms })).sort((a, b) => b.ms - a.ms);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
