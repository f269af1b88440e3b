import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLING } from '#infra/bundling.ts';
import { esbuildOptions } from '#infra/esbuild-options.ts';
import { apiEvent } from '#test/support/events.ts';
import { aMerchant } from '#test/support/merchants.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** Bundles `entry` as the stack does (infra/bundling.ts); returns the file and the inputs it carries. */
async function bundle(entry: string) {
  const dir = await mkdtemp(path.join(tmpdir(), 'naira-bundle-'));
  dirs.push(dir);
  const file = path.join(dir, 'index.mjs');
  const { metafile } = await build({
    ...esbuildOptions(BUNDLING, path.join(root, entry), file),
    absWorkingDir: root,
  });
  // The inputs with code in the output (a module imported only for what tree shaking dropped has none).
  const output = Object.values(metafile?.outputs ?? {}).find((candidate) => candidate.entryPoint);
  const withCode = Object.entries(output?.inputs ?? {}).filter(([, { bytesInOutput }]) => bytesInOutput > 0);
  const inputs = withCode.map(([input]) => input);
  /** Bytes of the output from the inputs whose path includes `part`. */
  const bytesFrom = (part: string) =>
    withCode
      .filter(([input]) => input.includes(part))
      .reduce((sum, [, { bytesInOutput }]) => sum + bytesInOutput, 0);
  return { file, inputs, bytesFrom };
}

/**
 * Calls the bundle's handler in a fresh `node` (one container), once per event in turn, with only
 * `env` in its environment: every answer, or the first error.
 */
async function invokeAll(file: string, events: readonly unknown[], env: Record<string, string>) {
  const program = [
    `const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)});`,
    `try { const ok = []; for (const event of ${JSON.stringify(events)}) ok.push(await handler(event));`,
    'process.stdout.write(JSON.stringify({ ok })); }',
    'catch (error) { process.stdout.write(JSON.stringify({ error: error.name, message: error.message })); }',
  ].join(' ');
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program], {
    env: { PATH: process.env.PATH ?? '', NODE_NO_WARNINGS: '1', HOME: path.join(root, 'no-home'), ...env },
  });
  return JSON.parse(stdout) as { ok?: Record<string, unknown>[]; error?: string; message?: string };
}

/** What Lambda puts in a function's environment, pointed at this test run's DynamoDB Local. */
function lambdaEnv(): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT ?? '',
    TABLE_PREFIX: process.env.TABLE_PREFIX ?? '',
    LOG_LEVEL: 'SILENT',
  };
}

/** Calls the bundle's handler once in a fresh `node`, with only `env` in its environment. */
async function invoke(file: string, event: unknown, env: Record<string, string>) {
  const { ok, error, message } = await invokeAll(file, [event], env);
  return { ok: ok?.[0], error, message };
}

/** The built-in modules a fresh `node` loads to import `file`, beyond those it had loaded already. */
async function builtinsLoadedBy(file: string): Promise<string[]> {
  const program = [
    'const before = new Set(process.moduleLoadList);',
    `await import(${JSON.stringify(pathToFileURL(file).href)});`,
    'process.stdout.write(JSON.stringify(process.moduleLoadList.filter((name) => !before.has(name))));',
    'process.exit(0);',
  ].join(' ');
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_NO_WARNINGS: '1',
      AWS_REGION: 'us-east-1',
      TABLE_PREFIX: 'bundle-test-',
      LOG_LEVEL: 'SILENT',
    },
  });
  return JSON.parse(stdout) as string[];
}

