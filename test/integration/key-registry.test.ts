import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ApiGatewayStandIn,
  STAND_IN_SECRET_KEY,
  startApiGatewayStandIn,
} from '#test/support/api-gateway-stand-in.ts';

// No AWS account here: the API Gateway calls a dashboard key route makes on AWS go to a stand-in of
// API Gateway's management API, and the test checks which plan a new key is registered in.
const savedEnv = { ...process.env };
let gateway: ApiGatewayStandIn;

/** The registry module as a Lambda of the stage loads it: its environment read at import. */
async function registryWith(env: Record<string, string | undefined>) {
  vi.resetModules();
  Object.assign(process.env, env);
  return import('#shared/api-keys/registry.ts');
}

beforeAll(async () => {
  gateway = await startApiGatewayStandIn([
    { id: 'other1', name: 'naira-dev-per-key' },
    { id: 'plan42', name: 'naira-prod-per-key' },
  ]);
});
beforeEach(() => {
  process.env = {
    ...savedEnv,
    AWS_ENDPOINT_URL_API_GATEWAY: gateway.url,
    AWS_ACCESS_KEY_ID: 'AKIDLAMBDA',
    AWS_SECRET_ACCESS_KEY: STAND_IN_SECRET_KEY,
  };
  delete process.env.USAGE_PLAN_ID;
  delete process.env.USAGE_PLAN_NAME;
  gateway.requests.length = 0;
  gateway.keys.length = 0;
});
afterAll(async () => {
  process.env = savedEnv;
  await gateway.close();
});

describe("the dashboard's key registry", () => {
  it("finds the stage's usage plan by name once, and registers each new key in it", async () => {
    const { keyRegistry } = await registryWith({
      USAGE_PLAN_NAME: 'naira-prod-per-key',
      AWS_REGION: 'eu-west-1',
    });
    const registry = await keyRegistry();
    await registry?.register('pk_1', 'mer_1');
    await (await keyRegistry())?.register('pk_2', 'mer_1');
    expect(gateway.requests.filter((request) => request.path === '/usageplans')).toHaveLength(1);
    expect(gateway.planKeys.get('plan42')).toEqual(gateway.keys.map((key) => key.id));
    expect(gateway.keys.map((key) => [key.name, key.description])).toEqual([
      ['pk_1', 'merchant mer_1'],
      ['pk_2', 'merchant mer_1'],
    ]);
    expect(
      gateway.requests.every((request) => request.region === 'eu-west-1' && request.signatureValid),
    ).toBe(true);
  });

  it('fails clearly (and tries again next time) when no plan has the name', async () => {
    const { keyRegistry } = await registryWith({
      USAGE_PLAN_NAME: 'naira-staging-per-key',
      AWS_REGION: 'eu-west-1',
    });
    await expect(keyRegistry()).rejects.toThrow('no usage plan named naira-staging-per-key');
    await expect(keyRegistry()).rejects.toThrow();
    expect(gateway.requests.filter((request) => request.path === '/usageplans')).toHaveLength(2);
  });

  it('uses USAGE_PLAN_ID as given, without looking the plan up', async () => {
    const { keyRegistry } = await registryWith({ USAGE_PLAN_ID: 'other1', AWS_REGION: 'eu-west-1' });
    await (await keyRegistry())?.register('pk_3', 'mer_2');
    expect(gateway.requests.map((request) => [request.method, request.path])).toEqual([
      ['POST', '/apikeys'],
      ['POST', '/usageplans/other1/keys'],
    ]);
  });

  it('registers a key once when AWS made it but the answer was lost (the retry is told ConflictException)', async () => {
    const { keyRegistry } = await registryWith({ USAGE_PLAN_ID: 'plan42', AWS_REGION: 'eu-west-1' });
    gateway.planKeys.set('plan42', []);
    gateway.loseNextAnswers(503);
    await (await keyRegistry())?.register('pk_lost', 'mer_3');
    expect(gateway.keys.map((key) => key.name)).toEqual(['pk_lost']);
    expect(gateway.planKeys.get('plan42')).toEqual([gateway.keys[0]?.id]);
    expect(gateway.requests.map((request) => [request.method, request.path])).toEqual([
      ['POST', '/apikeys'],
      ['POST', '/apikeys'],
      ['GET', '/apikeys'],
      ['POST', '/usageplans/plan42/keys'],
    ]);
  });

  it('takes a key already in the plan as registered when the answer to adding it was lost', async () => {
    const { keyRegistry } = await registryWith({ USAGE_PLAN_ID: 'plan42', AWS_REGION: 'eu-west-1' });
    gateway.planKeys.set('plan42', []);
    gateway.loseNextAnswers(null, 503);
    await (await keyRegistry())?.register('pk_added', 'mer_3');
    expect(gateway.planKeys.get('plan42')).toEqual([gateway.keys[0]?.id]);
    expect(gateway.requests.map((request) => [request.method, request.path])).toEqual([
      ['POST', '/apikeys'],
      ['POST', '/usageplans/plan42/keys'],
      ['POST', '/usageplans/plan42/keys'],
    ]);
  });

  it('deletes the key it made when adding it to the plan fails: nothing left in the quota', async () => {
    // A plan the stand-in does not know: the key is made, adding it to the plan is 404.
    const { keyRegistry } = await registryWith({ USAGE_PLAN_ID: 'gone', AWS_REGION: 'eu-west-1' });
    await expect((await keyRegistry())?.register('pk_half', 'mer_3')).rejects.toMatchObject({
      name: 'NotFoundException',
    });
    expect(gateway.keys.map((key) => key.name)).not.toContain('pk_half');
    expect(gateway.requests.map((request) => request.method)).toEqual(['POST', 'POST', 'DELETE']);
  });

  it('still fails on a conflict that is not its own (a key of that value made elsewhere, not found by its name)', async () => {
    const { keyRegistry } = await registryWith({ USAGE_PLAN_ID: 'plan42', AWS_REGION: 'eu-west-1' });
    gateway.keys.push({ id: 'other', name: 'someone-else', value: 'pk_taken', enabled: true });
    await expect((await keyRegistry())?.register('pk_taken', 'mer_3')).rejects.toMatchObject({
      name: 'ConflictException',
    });
  });

  it('registers nowhere locally (no plan configured)', async () => {
    const { keyRegistry } = await registryWith({});
    expect(await keyRegistry()).toBeUndefined();
    expect(gateway.requests).toHaveLength(0);
  });
});
