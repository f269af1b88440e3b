import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatewayKeys } from '#shared/api-keys/usage-plan.ts';
import { apiGateway } from '#shared/aws/api-gateway.ts';
import { AwsServiceError } from '#shared/aws/service.ts';
import {
  type ApiGatewayStandIn,
  type RecordedGatewayRequest,
  STAND_IN_SECRET_KEY,
  startApiGatewayStandIn,
} from '#test/support/api-gateway-stand-in.ts';

// The key routes call API Gateway with the SDK's signer and HTTP handler instead of its 60 KB
// client (shared/aws/api-gateway.ts). The SDK client is the reference: each call must reach the
// API as the same request (method, path, query, JSON body, media types, SigV4 scope), and each
// answer must be read the same way.
const credentials = async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: STAND_IN_SECRET_KEY });
const PLANS = [
  { id: 'plan1', name: 'naira-dev-per-key' },
  { id: 'plan2', name: 'naira-prod-per-key' },
  { id: 'plan3', name: 'someone-else' },
];

let standIn: ApiGatewayStandIn;
beforeEach(async () => {
  standIn = await startApiGatewayStandIn(PLANS, { pageSize: 2 });
});
afterEach(() => standIn.close());

function sdk() {
  return new APIGatewayClient({ region: 'eu-west-2', endpoint: standIn.url, credentials, maxAttempts: 1 });
}
function ours() {
  return apiGateway({ region: 'eu-west-2', endpoint: standIn.url, credentials });
}

/** What of a request the API reads: everything but the signature's date, signature and the SDK's telemetry headers. */
function asSent(request: RecordedGatewayRequest) {
  return {
    method: request.method,
    path: request.path,
    query: request.query,
    body: request.body,
    contentType: request.headers['content-type'],
    accept: request.headers.accept,
    scope: [request.accessKeyId, request.region, request.service],
    signatureValid: request.signatureValid,
  };
}

/** The requests made by `run`, by number. */
async function sent(run: () => Promise<unknown>) {
  const before = standIn.requests.length;
  await run();
  return standIn.requests.slice(before).map(asSent);
}

