import path from 'node:path';
import { type App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { acknowledgeNagFindings } from '#infra/nag.ts';
import { PaymentsStack } from '#infra/stack.ts';
import { PARTNER_NAMES, type PartnerName } from '#shared/partners/partner.ts';

function partnerOf(value: unknown): PartnerName {
  const name = String(value ?? 'sandbox');
  if (!(PARTNER_NAMES as readonly string[]).includes(name))
    throw new Error(`partner must be one of ${PARTNER_NAMES.join(', ')}: ${name}`);
  return name as PartnerName;
}

/**
 * Adds the service to a CDK app: the stage from context (`-c stage=prod`, default `dev`), the
 * partner from `-c partner=paystack` (default `sandbox`, whose API is `-c partnerBaseUrl=https://…`
 * and `-c partnerBankCode=101`; Paystack's webhook addresses `-c paystackWebhookIps=a,b`, or `none`;
 * prod must name its partner, and with Paystack its webhook addresses, on every deploy), the
 * concurrency reserved for the payment events consumer and capping the partner webhook
 * (`-c paymentConsumerConcurrency=5 -c webhookConcurrency=20`, 0: none; an account whose concurrency
 * quota would leave fewer than 100 unreserved executions refuses any), and cdk-nag's AWS Solutions
 * checks with every acknowledged finding explained. Used by `infra/app.ts` and by
 * the infra tests, so both build the same thing.
 */
/** A whole number of executions from context (`-c name=5`), 0 or more. */
function executionsOf(app: App, name: string, fallback: number): number {
  const value = Number(app.node.tryGetContext(name) ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, 0 or more`);
  return value;
}

/**
 * A context value every prod deploy must give itself: its default would quietly change where money
 * goes (the sandbox partner instead of Paystack, no webhook allowlist) when one deploy forgets it.
 */
function givenForProd(app: App, stage: string, name: string, what: string): unknown {
  const value = app.node.tryGetContext(name);
  if (value === undefined && stage === 'prod') {
    throw new Error(
      `-c ${name}=… is required for stage prod (${what}): give every deploy of a stage the same -c values`,
    );
  }
  return value;
}

export function buildPaymentsApp(app: App): PaymentsStack {
  const stage = String(app.node.tryGetContext('stage') ?? 'dev');
  if (!/^[a-z][a-z0-9-]{1,19}$/.test(stage))
    throw new Error(`stage must be lower-case letters, digits and dashes: ${stage}`);
  const partner = partnerOf(givenForProd(app, stage, 'partner', 'paystack or sandbox'));
  const webhookIps =
    partner === 'paystack'
      ? givenForProd(app, stage, 'paystackWebhookIps', "Paystack's webhook addresses, or none")
      : app.node.tryGetContext('paystackWebhookIps');
  const consumerConcurrency = executionsOf(app, 'paymentConsumerConcurrency', 5);
  // It is also the SQS pollers' maximum, which Lambda takes from 2 up.
  if (consumerConcurrency === 1) throw new Error('paymentConsumerConcurrency must be 0 or at least 2');
  const stack = new PaymentsStack(app, `NairaPay-${stage}`, {
    stage,
    projectRoot: path.resolve(import.meta.dirname, '..'),
    partner,
    partnerBaseUrl: String(app.node.tryGetContext('partnerBaseUrl') ?? 'https://partner.invalid'),
    partnerBankCode: String(app.node.tryGetContext('partnerBankCode') ?? '101'),
    paystackBaseUrl: String(app.node.tryGetContext('paystackBaseUrl') ?? 'https://api.paystack.co'),
    // `none`: no allowlist, said on purpose.
    paystackWebhookIps: webhookIps === undefined || webhookIps === 'none' ? '' : String(webhookIps),
    requeryIntervalMinutes: Number(app.node.tryGetContext('requeryIntervalMinutes') ?? 1),
    paymentConsumerConcurrency: consumerConcurrency,
    webhookConcurrency: executionsOf(app, 'webhookConcurrency', 20),
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
    // Deleting prod takes turning this off first, on purpose.
    terminationProtection: stage === 'prod',
  });
  Tags.of(stack).add('service', 'naira-pay');
  Tags.of(stack).add('stage', stage);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
  return stack;
}
