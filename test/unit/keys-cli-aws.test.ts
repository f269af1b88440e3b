import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  UpdateApiKeyCommand,
} from '@aws-sdk/client-api-gateway';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { runKeys } from '#infra/cli/keys.ts';

// No AWS account exists here: every AWS call of `npm run keys -- … --stage prod` is mocked, and the
// test checks what the CLI asks AWS to do.
const ssm = mockClient(SSMClient);
const gateway = mockClient(APIGatewayClient);
const dynamo = mockClient(DynamoDBDocumentClient);
const secrets = mockClient(SecretsManagerClient);
const savedEnv = { ...process.env };
const PEPPER = 'prod-pepper-0123456789abcdefghijklmnopqrstuv';

beforeEach(() => {
  for (const mock of [ssm, gateway, dynamo, secrets]) mock.reset();
  ssm.on(GetParameterCommand, { Name: '/naira/prod/operator-config' }).resolves({
    Parameter: {
      Value: JSON.stringify({
        tablePrefix: 'naira-prod-',
        usagePlanId: 'plan123',
        pepperSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:naira/prod/api-key-pepper',
        partnerBaseUrl: 'https://partner.example.ng',
        partnerBankCode: '101',
      }),
    },
  });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: PEPPER });
  gateway.on(CreateApiKeyCommand).resolves({ id: 'gwkey1' });
  gateway.on(CreateUsagePlanKeyCommand).resolves({});
  gateway.on(GetApiKeysCommand).resolves({ items: [{ id: 'gwkey1', name: 'pk_x' }] });
  gateway.on(UpdateApiKeyCommand).resolves({});
  dynamo.on(TransactWriteCommand).resolves({});
  dynamo.on(PutCommand).resolves({});
  vi.stubGlobal(
    'fetch',
    vi.fn(
      async () =>
        new Response(
          JSON.stringify({ account_number: '5123456786', account_name: 'NAIRAPAY/ACME', bank_code: '101' }),
          { status: 201 },
        ),
    ),
  );
});
afterAll(() => {
  vi.unstubAllGlobals();
  process.env = savedEnv;
});

describe('npm run keys -- … --stage prod', () => {
  it('creates the merchant in the stage tables, hashes with the pepper from Secrets Manager, and registers the key in the usage plan', async () => {
    const output = JSON.parse(await runKeys(['create', '--name', 'Acme Ltd', '--json', '--stage', 'prod']));
    expect(output).toMatchObject({
      api_key: expect.stringMatching(/^pk_/),
      api_secret: expect.stringMatching(/^sk_/),
      account_number: '5123456786',
    });

    const transact = dynamo.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(transact.map((item) => item.Put?.TableName)).toEqual([
      'naira-prod-account-owners',
      'naira-prod-merchants',
    ]);
    const put = dynamo.commandCalls(PutCommand)[0]?.args[0].input;
    expect(put?.TableName).toBe('naira-prod-api-keys');
    expect(JSON.stringify(put)).not.toContain(output.api_secret);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);

    expect(gateway.commandCalls(CreateApiKeyCommand)[0]?.args[0].input).toMatchObject({
      name: output.api_key,
      value: output.api_key,
      enabled: true,
    });
    expect(gateway.commandCalls(CreateUsagePlanKeyCommand)[0]?.args[0].input).toEqual({
      usagePlanId: 'plan123',
      keyId: 'gwkey1',
      keyType: 'API_KEY',
    });
    expect(vi.mocked(fetch).mock.calls[0]?.[0].toString()).toBe('https://partner.example.ng/v1/accounts');
  });

  it('revokes in the stage table and disables the key in API Gateway', async () => {
    dynamo.on(GetCommand).resolves({
      Item: {
        api_key: 'pk_x',
        merchant_id: 'mer_1',
        status: 'active',
        created_at: '2026-11-20T00:00:00.000Z',
      },
    });
    dynamo.on(UpdateCommand).resolves({
      Attributes: { api_key: 'pk_x', status: 'revoked', revoked_at: '2026-11-21T00:00:00.000Z' },
    });
    const output = await runKeys(['revoke', 'pk_x', '--stage', 'prod']);
    expect(output).toContain('Revoked pk_x');
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input.TableName).toBe('naira-prod-api-keys');
    expect(gateway.commandCalls(UpdateApiKeyCommand)[0]?.args[0].input).toEqual({
      apiKey: 'gwkey1',
      patchOperations: [{ op: 'replace', path: '/enabled', value: 'false' }],
    });
  });

  it('refuses a stage that is not deployed', async () => {
    ssm.on(GetParameterCommand).resolves({});
    await expect(runKeys(['list', '--merchant', 'mer_1', '--stage', 'qa'])).rejects.toThrow(/not deployed/);
  });
});