describe('a cold start loads no built-in module a function does not use', () => {
  it("loads neither Node's web streams (@middy/core's streaming mode), node:http (local endpoints only) nor block lists (webhook URL checks)", async () => {
    const baseline = await builtinsLoadedBy((await bundle('test/bench/baseline-handler.ts')).file);
    expect(baseline).toContain('NativeModule https');
    // No function loads web streams or node:http at import. Block lists (net's ESM face loads them)
    // only where IP ranges are checked: the webhook deliveries check each address they post to.
    const unused = /stream\/web|webstreams|^NativeModule http$/;
    const unusedNorBlockLists = /stream\/web|webstreams|blocklist|^NativeModule http$/;
    const cases = [
      ['functions/get-balance.ts', unusedNorBlockLists],
      ['functions/create-transfer.ts', unusedNorBlockLists],
      ['functions/redeliver-event.ts', unusedNorBlockLists],
      ['functions/deliver-webhooks.ts', unused],
    ] as const;
    for (const [entry, pattern] of cases) {
      const loaded = await builtinsLoadedBy((await bundle(entry)).file);
      const extra = loaded.filter((name) => !baseline.includes(name));
      expect(loaded.length, entry).toBeGreaterThan(50);
      expect(
        extra.filter((name) => pattern.test(name)),
        entry,
      ).toEqual([]);
    }
  });

  it('a bundled route still answers: middy loads with the stand-in, and the SDK reaches DynamoDB Local over plain HTTP', async () => {
    const { merchant, apiKey } = await aMerchant();
    const { file } = await bundle('functions/get-balance.ts');
    const event = apiEvent({
      resource: '/balance',
      path: '/balance',
      httpMethod: 'GET',
      requestContext: {
        requestId: 'bundle-test-1',
        resourcePath: '/balance',
        identity: { sourceIp: '203.0.113.7' },
        authorizer: { principalId: merchant.merchant_id, merchantId: merchant.merchant_id, apiKey },
      } as unknown as APIGatewayProxyEvent['requestContext'],
    });
    const answer = await invoke(file, event, { ...lambdaEnv(), AWS_SESSION_TOKEN: 'session' });
    expect(answer.error).toBeUndefined();
    expect(answer.ok).toMatchObject({ statusCode: 200 });
    expect(JSON.parse(String(answer.ok?.body))).toMatchObject({
      status: 'success',
      data: { account_number: merchant.account_number },
    });
  });
});

