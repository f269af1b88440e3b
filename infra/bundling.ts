import { type BundlingOptions, LogLevel, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/**
 * How every function is bundled (the stack, and the benchmark that measures bundles as deployed):
 * ESM, minified, source maps, and the AWS SDK bundled so its version is the lock file's. esbuild
 * reports only warnings and errors: its per-bundle size summary is noise in `npm run synth`.
 */
export const BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: 'node22',
  platform: 'node',
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  externalModules: [],
  logLevel: LogLevel.WARNING,
  // Some bundled CommonJS code calls require(); ESM output needs it provided.
  banner: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
};

/** The progress line aws-cdk-lib's asset staging writes to stderr, unconditionally, per bundled asset. */
const BUNDLING_PROGRESS = /^Bundling asset \S+\.\.\.\n$/;

/**
 * Stops aws-cdk-lib's "Bundling asset <path>..." lines (one per function; the library offers no
 * switch for them) from reaching stderr, counting them instead; every other write goes through
 * untouched. `restore` puts stderr back and tells how many assets were bundled.
 */
export function quietBundlingProgress(stream: NodeJS.WriteStream = process.stderr): { restore(): number } {
  const write = stream.write;
  let bundled = 0;
  stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
    if (typeof chunk === 'string' && BUNDLING_PROGRESS.test(chunk)) {
      bundled += 1;
      const callback = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof stream.write;
  return {
    restore() {
      stream.write = write;
      return bundled;
    },
  };
}
