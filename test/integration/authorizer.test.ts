import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler } from '#functions/authorize-api-key.ts';
import { handler as getBalance } from '#functions/get-balance.ts';
import { handler as listApiKeys } from '#functions/list-api-keys.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { aMerchant } from '#test/support/merchants.ts';

/**
 * The REQUEST authorizer as API Gateway invokes it on AWS (API.md §2, §11), against DynamoDB Local:
 * the verdict, the usage plan's key, the context the handlers read, and the per-IP failure limit.
 */
const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/balance';

function authorizerEvent(
  headers: Record<string, string[]>,
  options: { sourceIp?: string; apiId?: string } = {},
): APIGatewayRequestAuthorizerEvent {
  const single = Object.fromEntries(
    Object.entries(headers).map(([name, values]) => [name, values.at(-1) ?? '']),
  );
  return {
    type: 'REQUEST',
    methodArn: METHOD_ARN,
    resource: '/balance',
    path: '/balance',
    httpMethod: 'GET',
    headers: single,
    multiValueHeaders: headers,
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {
      apiId: options.apiId ?? `api-${randomUUID()}`,
      identity: { sourceIp: options.sourceIp ?? '198.51.100.7' },
      requestId: randomUUID(),
    } as APIGatewayRequestAuthorizerEvent['requestContext'],
  };
}

