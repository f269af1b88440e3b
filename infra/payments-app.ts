import path from 'node:path';
import { type App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { acknowledgeNagFindings } from '#infra/nag.ts';
import { PaymentsStack } from '#infra/stack.ts';
import { DEPLOY_SETTINGS } from '#infra/stack-names.ts';
import { PARTNER_NAMES, type PartnerName } from '#shared/partners/partner.ts';

function partnerOf(value: unknown): PartnerName {
  const name = String(value ?? 'sandbox');
  if (!(PARTNER_NAMES as readonly string[]).includes(name))
    throw new Error(`partner must be one of ${PARTNER_NAMES.join(', ')}: ${name}`);
  return name as PartnerName;
}

/** The stack's own values, by their context name (`-c partner=paystack`). */
const STACK_VALUES = [
  'partner',
  'partnerBaseUrl',
  'partnerBankCode',
  'paystackBaseUrl',
  'paystackWebhookIps',
  'requeryIntervalMinutes',
  'paymentConsumerConcurrency',
  'webhookConcurrency',
] as const;

type ValueName = (typeof STACK_VALUES)[number] | (typeof DEPLOY_SETTINGS)[number];
const VALUE_NAMES: readonly string[] = [...STACK_VALUES, ...DEPLOY_SETTINGS];

/**
 * A stage's values: `-c name=value`, else the stage's block in cdk.json (`context.stages.<stage>`),
 * where a stage keeps them so that no deploy forgets one. Unknown names there are refused, as is a
 * `-c` of a variable's name (upper case) that is not a deploy setting: a typo must not pass.
 */
function stageValues(app: App, stage: string): (name: ValueName) => unknown {
  const stages: unknown = app.node.tryGetContext('stages') ?? {};
  const kept: unknown = (stages as Record<string, unknown>)[stage] ?? {};
  if (typeof stages !== 'object' || typeof kept !== 'object' || kept === null || Array.isArray(kept)) {
    throw new Error(`cdk.json's context.stages.${stage} must be an object of the stage's values`);
  }
  const where = `cdk.json's context.stages.${stage}`;
  for (const [name, value] of Object.entries(kept)) {
    if (!VALUE_NAMES.includes(name))
      throw new Error(`${where}: unknown value ${name} (known: ${VALUE_NAMES.join(', ')})`);
    if (typeof value !== 'string' && typeof value !== 'number')
      throw new Error(`${where}.${name} must be a string or a number`);
  }
  for (const name of Object.keys(app.node.getAllContext())) {
    if (/^[A-Z][A-Z0-9_]*$/.test(name) && !VALUE_NAMES.includes(name))
      throw new Error(`-c ${name}: not a setting a deploy may set (${DEPLOY_SETTINGS.join(', ')})`);
  }
  return (name) => app.node.tryGetContext(name) ?? (kept as Record<string, unknown>)[name];
}

/** A whole number of executions (`-c name=5`), 0 or more. */
function executionsOf(value: unknown, name: string, fallback: number): number {
  const executions = Number(value ?? fallback);
  if (!Number.isInteger(executions) || executions < 0)
    throw new Error(`${name} must be a whole number, 0 or more`);
  return executions;
}

/**
 * A value every prod deploy must give: its default would quietly change where money goes (the
 * sandbox partner instead of Paystack, no webhook allowlist) when one deploy forgets it.
 */
function givenForProd(value: unknown, stage: string, name: string, what: string): unknown {
  if (value === undefined && stage === 'prod') {
    throw new Error(
      `-c ${name}=… is required for stage prod (${what}): give it on every deploy, or keep it in cdk.json's context.stages.prod`,
    );
  }
  return value;
}

/** The deploy settings given, by variable name (the stack checks them with the rest of its environment). */
function deploySettings(value: (name: ValueName) => unknown): Record<string, string> {
  return Object.fromEntries(
    DEPLOY_SETTINGS.flatMap((name) => {
      const given = value(name);
      return given === undefined ? [] : [[name, String(given)]];
    }),
  );
}

/**
 * Adds the service to a CDK app: the stage from context (`-c stage=prod`, default `dev`), the
 * partner from `-c partner=paystack` (default `sandbox`, whose API is `-c partnerBaseUrl=https://…`
 * and `-c partnerBankCode=101`; Paystack's webhook addresses `-c paystackWebhookIps=a,b`, or `none`;
 * prod must name its partner, and with Paystack its webhook addresses, on every deploy), the
 * concurrency reserved for the payment events consumer and capping the partner webhook
 * (`-c paymentConsumerConcurrency=5 -c webhookConcurrency=20`, 0: none; an account whose concurrency
 * quota would leave fewer than 100 unreserved executions refuses any), and cdk-nag's AWS Solutions
 * checks with every acknowledged finding explained. Any of these, and the `DEPLOY_SETTINGS`, may
 * be kept per stage in cdk.json (`context.stages.<stage>`); a `-c` value wins. Used by
 * `infra/app.ts` and by the infra tests, so both build the same thing.
 */
export function buildPaymentsApp(app: App): PaymentsStack {
  const stage = String(app.node.tryGetContext('stage') ?? 'dev');
  if (!/^[a-z][a-z0-9-]{1,19}$/.test(stage))
    throw new Error(`stage must be lower-case letters, digits and dashes: ${stage}`);
  const value = stageValues(app, stage);
  const partner = partnerOf(givenForProd(value('partner'), stage, 'partner', 'paystack or sandbox'));
  const webhookIps =
    partner === 'paystack'
      ? givenForProd(
          value('paystackWebhookIps'),
          stage,
          'paystackWebhookIps',
          "Paystack's webhook addresses, or none",
        )
      : value('paystackWebhookIps');
  const consumerConcurrency = executionsOf(
    value('paymentConsumerConcurrency'),
    'paymentConsumerConcurrency',
    5,
  );
  // It is also the SQS pollers' maximum, which Lambda takes from 2 up.
  if (consumerConcurrency === 1) throw new Error('paymentConsumerConcurrency must be 0 or at least 2');
  const stack = new PaymentsStack(app, `NairaPay-${stage}`, {
    stage,
    projectRoot: path.resolve(import.meta.dirname, '..'),
    partner,
    partnerBaseUrl: String(value('partnerBaseUrl') ?? 'https://partner.invalid'),
    partnerBankCode: String(value('partnerBankCode') ?? '101'),
    paystackBaseUrl: String(value('paystackBaseUrl') ?? 'https://api.paystack.co'),
    // `none`: no allowlist, said on purpose.
    paystackWebhookIps: webhookIps === undefined || webhookIps === 'none' ? '' : String(webhookIps),
    requeryIntervalMinutes: Number(value('requeryIntervalMinutes') ?? 1),
    paymentConsumerConcurrency: consumerConcurrency,
    webhookConcurrency: executionsOf(value('webhookConcurrency'), 'webhookConcurrency', 20),
    settings: deploySettings(value),
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
