import { App } from 'aws-cdk-lib';
import { quietBundlingProgress } from '#infra/bundling.ts';
import { nagSummary } from '#infra/nag.ts';
import { buildPaymentsApp } from '#infra/payments-app.ts';

// `cdk synth` / `cdk deploy` run this. Besides cdk's own report of any finding (which fails the
// synth), it prints a short summary: how many functions were bundled, and what cdk-nag found.
const progress = quietBundlingProgress();
const app = new App();
buildPaymentsApp(app);
let assemblyDirectory: string;
try {
  assemblyDirectory = app.synth().directory;
} finally {
  const bundled = progress.restore();
  if (bundled > 0) console.error(`Bundled ${bundled} assets with esbuild.`);
}
console.error(nagSummary(assemblyDirectory));
