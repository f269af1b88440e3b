import { randomUUID } from 'node:crypto';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler } from '#functions/authorize-api-key.ts';
import { handler as getBalance } from '#functions/get-balance.ts';
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

describe('a handler behind the authorizer', () => {
  it('answers 401 without an authorizer context, whatever credentials the headers carry', async () => {
    const { apiKey, apiSecret } = await aMerchant();
    const response = await getBalance(
      {
        httpMethod: 'GET',
        path: '/balance',
        headers: { 'X-API-Key': apiKey, 'X-API-Secret': apiSecret },
        body: null,
        requestContext: { requestId: randomUUID() },
      } as never,
      {} as never,
    );
    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body)).toStrictEqual({ status: 'error', message: 'Invalid API credentials' });
  });
});
