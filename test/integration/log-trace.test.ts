import { randomUUID } from 'node:crypto';
import type { SendMessageCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as consume } from '#functions/process-payment-events.ts';
import { handler as receiveWebhook } from '#functions/receive-partner-webhook.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { sign } from '#shared/crypto/standard-webhooks.ts';
import { logger } from '#shared/logger.ts';
import { apiEvent, jsonEvent, lambdaContext } from '#test/support/events.ts';
import { aMerchant, aPendingTransfer, fund } from '#test/support/merchants.ts';
import { nipSessionId, paymentEvent } from '#test/support/payments.ts';

type Line = Record<string, unknown>;

/** Standard Webhooks headers for `body`, signed with the test run's partner secret. */
function signedHeaders(id: string, body: string): Record<string, string> {
  const key = Buffer.from((process.env.PARTNER_WEBHOOK_SECRET ?? '').replace(/^whsec_/, ''), 'base64');
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': sign(key, id, timestamp, body),
  };
}

/** Runs `work` with the logger at INFO and returns the JSON lines it wrote (stdout and stderr). */
async function logsOf(work: () => Promise<unknown>): Promise<Line[]> {
  const level = logger.getLevelName();
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write);
  let written = '';
  for (const stream of streams) {
    stream.write = ((chunk: unknown) => {
      written += String(chunk);
      return true;
    }) as typeof stream.write;
  }
  logger.setLogLevel('INFO');
  try {
    await work();
  } finally {
    logger.setLogLevel(level);
    streams.forEach((stream, i) => {
      stream.write = writes[i] as typeof stream.write;
    });
  }
  return written
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