describe('Lambda bundles sign with the execution role from the environment only', () => {
  it('leaves the SDK default chain (SSO, INI profiles, STS, metadata) out of a function bundle', async () => {
    const { inputs } = await bundle('functions/create-transfer.ts');
    expect(inputs.some((input) => input.includes('@aws-sdk/credential-provider-env/'))).toBe(true);
    for (const left of [
      'credential-provider-node',
      'credential-provider-ini',
      'credential-provider-sso',
      'nested-clients',
    ]) {
      expect(inputs.filter((input) => input.includes(`/@aws-sdk/${left}/`))).toEqual([]);
    }
  });

  it("builds only the function's own request schemas, and loads no partner where none is called", async () => {
    const balance = await bundle('functions/get-balance.ts');
    expect(balance.inputs.filter((input) => /shared\/partners\/(?:paystack|sandbox)/.test(input))).toEqual(
      [],
    );
    // Of valibot, only the parse the stack calls (under 1 KB): no schema, no check.
    expect(balance.bytesFrom('node_modules/valibot/')).toBeLessThan(1024);
    expect(balance.bytesFrom('node_modules/valibot/')).toBeGreaterThan(0);
    const transfer = await bundle('functions/create-transfer.ts');
    const code = await readFile(transfer.file, 'utf8');
    // Its own schema's message, and none of another endpoint's (list-transactions' date bound).
    expect(code).toContain('Must be 1-64 of A-Z a-z 0-9 . _ - (not . or ..)');
    expect(code).not.toContain('Must be a real ISO 8601 date');
    expect(code).toContain('Never refuses a payment');
    // valibot as far as the schemas use it: no action or schema nothing calls (the 'bic' check).
    expect(transfer.inputs.some((input) => input.includes('node_modules/valibot/'))).toBe(true);
    expect(code).not.toContain('"bic"');
  });

  it('carries the SQS client only in functions that send to a queue', async () => {
    const sqsIn = (inputs: string[]) => inputs.filter((input) => input.includes('/@aws-sdk/client-sqs/'));
    // GET /events/{id} reads an event's deliveries; fan-out queues them.
    expect(sqsIn((await bundle('functions/get-event.ts')).inputs)).toEqual([]);
    expect(sqsIn((await bundle('functions/fan-out-events.ts')).inputs)).not.toEqual([]);
  });

  it('reads DynamoDB with the credentials Lambda puts in the environment, and nothing else', async () => {
    const { merchant } = await aMerchant();
    const { file } = await bundle('test/bench/baseline-handler.ts');
    const env = {
      AWS_REGION: 'us-east-1',
      DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT ?? '',
      TABLE_PREFIX: process.env.TABLE_PREFIX ?? '',
    };
    const answer = await invoke(
      file,
      { merchantId: merchant.merchant_id },
      {
        ...env,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_SESSION_TOKEN: 'session',
      },
    );
    expect(answer.ok).toMatchObject({
      merchant_id: merchant.merchant_id,
      account_number: merchant.account_number,
    });
    // Without them there is no other source to fall back on (no profile, no metadata service).
    const without = await invoke(file, { merchantId: merchant.merchant_id }, env);
    expect(without).toMatchObject({ error: 'CredentialsProviderError' });
    expect(without.message).toBe('Unable to find environment variable credentials.');
  });

  it('verifies a key with the pepper the authorizer reads from Secrets Manager, once per container', async () => {
    const { merchant, apiKey, apiSecret } = await aMerchant();
    // A Secrets Manager stand-in (its JSON protocol, as the SDK speaks it) serving the test run's pepper.
    const requests: { target?: string; secretId?: string; signed: boolean }[] = [];
    const secretsManager = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { SecretId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SecretId?: string };
        requests.push({
          target: request.headers['x-amz-target'] as string | undefined,
          secretId: SecretId,
          signed: /^AWS4-HMAC-SHA256 Credential=local\//.test(request.headers.authorization ?? ''),
        });
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
        response.end(
          JSON.stringify({ Name: SecretId, SecretString: process.env.API_KEY_PEPPER, VersionId: 'v1' }),
        );
      });
    });
    await new Promise<void>((resolve) => secretsManager.listen(0, '127.0.0.1', resolve));
    try {
      const { file } = await bundle('functions/authorize-api-key.ts');
      const event = {
        type: 'REQUEST',
        methodArn: 'arn:aws:execute-api:us-east-1:111122223333:api/prod/GET/balance',
        headers: { 'X-API-Key': apiKey, 'X-API-Secret': apiSecret },
        multiValueHeaders: { 'X-API-Key': [apiKey], 'X-API-Secret': [apiSecret] },
        requestContext: { apiId: 'api', requestId: 'r-1', identity: { sourceIp: '203.0.113.7' } },
      };
      const { port } = secretsManager.address() as AddressInfo;
      // Two requests in one container: the second reuses the pepper.
      const result = await invokeAll(file, [event, event], {
        ...lambdaEnv(),
        AWS_SESSION_TOKEN: 'session',
        // As the stack sets it: the secret's name, no pepper in the environment.
        API_KEY_PEPPER_SECRET: 'naira/test/api-key-pepper',
        AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${port}`,
      });
      expect(result.error).toBeUndefined();
      expect(result.ok).toHaveLength(2);
      for (const answer of result.ok ?? []) {
        expect(answer).toMatchObject({ principalId: merchant.merchant_id, usageIdentifierKey: apiKey });
      }
      expect(requests).toEqual([
        { target: 'secretsmanager.GetSecretValue', secretId: 'naira/test/api-key-pepper', signed: true },
      ]);
    } finally {
      await new Promise((resolve) => secretsManager.close(resolve));
    }
  });
});
