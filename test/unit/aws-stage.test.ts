import { afterEach, describe, expect, it } from 'vitest';
import { type StageConfig, useStageEnvironment } from '#infra/cli/aws-stage.ts';
import { QUEUE_LIST } from '#shared/definitions/queues.ts';

const savedEnv = { ...process.env };
afterEach(() => {
  process.env = { ...savedEnv };
});

const stage: StageConfig = {
  tablePrefix: 'naira-prod-',
  usagePlanId: 'plan1',
  pepperSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:naira/prod/api-key-pepper',
  partner: 'paystack',
  partnerBaseUrl: 'https://partner.invalid',
  partnerBankCode: '101',
};

describe("the operator CLI's --stage environment", () => {
  it("runs with the stage's deploy settings, and the functions' defaults for the rest, never the shell's", () => {
    Object.assign(process.env, {
      MAX_BALANCE: '100',
      TRANSFER_FEE_TIERS: '*:0',
      PAYSTACK_DVA_BANK: 'test-bank',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
    });
    useStageEnvironment(
      { ...stage, settings: { MAX_BALANCE: '5000000000000', PAYSTACK_DVA_BANK: 'titan-paystack' } },
      'eu-west-1',
    );
    expect(process.env).toMatchObject({
      MAX_BALANCE: '5000000000000',
      PAYSTACK_DVA_BANK: 'titan-paystack',
      TABLE_PREFIX: 'naira-prod-',
      PARTNER: 'paystack',
    });
    expect(process.env.TRANSFER_FEE_TIERS).toBeUndefined();
    expect(process.env.DYNAMODB_ENDPOINT).toBeUndefined();
  });

  it("sends none of the shell's local addresses and secrets to the stage", () => {
    // A local Paystack key would win over the stage's secret (shared/secrets.ts): `transfers fail
    // --stage` would ask Paystack about the stage's transfer with another account.
    const local = {
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      SQS_ENDPOINT: 'http://127.0.0.1:9324',
      API_KEY_PEPPER: 'local-pepper',
      PAYSTACK_SECRET_KEY: 'sk_test_local',
      ...Object.fromEntries(QUEUE_LIST.map((queue) => [queue.urlEnv, 'http://127.0.0.1:9324/queue/x'])),
    };
    Object.assign(process.env, local);
    useStageEnvironment(stage, 'eu-west-1');
    for (const name of Object.keys(local)) expect(process.env[name], name).toBeUndefined();
  });

  it('takes a stage deployed before settings existed as all defaults', () => {
    process.env.MAX_PAYMENT_AMOUNT = '1';
    useStageEnvironment(stage, 'eu-west-1');
    expect(process.env.MAX_PAYMENT_AMOUNT).toBeUndefined();
  });
});