describe('API Gateway calls without the SDK client', () => {
  it('sends each of the five calls as the SDK client does', async () => {
    const reference = sdk();
    const client = ours();

    const plansSdk = await sent(async () => {
      let position: string | undefined;
      do {
        const page = await reference.send(new GetUsagePlansCommand({ limit: 500, position }));
        position = page.position;
      } while (position);
    });
    const plansOurs = await sent(() => client.getUsagePlans());
    expect(plansOurs).toEqual(plansSdk);
    expect(plansOurs).toHaveLength(2); // three plans, two per page

    const key = { name: 'pk_a', value: 'pk_a', enabled: true, description: 'merchant mer_1' };
    const createSdk = await sent(() => reference.send(new CreateApiKeyCommand({ ...key })));
    const createOurs = await sent(() => client.createApiKey({ ...key, name: 'pk_b', value: 'pk_b' }));
    expect(createOurs).toEqual(
      createSdk.map((request) => ({ ...request, body: { ...key, name: 'pk_b', value: 'pk_b' } })),
    );

    const [first, second] = standIn.keys;
    const planKeySdk = await sent(() =>
      reference.send(
        new CreateUsagePlanKeyCommand({ usagePlanId: 'plan2', keyId: first?.id, keyType: 'API_KEY' }),
      ),
    );
    const planKeyOurs = await sent(() => client.createUsagePlanKey('plan2', second?.id ?? ''));
    expect(planKeyOurs).toEqual(
      planKeySdk.map((request) => ({ ...request, body: { keyId: second?.id, keyType: 'API_KEY' } })),
    );
    expect(standIn.planKeys.get('plan2')).toEqual([first?.id, second?.id]);

    const findSdk = await sent(() =>
      reference.send(new GetApiKeysCommand({ nameQuery: 'pk_a', includeValues: false })),
    );
    expect(await sent(() => client.getApiKeys('pk_a'))).toEqual(findSdk);

    const deleteSdk = await sent(() => reference.send(new DeleteApiKeyCommand({ apiKey: first?.id })));
    expect(await sent(() => client.deleteApiKey(second?.id ?? ''))).toEqual(
      deleteSdk.map((request) => ({ ...request, path: `/apikeys/${second?.id}` })),
    );
    expect(standIn.keys).toEqual([]);
    expect(standIn.planKeys.get('plan2')).toEqual([]);
    expect(standIn.requests.every((request) => request.service === 'apigateway')).toBe(true);
    expect(standIn.requests.every((request) => request.signatureValid)).toBe(true);
  });

  it('reads every answer as the SDK client does', async () => {
    const reference = sdk();
    const client = ours();
    const plans = await client.getUsagePlans();
    expect(plans.map(({ id, name }) => ({ id, name }))).toEqual(PLANS);

    const created = await client.createApiKey({
      name: 'pk_c',
      value: 'pk_c',
      enabled: true,
      description: 'd',
    });
    expect(created.id).toBe(standIn.keys[0]?.id);
    await client.createApiKey({ name: 'pk_cc', value: 'pk_cc', enabled: true, description: 'd' });
    await client.createApiKey({ name: 'pk_ccc', value: 'pk_ccc', enabled: true, description: 'd' });
    const found = await client.getApiKeys('pk_c');
    const { items } = await reference.send(
      new GetApiKeysCommand({ nameQuery: 'pk_c', includeValues: false }),
    );
    // The SDK reads one page (two here); ours reads every page.
    expect(found.slice(0, 2).map(({ id, name }) => ({ id, name }))).toEqual(
      items?.map(({ id, name }) => ({ id, name })),
    );
    expect(found.map((key) => key.name)).toEqual(['pk_c', 'pk_cc', 'pk_ccc']);
  });

  it('retries throttling and server errors as the SDK does, and fails at once on a refusal', async () => {
    const client = ours();
    standIn.failNext(429, 503);
    expect((await client.getUsagePlans()).length).toBe(3);
    expect(standIn.requests.length).toBe(4); // 429, 503, then the two pages

    standIn.failNext(500, 500, 500);
    const failed = standIn.requests.length;
    await expect(client.createUsagePlanKey('plan1', 'k')).rejects.toMatchObject({ status: 500 });
    expect(standIn.requests.length - failed).toBe(3);

    const refused = standIn.requests.length;
    const error = await client.createUsagePlanKey('no-such-plan', 'k').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AwsServiceError);
    expect(error).toMatchObject({ status: 404, type: 'NotFoundException' });
    expect((error as Error).message).toBe('Invalid Usage Plan ID specified');
    expect((error as Error).name).toBe('NotFoundException');
    expect(standIn.requests.length - refused).toBe(1);
  });

  it("retries a 502 whose body is a proxy's HTML page, not JSON", async () => {
    let answered = 0;
    const proxy = createServer((_request, response) => {
      answered += 1;
      if (answered === 1)
        response.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{"item":[{"id":"p1"}]}');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = proxy.address() as AddressInfo;
      const client = apiGateway({ region: 'eu-west-2', endpoint: `http://127.0.0.1:${port}`, credentials });
      expect(await client.getUsagePlans()).toEqual([{ id: 'p1' }]);
      expect(answered).toBe(2);
    } finally {
      proxy.close();
    }
  });

  it('fails at once without credentials, and retries a refused connection', async () => {
    const noCredentials = apiGateway({
      region: 'eu-west-2',
      endpoint: standIn.url,
      credentials: async () => {
        throw Object.assign(new Error('Could not load credentials'), { name: 'CredentialsProviderError' });
      },
    });
    await expect(noCredentials.getUsagePlans()).rejects.toThrow('Could not load credentials');
    expect(standIn.requests).toHaveLength(0);

    const attempts: number[] = [];
    const closed = apiGateway({
      region: 'eu-west-2',
      endpoint: 'http://127.0.0.1:9', // nothing listens on the discard port
      credentials: async () => {
        attempts.push(Date.now());
        return credentials();
      },
    });
    await expect(closed.getUsagePlans()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // Found once before the call's clock starts, then once per signed attempt: three attempts.
    expect(attempts).toHaveLength(1 + 3);
  });

  it('registers a key in the plan and deletes it by name (the key lifecycle over these calls)', async () => {
    const registry = gatewayKeys('plan2', ours());
    await registry.register('pk_live_1', 'mer_1');
    await registry.register('pk_live_10', 'mer_1');
    const [one, ten] = standIn.keys;
    expect(standIn.planKeys.get('plan2')).toEqual([one?.id, ten?.id]);
    expect(one).toMatchObject({
      name: 'pk_live_1',
      value: 'pk_live_1',
      enabled: true,
      description: 'merchant mer_1',
    });
    // GetApiKeys matches a prefix: deleting pk_live_1 must leave pk_live_10 alone.
    await registry.remove('pk_live_1');
    expect(standIn.keys.map((key) => key.name)).toEqual(['pk_live_10']);
    expect(standIn.planKeys.get('plan2')).toEqual([ten?.id]);
    // Removed already (a retry after a lost answer): nothing left to do, no error.
    await registry.remove('pk_live_1');
    expect(standIn.keys.map((key) => key.name)).toEqual(['pk_live_10']);
    // Deleted by someone else between the lookup and the delete (404): removed, no error.
    standIn.loseNextAnswers(null, 404);
    await registry.remove('pk_live_10');
    expect(standIn.keys).toEqual([]);
  });
});
