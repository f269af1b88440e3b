import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler } from '#functions/refuse-method.ts';
import { allowedMethods, ROUTES, servedPaths } from '#shared/definitions/routes.ts';

/** The event API Gateway's `ANY` method hands the function: the resource, any method, any body. */
function anyMethodEvent(resource: string, method: string, contentType: string, body: string | null) {
  return {
    resource,
    path: resource.replace(/\{\w+\}/g, 'x'),
    httpMethod: method,
    headers: { 'Content-Type': contentType },
    multiValueHeaders: { 'Content-Type': [contentType] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: { requestId: 'req-405', resourcePath: resource, httpMethod: method },
  } as unknown as APIGatewayProxyEvent;
}

describe('refuse-method (ANY on every served path, on AWS)', () => {
  it.each([
    ['PUT', '/api/v1/developer/transactions/{reference}', 'text/xml', '<transfer/>', 'GET'],
    ['PATCH', '/beneficiaries', 'application/x-www-form-urlencoded', 'a=1', 'GET, POST'],
    ['GET', '/webhook-endpoints/{id}', 'application/octet-stream', '\u0000\u0001', 'DELETE'],
    ['DELETE', '/webhooks/payments', 'image/png', null, 'POST'],
    ['POST', '/balance', 'application/json', '{"a":1}', 'GET'],
  ])('%s %s with %s is 405 with Allow: %s', async (method, resource, contentType, body, allow) => {
    const result = await handler(anyMethodEvent(resource, method, contentType, body));
    expect(result.statusCode).toBe(405);
    expect(result.headers).toMatchObject({ Allow: allow, 'X-Request-Id': 'req-405' });
    expect(JSON.parse(result.body)).toEqual({
      status: 'error',
      message: 'Method not allowed',
      code: 'method_not_allowed',
    });
  });

  it('allows at each served path exactly the methods the route table serves there', () => {
    for (const route of ROUTES) {
      for (const resource of servedPaths(route)) {
        const expected = ROUTES.filter((r) => servedPaths(r).includes(resource)).map((r) => r.method);
        expect(allowedMethods(resource), resource).toEqual([...new Set(expected)].sort());
        expect(allowedMethods(resource)).toContain(route.method);
      }
    }
  });
});
