import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLING } from '#infra/bundling.ts';
import { esbuildOptions } from '#infra/esbuild-options.ts';
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
  const inputs = Object.entries(output?.inputs ?? {})
    .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
    .map(([input]) => input);
  return { file, inputs };
}

/** Calls the bundle's handler in a fresh `node`, with only `env` in its environment. */
async function invoke(file: string, event: unknown, env: Record<string, string>) {
  const program = [
    `const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)});`,
    `try { process.stdout.write(JSON.stringify({ ok: await handler(${JSON.stringify(event)}) })); }`,
    'catch (error) { process.stdout.write(JSON.stringify({ error: error.name, message: error.message })); }',
  ].join(' ');
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program], {
    env: { PATH: process.env.PATH ?? '', NODE_NO_WARNINGS: '1', HOME: path.join(root, 'no-home'), ...env },
  });
  return JSON.parse(stdout) as { ok?: Record<string, unknown>; error?: string; message?: string };
}

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
    expect(
      balance.inputs.filter((input) =>
        /node_modules\/zod\/|shared\/partners\/(?:paystack|sandbox)/.test(input),
      ),
    ).toEqual([]);
    const transfer = await bundle('functions/create-transfer.ts');
    const code = await readFile(transfer.file, 'utf8');
    // Its own schema's message, and none of another endpoint's (list-transactions' date bound).
    expect(code).toContain('Must be 1-64 of A-Z a-z 0-9 . _ -');
    expect(code).not.toContain('Must be a real ISO 8601 date');
    // The sandbox payloads' lenient fields keep only the zod helpers they use: z.catch would keep
    // all of zod's util namespace, this constant among it.
    expect(code).toContain('Never refuses a payment');
    expect(code.includes('~constantCatch'), 'zod util namespace in the bundle').toBe(false);
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
});
