/**
 * `npm run stack -- <function> [file]`: a stack trace from a function's CloudWatch logs, read from
 * `file` or stdin, with every frame in the bundle (`index.mjs:<line>:<column>`) mapped back to the
 * TypeScript it came from. The functions run without `--enable-source-maps` (it parsed each
 * bundle's source map at every cold start: about 10 ms), so their stacks point into minified code;
 * this bundles the function here exactly as the stack does (`infra/bundling.ts`) and reads the
 * source map. Run it at the commit that was deployed: the same code gives the same bundle.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUNDLING } from '#infra/bundling.ts';
import { runMain, usage } from '#infra/cli/command-line.ts';
import { esbuildOptions, originalPath } from '#infra/esbuild-options.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

const USAGE = `Usage:
  npm run stack -- <function> [file]     e.g. npm run stack -- create-transfer < stack.txt

<function> is a file name under functions/ (the Lambda is naira-<stage>-<function>); the stack
trace is read from [file], or from stdin. Exit codes: 0 done, 2 wrong command line.`;

/** A frame's position in the bundle: `index.mjs:12:3456`, after any path (Lambda's `file:///var/task/`). */
const BUNDLE_POSITION = /(?:file:\/\/)?(?:[^\s()]*\/)?index\.mjs:(\d+):(\d+)/g;

/**
 * The stack with each bundle position replaced by its source position (`shared/ledger/ledger.ts:120:7`,
 * relative to the project); a position the map has no source for is kept, and marked.
 */
export function mapStack(
  stack: string,
  sourceMap: SourceMap,
  bundleDir: string,
  lineLengths?: readonly number[],
): string {
  return stack.replace(BUNDLE_POSITION, (position, line: string, column: string) => {
    // Past the bundle's end (a line it does not have, a column past its line's end): another
    // commit's bundle. `findEntry` would answer the last mapping before it, as if it were mapped.
    const length = lineLengths?.[Number(line) - 1];
    if (lineLengths && (length === undefined || Number(column) < 1 || Number(column) > length + 1)) {
      return `${position} (no such position in this commit's bundle: not the bundle deployed)`;
    }
    const entry = sourceMap.findEntry(Number(line) - 1, Number(column) - 1) as {
      originalSource?: string;
      originalLine?: number;
      originalColumn?: number;
    };
    // Said, not left as if mapped: generated code (esbuild's banner), or another commit's bundle.
    if (!entry.originalSource || entry.originalLine === undefined) {
      return `${position} (no source: generated code, or not this commit's bundle)`;
    }
    const source = originalPath(entry.originalSource, bundleDir);
    return `${path.relative(ROOT, source)}:${entry.originalLine + 1}:${(entry.originalColumn ?? 0) + 1}`;
  });
}

/** Bundles `functions/<name>.ts` as deployed and maps `stack` through its source map. */
export async function mapFunctionStack(name: string, stack: string): Promise<string> {
  const entry = path.join(ROOT, 'functions', `${name}.ts`);
  if (!/^[a-z0-9-]+$/.test(name) || !existsSync(entry)) {
    return usage(`no function ${name}: give a file name under functions/, without .ts`);
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'naira-stack-'));
  try {
    const file = path.join(dir, 'index.mjs');
    await build({ ...esbuildOptions(BUNDLING, entry, file), metafile: false, absWorkingDir: ROOT });
    const sourceMap = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    const lineLengths = readFileSync(file, 'utf8')
      .split('\n')
      .map((text) => text.length);
    return mapStack(stack, sourceMap, dir, lineLengths);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runStack(args: readonly string[], stdin: () => string): Promise<string> {
  const [name, file, ...extra] = args;
  if (name === undefined || name.startsWith('-')) return usage('give the function whose stack trace it is');
  if (extra.length > 0) return usage(`unexpected ${extra.join(' ')}`);
  if (file !== undefined && !existsSync(file)) return usage(`no file ${file}`);
  const stack = file === undefined ? stdin() : readFileSync(file, 'utf8');
  if (!stack.match(BUNDLE_POSITION)) return usage('no index.mjs:<line>:<column> position in the stack trace');
  return mapFunctionStack(name, stack);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runMain(() => runStack(process.argv.slice(2), () => readFileSync(0, 'utf8')), {
    usage: USAGE,
    tried: [],
    portsHint: '',
  });
}
