import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/**
 * How every function is bundled (the stack, and the benchmark that measures bundles as deployed):
 * ESM, minified, source maps, and the AWS SDK bundled so its version is the lock file's.
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
  // Some bundled CommonJS code calls require(); ESM output needs it provided.
  banner: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
};
