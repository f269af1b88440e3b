/**
 * A function bundled exactly as the CDK stack bundles it, with esbuild's JS API: what the bench
 * measures, and what `npm run stack` maps a logged stack trace through.
 */
import path from 'node:path';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/** Options the stack could set that this translation does not reproduce: refused rather than built wrong. */
const UNSUPPORTED: readonly (keyof BundlingOptions)[] = [
  'preCompilation',
  'nodeModules',
  'commandHooks',
  'charset',
  'forceDockerBundling',
];

/** `esbuildArgs` as JS API options: only `--alias:<package>` is reproduced; anything else is refused. */
function aliasesOf(bundling: BundlingOptions): Record<string, string> | undefined {
  const args = Object.entries(bundling.esbuildArgs ?? {});
  if (args.length === 0) return undefined;
  const aliases: Record<string, string> = {};
  for (const [flag, value] of args) {
    const alias = /^--alias:(.+)$/.exec(flag);
    if (!alias?.[1] || typeof value !== 'string') {
      throw new Error(`esbuild argument ${flag} is not reproduced by esbuildOptions`);
    }
    aliases[alias[1]] = value;
  }
  return aliases;
}

/**
 * The esbuild JS API options equivalent to the command line `NodejsFunction` runs for `bundling`
 * (aws-cdk-lib `Bundling.buildEsbuildArgs`: `--bundle <entry> --target --platform=node --format
 * --outfile --minify --sourcemap --sources-content --external --loader --define --log-level
 * --keep-names --tsconfig --banner:js --footer:js --main-fields --inject`, and `esbuildArgs`'
 * `--alias`), plus a metafile, which does not change the output.
 */
export function esbuildOptions(
  bundling: BundlingOptions,
  entry: string,
  outfile: string,
  runtimeTarget = 'node22',
): BuildOptions {
  const unsupported = UNSUPPORTED.filter((option) => bundling[option] !== undefined);
  if (unsupported.length > 0) {
    throw new Error(`bundling option(s) ${unsupported.join(', ')} are not reproduced by esbuildOptions`);
  }
  if (bundling.sourceMap === false && bundling.sourceMapMode) {
    throw new Error('sourceMapMode cannot be used when sourceMap is false');
  }
  const sourceMapEnabled = bundling.sourceMapMode ?? bundling.sourceMap;
  const sourceMapValue =
    bundling.sourceMapMode && bundling.sourceMapMode !== 'default' ? bundling.sourceMapMode : true;
  return {
    entryPoints: [entry],
    bundle: true,
    target: bundling.target ?? runtimeTarget,
    // `platform` in BundlingOptions is Docker's; NodejsFunction always passes --platform=node.
    platform: 'node',
    format: bundling.format,
    outfile,
    minify: bundling.minify ?? false,
    sourcemap: sourceMapEnabled ? (sourceMapValue as BuildOptions['sourcemap']) : false,
    sourcesContent: bundling.sourcesContent ?? true,
    external: bundling.externalModules ?? (bundling.bundleAwsSDK ? [] : ['@aws-sdk/*']),
    loader: bundling.loader as BuildOptions['loader'],
    define: bundling.define,
    keepNames: bundling.keepNames ?? false,
    tsconfig: bundling.tsconfig,
    banner: bundling.banner === undefined ? undefined : { js: bundling.banner },
    footer: bundling.footer === undefined ? undefined : { js: bundling.footer },
    mainFields: bundling.mainFields,
    inject: bundling.inject,
    alias: aliasesOf(bundling),
    logLevel: 'warning',
    metafile: true,
  };
}

/**
 * The file a bundle's source map entry came from: its `originalSource` is a path relative to the
 * bundle's folder (or a file URL), as esbuild writes it.
 */
export function originalPath(originalSource: string, bundleDir: string): string {
  return originalSource.startsWith('file:')
    ? new URL(originalSource).pathname
    : path.resolve(bundleDir, originalSource);
}
