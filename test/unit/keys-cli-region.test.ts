import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
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

// `npm run keys -- … --stage` with AWS_REGION unset: SSM, DynamoDB, Secrets Manager and API Gateway
// must all resolve the same region (the profile's, or --region), never a built-in default.
// Its own file: the shared modules read AWS_REGION once, when they are first imported.
const ssm = mockClient(SSMClient);
let gateway: ApiGatewayStandIn;
const dynamo = mockClient(DynamoDBDocumentClient);
let secretsManager: SecretsManagerStandIn;
const savedEnv = { ...process.env };
const awsDir = mkdtempSync(path.join(tmpdir(), 'aws-profile-'));

beforeAll(async () => {
  gateway = await startApiGatewayStandIn([{ id: 'plan123', name: 'naira-prod-per-key' }]);
  secretsManager = await startSecretsManagerStandIn();
});

beforeEach(() => {
  vi.resetModules();
  process.env = { ...savedEnv };
  // The profile alone gives region and credentials (static keys beside it make the SDK warn).
  for (const name of [
    'AWS_REGION',
    'AWS_DEFAULT_REGION',
    'DYNAMODB_ENDPOINT',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
  ])
    delete process.env[name];
  const configFile = path.join(awsDir, 'config');
  writeFileSync(configFile, '[profile naira-ops]\nregion = eu-west-2\n');
  process.env.AWS_CONFIG_FILE = configFile;
  const credentialsFile = path.join(awsDir, 'credentials');
  writeFileSync(
    credentialsFile,
    `[naira-ops]\naws_access_key_id = AKIDREGION\naws_secret_access_key = ${STAND_IN_SECRET_KEY}\n`,
  );
  process.env.AWS_SHARED_CREDENTIALS_FILE = credentialsFile;
  process.env.AWS_PROFILE = 'naira-ops';
  // API Gateway and Secrets Manager are called without an SDK client (shared/aws/service.ts):
  // their stand-ins record the region each request is signed for.
  process.env.AWS_ENDPOINT_URL_API_GATEWAY = gateway.url;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = secretsManager.url;
  gateway.requests.length = 0;

  for (const mock of [ssm, dynamo]) mock.reset();
  secretsManager.requests.length = 0;
  ssm.on(GetParameterCommand).resolves({
    Parameter: {
      Value: JSON.stringify({
        tablePrefix: 'naira-prod-',
        usagePlanId: 'plan123',
        pepperSecretArn: 'arn:aws:secretsmanager:eu-west-2:111122223333:secret:naira/prod/api-key-pepper',
        partnerBaseUrl: 'https://partner.example.ng',
        partnerBankCode: '101',
      }),
    },
  });
  secretsManager.secrets.set(
    'arn:aws:secretsmanager:eu-west-2:111122223333:secret:naira/prod/api-key-pepper',
    {
      SecretString: 'prod-pepper-0123456789abcdefghijklmnopqrstuv',
    },
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
  rmSync(awsDir, { recursive: true, force: true });
  await gateway.close();
  await secretsManager.close();
});

/** The regions the called clients resolved, per service (services not called are absent). */
async function regionsCalled(): Promise<Record<string, string[]>> {
  const mocks = { ssm, dynamodb: dynamo };
  const regions: Record<string, string[]> = {};
  for (const [service, mock] of Object.entries(mocks)) {
    const calls = mock.send.getCalls();
    if (calls.length === 0) continue;
    regions[service] = await Promise.all(
      calls.map((call) => (call.thisValue as { config: { region: () => Promise<string> } }).config.region()),
    );
  }
  if (secretsManager.requests.length > 0)
    regions.secretsmanager = secretsManager.requests.map((request) => request.scope?.region ?? '');
  if (gateway.requests.length > 0)
    regions.apigateway = gateway.requests.map((request) => request.region ?? '');
  return regions;
}

describe('npm run keys -- … --stage prod: one region for every AWS client', () => {
  it("uses the profile's region for SSM, DynamoDB, Secrets Manager and API Gateway alike when AWS_REGION is unset", async () => {
    await runKeys(['create', '--name', 'Acme Ltd', '--json', '--stage', 'prod']);
    expect(await regionsCalled()).toEqual({
      ssm: ['eu-west-2'],
      // The merchant, the keys in use (read, and its first time from the index), the key.
      dynamodb: ['eu-west-2', 'eu-west-2', 'eu-west-2', 'eu-west-2'],
      secretsmanager: ['eu-west-2'],
      apigateway: ['eu-west-2', 'eu-west-2'],
    });
  });

  it('uses --region for every client, over the profile', async () => {
    await runKeys(['create', '--name', 'Acme Ltd', '--json', '--stage', 'prod', '--region', 'af-south-1']);
    // Each run is a fresh process (modules reset), so the pepper is read again, in this region too.
    expect(await regionsCalled()).toEqual({
      ssm: ['af-south-1'],
      // The merchant, the keys in use (read, and its first time from the index), the key.
      dynamodb: ['af-south-1', 'af-south-1', 'af-south-1', 'af-south-1'],
      secretsmanager: ['af-south-1'],
      apigateway: ['af-south-1', 'af-south-1'],
    });
  });

  it('refuses --region without --stage (the local stand-ins have no region to choose)', async () => {
    await expect(runKeys(['list', '--merchant', 'mer_1', '--region', 'eu-west-1'])).rejects.toThrow(
      /--region goes with --stage/,
    );
  });
});
