import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/** Builds an API Gateway REST proxy event; every field can be overridden. */
export function apiEvent(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    resource: '/echo',
    path: '/echo',
    httpMethod: 'POST',
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      requestId: 'req-test-1',
      identity: { sourceIp: '203.0.113.10' },
    } as APIGatewayProxyEvent['requestContext'],
    ...overrides,
  };
}

/** A JSON POST event. */
export function jsonEvent(body: unknown, headers: Record<string, string> = {}): APIGatewayProxyEvent {
  return apiEvent({
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const lambdaContext = { awsRequestId: 'ctx-1', getRemainingTimeInMillis: () => 10_000 } as Context;
