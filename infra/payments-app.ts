import path from 'node:path';
import { type App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { acknowledgeNagFindings } from '#infra/nag.ts';
import { PaymentsStack } from '#infra/stack.ts';

/**
 * Adds the service to a CDK app: the stage from context (`-c stage=prod`, default `dev`), the
 * partner's API from `-c partnerBaseUrl=https://…` and `-c partnerBankCode=101`, and cdk-nag's
 * AWS Solutions checks with every acknowledged finding explained. Used by `infra/app.ts` and by
 * the infra tests, so both build the same thing.
 */
export function buildPaymentsApp(app: App): PaymentsStack {
  const stage = String(app.node.tryGetContext('stage') ?? 'dev');
  if (!/^[a-z][a-z0-9-]{1,19}$/.test(stage))
    throw new Error(`stage must be lower-case letters, digits and dashes: ${stage}`);
  const stack = new PaymentsStack(app, `NairaPay-${stage}`, {
    stage,
    projectRoot: path.resolve(import.meta.dirname, '..'),
    partnerBaseUrl: String(app.node.tryGetContext('partnerBaseUrl') ?? 'https://partner.invalid'),
    partnerBankCode: String(app.node.tryGetContext('partnerBankCode') ?? '101'),
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  Tags.of(stack).add('service', 'naira-pay');
  Tags.of(stack).add('stage', stage);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
  return stack;
}