/** The message bodies the shared SQS client sends while `work` runs (they are sent as usual). */
async function sentDuring(client: SQSClient, work: () => Promise<unknown>): Promise<string[]> {
  const bodies: string[] = [];
  const name = `capture-${randomUUID()}`;
  client.middlewareStack.add(
    (next) => async (args) => {
      const body = (args.input as SendMessageCommandInput).MessageBody;
      if (body !== undefined) bodies.push(body);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await work();
  } finally {
    client.middlewareStack.remove(name);
  }
  return bodies;
}

describe('log lines of a payment, end to end', () => {
  it("carry the webhook request's X-Request-Id from the webhook's lines to the consumer's credit, with the delivery, payment and ledger entry ids", async () => {
    const { merchant } = await aMerchant();
    const sessionId = nipSessionId();
    const payload = JSON.stringify(
      paymentEvent({ account_number: merchant.account_number, amount: 4_321, session_id: sessionId }),
    );
    const deliveryId = `msg_${randomUUID()}`;
    const requestId = `req-trace-${randomUUID()}`;
    const event = jsonEvent(payload, signedHeaders(deliveryId, payload));
    event.requestContext.requestId = requestId;

    let bodies: string[] = [];
    const webhookLines = await logsOf(async () => {
      bodies = await sentDuring(sqs, async () => {
        const answer = await receiveWebhook(event, lambdaContext);
        expect(answer.statusCode).toBe(200);
        expect(answer.headers?.['X-Request-Id']).toBe(requestId);
      });
    });
    // The queued message carries the request id, beside the delivery it came with.
    expect(bodies).toHaveLength(1);
    const queued = JSON.parse(bodies[0] as string) as Record<string, unknown>;
    expect(queued).toMatchObject({ webhook_request_id: requestId, delivery_id: deliveryId });
    expect(webhookLines).toContainEqual(
      expect.objectContaining({ message: 'webhook queued', request_id: requestId, delivery_id: deliveryId }),
    );

    // The consumer, given that message (the run's own poller also consumes it: credited once either way).
    const batch = {
      Records: [{ messageId: `m-${randomUUID()}`, body: bodies[0] }],
    } as unknown as SQSEvent;
    const consumerLines = await logsOf(() => consume(batch, lambdaContext));
    const processed = consumerLines.find((line) => line.message === 'payment processed');
    expect(processed).toMatchObject({
      webhook_request_id: requestId,
      delivery_id: deliveryId,
      partner: 'sandbox',
      payment_id: queued.payment_id,
      entry_id: `payment:sandbox:${String(queued.payment_id)}`,
      reference: `payment:${String(queued.payment_id)}`,
    });
    expect(['credited', 'duplicate']).toContain(processed?.outcome);
  });

  it('tie a payment nobody can be credited for to its webhook request too', async () => {
    const requestId = `req-trace-${randomUUID()}`;
    const payload = JSON.stringify(
      paymentEvent({ account_number: '0000014579', amount: 777, session_id: nipSessionId() }),
    );
    const event = jsonEvent(payload, signedHeaders(`msg_${randomUUID()}`, payload));
    event.requestContext.requestId = requestId;
    const bodies = await sentDuring(sqs, () => receiveWebhook(event, lambdaContext));
    const lines = await logsOf(() =>
      consume(
        { Records: [{ messageId: 'm-unmatched', body: bodies[0] }] } as unknown as SQSEvent,
        lambdaContext,
      ),
    );
    for (const message of ['payment kept as unmatched', 'payment processed']) {
      expect(lines.find((line) => line.message === message)).toMatchObject({
        webhook_request_id: requestId,
        partner: 'sandbox',
      });
    }
    // What a merchant's "my customer paid" names, and no ledger entry that was never made.
    const processed = lines.find((line) => line.message === 'payment processed');
    expect(processed).toMatchObject({ outcome: 'unmatched', amount: 777, account_number: '0000014579' });
    expect(processed).not.toHaveProperty('entry_id');
    expect(processed).not.toHaveProperty('reference');
  });
});

describe("log lines of a partner's verdict on a transfer", () => {
  it('lead back to its webhook request and delivery, a contradiction reported to operators included', async () => {
    const { CONTRADICTED_SETTLEMENT } = await import('#shared/definitions/alerts.ts');
    const { settleTransfer } = await import('#shared/transfers/settle.ts');
    const { getTransaction } = await import('#shared/transactions/store.ts');
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `trace-${randomUUID().slice(0, 8)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    const pending = await getTransaction(merchant.merchant_id, reference);
    // Paid; then a delivery says it failed, and another delivery beside it names no transfer of ours.
    const paid = await settleTransfer(pending as NonNullable<typeof pending>, { status: 'success' });
    const verdict = (partnerReference: string, requestId: string) => ({
      messageId: `m-${randomUUID()}`,
      body: JSON.stringify({
        type: 'TransferSettled',
        partner: 'sandbox',
        reference: partnerReference,
        outcome: { status: 'failed', reason: 'Late failure' },
        delivery_id: `msg_${requestId}`,
        received_at: new Date().toISOString(),
        webhook_request_id: requestId,
      }),
    });
    const lines = await logsOf(() =>
      consume(
        {
          Records: [
            verdict(paid.partner_reference as string, 'req-contradiction'),
            verdict('unknown-ref-xyz', 'req-unknown'),
          ],
        } as unknown as SQSEvent,
        lambdaContext,
      ),
    );
    expect(lines.find((line) => line.message === CONTRADICTED_SETTLEMENT)).toMatchObject({
      reference,
      webhook_request_id: 'req-contradiction',
      delivery_id: 'msg_req-contradiction',
    });
    // Each of the batch's verdicts with its own keys, never the other's.
    expect(lines.find((line) => line.message === 'transfer verdict for an unknown reference')).toMatchObject({
      webhook_request_id: 'req-unknown',
      transfer_reference: 'unknown-ref-xyz',
    });
  });
});

describe('log lines of requests handled side by side (the local runtime runs them in one process)', () => {
  it("each carry their own request's id: none lost, none another's", async () => {
    const { handler: getBalance } = await import('#functions/get-balance.ts');
    const { merchant, apiKey } = await aMerchant();
    const requestIds = Array.from({ length: 8 }, () => randomUUID());
    const lines = await logsOf(() =>
      Promise.all(
        requestIds.map((requestId) =>
          getBalance(
            apiEvent({
              resource: '/balance',
              path: '/balance',
              httpMethod: 'GET',
              requestContext: {
                requestId,
                identity: { sourceIp: '203.0.113.10' },
                resourcePath: '/balance',
                authorizer: {
                  principalId: merchant.merchant_id,
                  merchantId: merchant.merchant_id,
                  apiKey,
                },
              } as unknown as APIGatewayProxyEvent['requestContext'],
            }),
            lambdaContext,
          ),
        ),
      ),
    );
    const completed = lines.filter((line) => line.message === 'request completed');
    expect(completed.map((line) => line.request_id).sort()).toEqual([...requestIds].sort());
    expect(completed.every((line) => line.merchant_id === merchant.merchant_id)).toBe(true);
  });
});
