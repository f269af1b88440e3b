import { fileURLToPath } from 'node:url';
import { type BundlingOptions, LogLevel, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/**
 * What the bundles use in place of the AWS SDK's default credential chain: the execution role's
 * credentials from the environment, all a Lambda ever uses (`shared/aws/lambda-credentials.ts`).
 */
export const LAMBDA_CREDENTIALS = fileURLToPath(
  new URL('../shared/aws/lambda-credentials.ts', import.meta.url),
);

/**
 * What the bundles use in place of `node:stream/web`, which only `@middy/core` imports, at load, for a
 * streaming mode no function uses: the real `ReadableStream`, loaded on first use
 * (`shared/aws/web-streams-on-use.ts`).
 */
export const WEB_STREAMS_ON_USE = fileURLToPath(
  new URL('../shared/aws/web-streams-on-use.ts', import.meta.url),
);

/**
 * How every function is bundled (the stack, and the benchmark that measures bundles as deployed):
 * ESM, minified, source maps, the AWS SDK bundled so its version is the lock file's, and its
 * credentials read from the environment only. esbuild
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
  // 135 KB less per bundle (SSO, INI profiles, STS, metadata providers): about 10 ms per cold start.
  esbuildArgs: {
    '--alias:@aws-sdk/credential-provider-node': LAMBDA_CREDENTIALS,
    '--alias:node:stream/web': WEB_STREAMS_ON_USE,
  },
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
