import '#shared/aws/node-version.ts';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { DEPLOY_SETTINGS, operatorConfigParameter } from '#infra/stack-names.ts';
import { QUEUE_LIST } from '#shared/definitions/queues.ts';

/** What the stack publishes for operators (SSM parameter, no secrets). */
export interface StageConfig {
  tablePrefix: string;
  usagePlanId: string;
  pepperSecretArn: string;
  partner?: string;
  partnerBaseUrl: string;
  partnerBankCode: string;
  paystackBaseUrl?: string;
  paystackSecretArn?: string;
  /** The dashboard's Cognito user pool (`keys invite`). */
  userPoolId?: string;
  /** The service settings the stage was deployed with, by variable name (absent before they existed). */
  settings?: Record<string, string>;
}

/**
 * The one region every AWS client of the CLI uses (SSM, DynamoDB, Secrets Manager, API Gateway):
 * `--region` when given, else the SDK's own resolution (`AWS_REGION`, then the profile's `region`).
 * Resolved once, so a stage is never read in one region and written in another.
 */
export async function resolveRegion(given?: string): Promise<string> {
  if (given) return given;
  try {
    return await new SSMClient({}).config.region();
  } catch {
    throw new Error('no AWS region: pass --region, or set one in the AWS profile (or AWS_REGION)');
  }
}

/** Reads a deployed stage's operator config from SSM. */
export async function loadStageConfig(stage: string, ssm: SSMClient): Promise<StageConfig> {
  const { Parameter } = await ssm.send(new GetParameterCommand({ Name: operatorConfigParameter(stage) }));
  if (!Parameter?.Value)
    throw new Error(`stage ${stage} is not deployed (no ${operatorConfigParameter(stage)})`);
  return JSON.parse(Parameter.Value) as StageConfig;
}

/**
 * Points the shared modules at a deployed stage: its tables, partner and pepper secret, real AWS
 * endpoints, all in `region` (the shared DynamoDB client and Secrets Manager reads take it from
 * `AWS_REGION`).
 */
export function useStageEnvironment(config: StageConfig, region: string): void {
  const env = process.env;
  // Local addresses and secrets from the operator's shell never reach the stage: its queues are
  // found by name (the stage's prefix), as the rest is.
  const local = ['DYNAMODB_ENDPOINT', 'SQS_ENDPOINT', 'API_KEY_PEPPER', 'PAYSTACK_SECRET_KEY'];
  for (const name of [...local, ...QUEUE_LIST.map((queue) => queue.urlEnv)]) delete env[name];
  env.AWS_REGION = region;
  env.TABLE_PREFIX = config.tablePrefix;
  env.PARTNER = config.partner ?? 'sandbox';
  env.PARTNER_BASE_URL = config.partnerBaseUrl;
  if (config.paystackBaseUrl) env.PAYSTACK_BASE_URL = config.paystackBaseUrl;
  if (config.paystackSecretArn) env.PAYSTACK_SECRET_KEY_ARN = config.paystackSecretArn;
  env.PARTNER_BANK_CODE = config.partnerBankCode;
  env.API_KEY_PEPPER_SECRET = config.pepperSecretArn;
  if (config.userPoolId) env.USER_POOL_ID = config.userPoolId;
  // The stage's settings, and the defaults the functions have for those it does not set: never
  // the operator's shell's (a local MAX_BALANCE must not decide a credit on prod).
  for (const name of DEPLOY_SETTINGS) {
    const value = config.settings?.[name];
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
}
