import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { runKeys } from '#infra/cli/keys.ts';
import {
  type ApiGatewayStandIn,
  STAND_IN_SECRET_KEY,
  startApiGatewayStandIn,
} from '#test/support/api-gateway-stand-in.ts';
import {
  type SecretsManagerStandIn,
  startSecretsManagerStandIn,
} from '#test/support/secrets-manager-stand-in.ts';

// No AWS account exists here: every AWS call of `npm run keys -- … --stage prod` is mocked, or (API
// Gateway, which the CLI calls without an SDK client) sent to a stand-in, and the test checks what
// the CLI asks AWS to do.
const ssm = mockClient(SSMClient);
let gateway: ApiGatewayStandIn;
const dynamo = mockClient(DynamoDBDocumentClient);
let secretsManager: SecretsManagerStandIn;
const savedEnv = { ...process.env };
const PEPPER = 'prod-pepper-0123456789abcdefghijklmnopqrstuv';
/** A key id of the stage (the CLI refuses anything else before any call). */
const KEY = 'pk_0123456789abcdef0123456789abcdef';

beforeAll(async () => {
  gateway = await startApiGatewayStandIn([{ id: 'plan123', name: 'naira-prod-per-key' }]);
  secretsManager = await startSecretsManagerStandIn();
});

beforeEach(() => {
  for (const mock of [ssm, dynamo]) mock.reset();
  secretsManager.requests.length = 0;
  gateway.keys.splice(0, Infinity, { id: 'gwkey1', name: KEY, value: KEY, enabled: true });
  gateway.planKeys.set('plan123', []);
  gateway.requests.length = 0;
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_API_GATEWAY: gateway.url,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.url,
    AWS_ACCESS_KEY_ID: 'AKIDCLI',
    AWS_SECRET_ACCESS_KEY: STAND_IN_SECRET_KEY,
  });
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
  secretsManager.secrets.set(
    'arn:aws:secretsmanager:eu-west-1:111122223333:secret:naira/prod/api-key-pepper',
    { SecretString: PEPPER },
  );
  dynamo.on(TransactWriteCommand).resolves({});
  dynamo.on(PutCommand).resolves({});
  // The merchant's keys in use: none yet.
  dynamo.on(GetCommand).resolves({});
  dynamo.on(QueryCommand).resolves({ Items: [] });
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
afterAll(async () => {
  vi.unstubAllGlobals();
  process.env = savedEnv;
  await gateway.close();
  await secretsManager.close();
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
    // The key, with the merchant's keys in use, in one transaction.
    const keyItems = dynamo.commandCalls(TransactWriteCommand)[1]?.args[0].input.TransactItems ?? [];
    expect(keyItems.map((item) => item.Put?.TableName)).toEqual([
      'naira-prod-api-keys',
      'naira-prod-api-keys',
    ]);
    expect(keyItems[0]?.Put?.Item?.api_key).toBe(output.api_key);
    expect(keyItems[1]?.Put?.Item?.keys).toEqual({ [output.api_key]: '' });
    expect(JSON.stringify(keyItems)).not.toContain(output.api_secret);
    expect(secretsManager.requests.map((request) => request.signatureValid)).toEqual([true]);

    const registered = gateway.keys.find((key) => key.name === output.api_key);
    expect(registered).toMatchObject({ value: output.api_key, enabled: true });
    expect(gateway.planKeys.get('plan123')).toEqual([registered?.id]);
    expect(
      gateway.requests.every((request) => request.signatureValid && request.accessKeyId === 'AKIDCLI'),
    ).toBe(true);
    expect(vi.mocked(fetch).mock.calls[0]?.[0].toString()).toBe('https://partner.example.ng/v1/accounts');
  });

  it('stores no key when API Gateway refuses it: the merchant is made, keyless, and the refusal said', async () => {
    gateway.failNext(400);
    const refused = runKeys(['create', '--name', 'Acme Ltd', '--json', '--stage', 'prod']);
    await expect(refused).rejects.toThrow(
      /^Merchant (mer_\w+) was created, but not its first key: Injected failure\. Its wallet is 5123456786; make its key with: npm run keys -- create --merchant \1 --stage prod$/,
    );
    await expect(refused).rejects.toMatchObject({ cause: { name: 'BadRequestException' } });
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(1);
    expect(gateway.planKeys.get('plan123')).toEqual([]);
  });

  it('revokes in the stage table and deletes the key from API Gateway', async () => {
    dynamo.on(GetCommand).resolves({
      Item: {
        api_key: KEY,
        merchant_id: 'mer_1',
        status: 'active',
        created_at: '2026-11-20T00:00:00.000Z',
      },
    });
    dynamo.on(UpdateCommand).resolves({
      Attributes: { api_key: KEY, status: 'revoked', revoked_at: '2026-11-21T00:00:00.000Z' },
    });
    const output = await runKeys(['revoke', KEY, '--stage', 'prod']);
    expect(output).toContain(`Revoked ${KEY}`);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input.TableName).toBe('naira-prod-api-keys');
    expect(gateway.keys).toEqual([]);
    expect(gateway.requests.map((request) => [request.method, request.path])).toEqual([
      ['GET', '/apikeys'],
      ['DELETE', '/apikeys/gwkey1'],
    ]);
  });

  it('refuses a stage that is not deployed', async () => {
    ssm.on(GetParameterCommand).resolves({});
    await expect(runKeys(['list', '--merchant', 'mer_1', '--stage', 'qa'])).rejects.toThrow(/not deployed/);
  });
});