describe('the API key authorizer', () => {
  it('allows valid credentials for the whole stage, hands the usage plan the key and the handler the merchant', async () => {
    const { merchant, apiKey, apiSecret } = await aMerchant();
    const result = await handler(authorizerEvent({ 'X-API-Key': [apiKey], 'X-API-Secret': [apiSecret] }));
    expect(result.principalId).toBe(merchant.merchant_id);
    expect(result.usageIdentifierKey).toBe(apiKey);
    expect(result.context).toEqual({ merchantId: merchant.merchant_id, apiKey });
    // The verdict is cached per key, secret and IP and reused on other routes: it covers the stage.
    expect(result.policyDocument.Statement).toEqual([
      {
        Action: 'execute-api:Invoke',
        Effect: 'Allow',
        Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*/*',
      },
    ]);

    // What API Gateway then hands the handler: the merchant in requestContext.authorizer, no secret check.
    const response = await getBalance(
      {
        httpMethod: 'GET',
        path: '/balance',
        headers: { 'X-API-Key': apiKey },
        multiValueHeaders: { 'X-API-Key': [apiKey] },
        body: null,
        requestContext: {
          requestId: randomUUID(),
          authorizer: { principalId: merchant.merchant_id, ...result.context },
        },
      } as never,
      {} as never,
    );
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).data.account_number).toBe(merchant.account_number);
  });

  it('throws Unauthorized (the 401) for a wrong secret, an unknown key or missing headers', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    const apiId = `api-${randomUUID()}`;
    for (const headers of <Record<string, string[]>[]>[
      { 'X-API-Key': [apiKey], 'X-API-Secret': [`${apiSecret}x`] },
      { 'X-API-Key': [`pk_${'0'.repeat(32)}`], 'X-API-Secret': [apiSecret] },
      { 'X-API-Key': [apiKey] },
      {},
    ]) {
      await expect(handler(authorizerEvent(headers, { apiId }))).rejects.toThrow(/^Unauthorized$/);
    }
  });

  it('refuses a credential header sent twice, whichever copy is right', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    for (const headers of <Record<string, string[]>[]>[
      { 'X-API-Key': ['junk', apiKey], 'X-API-Secret': [apiSecret] },
      { 'X-API-Key': [apiKey, apiKey], 'X-API-Secret': [apiSecret] },
      { 'X-API-Key': [apiKey], 'x-api-key': [apiKey], 'X-API-Secret': [apiSecret] },
      { 'X-API-Key': [apiKey], 'X-API-Secret': ['junk', apiSecret] },
    ]) {
      await expect(handler(authorizerEvent(headers))).rejects.toThrow(/^Unauthorized$/);
    }
  });

  it('reads headers called constructor or __proto__ as any other header', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    const headers = JSON.parse(
      JSON.stringify({ constructor: ['x'], 'X-API-Key': [apiKey], 'X-API-Secret': [apiSecret] }).replace(
        '{',
        '{"__proto__":["y"],',
      ),
    ) as Record<string, string[]>;
    const result = await handler(authorizerEvent(headers));
    expect(result.policyDocument.Statement[0]?.Effect).toBe('Allow');
  });

  it('denies (the 429) an IP past 100 failed attempts in 60 seconds, yet allows valid credentials from it', async () => {
    const victim = await aMerchant();
    const attacker = { apiId: `api-${randomUUID()}`, sourceIp: '203.0.113.66' };
    const wrong = authorizerEvent({ 'X-API-Key': [victim.apiKey], 'X-API-Secret': ['wrong'] }, attacker);
    for (let i = 0; i < 100; i++) await expect(handler(wrong)).rejects.toThrow(/^Unauthorized$/);
    const denied = await handler(wrong);
    expect(denied.policyDocument.Statement[0]?.Effect).toBe('Deny');
    expect(denied.usageIdentifierKey).toBeUndefined();
    expect(Number(denied.context?.retryAfterSeconds)).toBeGreaterThanOrEqual(1);
    expect(Number(denied.context?.retryAfterSeconds)).toBeLessThanOrEqual(60);

    const valid = authorizerEvent(
      { 'X-API-Key': [victim.apiKey], 'X-API-Secret': [victim.apiSecret] },
      attacker,
    );
    expect((await handler(valid)).policyDocument.Statement[0]?.Effect).toBe('Allow');
    // Another IP, and the same IP on another API, are unaffected.
    await expect(
      handler(authorizerEvent({ 'X-API-Key': [victim.apiKey] }, { ...attacker, sourceIp: '203.0.113.67' })),
    ).rejects.toThrow(/^Unauthorized$/);
    await expect(
      handler(authorizerEvent({ 'X-API-Key': [victim.apiKey] }, { ...attacker, apiId: 'other' })),
    ).rejects.toThrow(/^Unauthorized$/);
  });
});

/** The event API Gateway hands a function behind an authorizer: its context as the authorizer set it. */
function routedEvent(
  resource: string,
  authorizer: Record<string, unknown> | undefined,
  multiValueHeaders: Record<string, string[]> = {},
): APIGatewayProxyEvent {
  return apiEvent({
    httpMethod: 'GET',
    resource,
    path: resource,
    headers: Object.fromEntries(
      Object.entries(multiValueHeaders).map(([name, values]) => [name, values.at(-1) ?? '']),
    ),
    multiValueHeaders,
    requestContext: { requestId: randomUUID(), authorizer } as APIGatewayProxyEvent['requestContext'],
  });
}

const refusedAs401 = (response: { statusCode: number; body: string }, what: string) => {
  expect(response.statusCode, what).toBe(401);
  expect(JSON.parse(response.body), what).toStrictEqual({
    status: 'error',
    message: 'Invalid API credentials',
  });
};

describe('a handler behind the authorizer', () => {
  it('answers 401 without an authorizer context, whatever credentials the headers carry', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    const headers = { 'X-API-Key': [apiKey], 'X-API-Secret': [apiSecret] };
    refusedAs401(await getBalance(routedEvent('/balance', undefined, headers), lambdaContext), 'no context');
  });

  // On AWS the verdict is cached per identity source values, so the handler, not only the
  // authorizer, refuses a repeated credential header (API.md §11); locally the authorizer runs on
  // every request and refuses first, so only a direct call reaches this check.
  it('answers 401 to a credential header sent twice, even with a verified context', async () => {
    const { merchant, apiKey, apiSecret } = await aMerchant();
    const verified = { principalId: merchant.merchant_id, merchantId: merchant.merchant_id, apiKey };
    const balance = (headers: Record<string, string[]>) =>
      getBalance(routedEvent('/balance', verified, headers), lambdaContext);
    expect((await balance({ 'X-API-Key': [apiKey], 'X-API-Secret': [apiSecret] })).statusCode).toBe(200);
    for (const headers of [
      { 'X-API-Key': ['junk', apiKey], 'X-API-Secret': [apiSecret] },
      { 'X-API-Key': [apiKey], 'X-API-Secret': ['junk', apiSecret] },
    ]) {
      refusedAs401(await balance(headers), JSON.stringify(headers));
    }
    // A context naming the merchant but no key is no verified caller either.
    const keyless = routedEvent('/balance', { merchantId: merchant.merchant_id });
    refusedAs401(await getBalance(keyless, lambdaContext), 'no key in the context');
  });
});

describe('a dashboard handler behind the Cognito authorizer', () => {
  // What API Gateway's Cognito authorizer hands a handler: the token's claims, as strings. It
  // verifies signature and expiry only: whose merchant, and that it is an ID token, is the handler's.
  const keysWith = (claims: Record<string, string>) =>
    listApiKeys(routedEvent('/api/v1/dashboard/keys', { claims }), lambdaContext);

  it("answers the claim's merchant, and 401 to claims without a merchant or sub, or of an access token", async () => {
    const { merchant, apiKey } = await aMerchant();
    const id = { sub: randomUUID(), 'custom:merchant_id': merchant.merchant_id, token_use: 'id' };
    const ok = await keysWith(id);
    expect(ok.statusCode).toBe(200);
    expect(JSON.parse(ok.body).data.map((key: { api_key: string }) => key.api_key)).toEqual([apiKey]);
    for (const claims of <Record<string, string>[]>[
      { sub: id.sub, token_use: 'id' },
      { 'custom:merchant_id': merchant.merchant_id, token_use: 'id' },
      { ...id, 'custom:merchant_id': '' },
      { ...id, token_use: 'access' },
    ]) {
      refusedAs401(await keysWith(claims), JSON.stringify(claims));
    }
  });
});
