import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { QueuedEvent } from '#shared/partners/partner.ts';
import { createSandboxPartner } from '#shared/partners/sandbox.ts';

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

/**
 * The domain event the sandbox adapter makes of a sandbox webhook payload, as the webhook queues
 * it: how tests feed the consumer exactly what the queue would carry.
 */
export function queuedFromSandbox(
  payload: { type: string; data: Record<string, unknown> },
  deliveryId = `msg_${randomUUID()}`,
): QueuedEvent {
  const { events } = sandbox.eventsOf({
    headers: { 'webhook-id': deliveryId },
    rawBody: JSON.stringify(payload),
    sourceIp: undefined,
  });
  const [event] = events;
  if (!event || events.length !== 1) throw new Error(`not one sandbox event: ${JSON.stringify(payload)}`);
  return { ...event, delivery_id: deliveryId, received_at: new Date().toISOString() };
}

/** The sandbox adapter, for its translation of payloads only (it calls nothing). */
const sandbox = createSandboxPartner({
  baseUrl: 'http://127.0.0.1:9',
  timeoutMs: 1,
  webhookKeys: async () => [],
});
