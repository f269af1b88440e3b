import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

// No AWS account here: the API Gateway calls a dashboard key route makes on AWS are mocked, and the
// test checks which plan a new key is registered in.
const gateway = mockClient(APIGatewayClient);
const savedEnv = { ...process.env };

/** The registry module as a Lambda of the stage loads it: its environment read at import. */
async function registryWith(env: Record<string, string | undefined>) {
  vi.resetModules();
  Object.assign(process.env, env);
  return import('#shared/api-keys/registry.ts');
}

beforeEach(() => {
  gateway.reset();
  process.env = { ...savedEnv };
  delete process.env.USAGE_PLAN_ID;
  delete process.env.USAGE_PLAN_NAME;
});
afterAll(() => {
  process.env = savedEnv;
  gateway.restore();
});

describe("the dashboard's key registry", () => {
  it("finds the stage's usage plan by name once, and registers each new key in it", async () => {
    gateway.on(GetUsagePlansCommand).resolves({
      items: [
        { id: 'other1', name: 'naira-dev-per-key' },
        { id: 'plan42', name: 'naira-prod-per-key' },
      ],
    });
    gateway.on(CreateApiKeyCommand).resolves({ id: 'key-id-1' });
    gateway.on(CreateUsagePlanKeyCommand).resolves({});
    const { keyRegistry } = await registryWith({
      USAGE_PLAN_NAME: 'naira-prod-per-key',
      AWS_REGION: 'eu-west-1',
    });
    const registry = await keyRegistry();
    await registry?.register('pk_1', 'mer_1');
    await (await keyRegistry())?.register('pk_2', 'mer_1');
    expect(gateway.commandCalls(GetUsagePlansCommand)).toHaveLength(1);
    const planKeys = gateway.commandCalls(CreateUsagePlanKeyCommand).map((call) => call.args[0].input);
    expect(planKeys).toEqual([
      { usagePlanId: 'plan42', keyId: 'key-id-1', keyType: 'API_KEY' },
      { usagePlanId: 'plan42', keyId: 'key-id-1', keyType: 'API_KEY' },
    ]);
  });

  it('fails clearly (and tries again next time) when no plan has the name', async () => {
    gateway.on(GetUsagePlansCommand).resolves({ items: [{ id: 'x', name: 'someone-else' }] });
    const { keyRegistry } = await registryWith({
      USAGE_PLAN_NAME: 'naira-prod-per-key',
      AWS_REGION: 'eu-west-1',
    });
    await expect(keyRegistry()).rejects.toThrow('no usage plan named naira-prod-per-key');
    await expect(keyRegistry()).rejects.toThrow();
    expect(gateway.commandCalls(GetUsagePlansCommand)).toHaveLength(2);
  });

  it('registers nowhere locally (no plan configured)', async () => {
    const { keyRegistry } = await registryWith({});
    expect(await keyRegistry()).toBeUndefined();
    expect(gateway.calls()).toHaveLength(0);
  });
});
