import { ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { handler } from '#functions/process-payment-events.ts';
import { startPoller } from '#infra/local/poller.ts';
import { dynamo } from '#shared/aws/clients.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { config } from '#shared/config.ts';
import { auditMerchant } from '#shared/ledger/audit.ts';
import { logger } from '#shared/logger.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { unmatchedOf } from '#shared/payments/unmatched.ts';
import { queuedFromSandbox } from '#test/support/events.ts';
import { aMerchant } from '#test/support/merchants.ts';
import { nipSessionId, paymentEvent } from '#test/support/payments.ts';
import { aQueueWithDlq } from '#test/support/queues.ts';

const aQueue = () => aQueueWithDlq('consumer');

const queued = (event: ReturnType<typeof paymentEvent>) => JSON.stringify(queuedFromSandbox(event));
const balanceOf = async (merchantId: string) => (await getMerchant(merchantId))?.balance;

describe('the payment events consumer', () => {
  it('sends a poison message to the DLQ while the rest of its batch is credited', async () => {
    const { merchant } = await aMerchant();
    const { queueUrl, dlqUrl } = await aQueue();
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          queued(paymentEvent({ account_number: merchant.account_number, amount: 1_000 })),
          'this is not json',
          queued(paymentEvent({ account_number: merchant.account_number, amount: 2_000 })),
        ].map((MessageBody, i) => ({ Id: String(i), MessageBody })),
      }),
    );
    const poller = await startPoller({
      endpoint: config.sqsEndpoint ?? '',
      queueUrl,
      handler,
      batchSize: 10,
    });
    try {
      await expect.poll(() => balanceOf(merchant.merchant_id), { timeout: 10_000 }).toBe(3_000);
      await expect
        .poll(
          async () =>
            (
              await sqs.send(
                new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 1, VisibilityTimeout: 30 }),
              )
            ).Messages?.map((m) => m.Body),
          { timeout: 20_000, interval: 500 },
        )
        .toEqual(['this is not json']);
    } finally {
      await poller.stop();
    }
    expect(await balanceOf(merchant.merchant_id)).toBe(3_000);
  }, 40_000);

  it('credits nothing twice when it crashes after the ledger write, before the message is deleted', async () => {
    const { merchant } = await aMerchant();
    const { queueUrl } = await aQueue();
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [1_500, 2_500].map((amount, i) => ({
          Id: String(i),
          MessageBody: queued(
            paymentEvent({ account_number: merchant.account_number, amount, session_id: nipSessionId() }),
          ),
        })),
      }),
    );
    let invocations = 0;
    // The first invocation does all its work, then dies: the poller deletes nothing, SQS redelivers.
    const crashingOnce = async (event: SQSEvent, context: Context) => {
      invocations += 1;
      const result = await handler(event, context);
      if (invocations === 1) throw new Error('injected crash after the ledger write');
      return result;
    };
    const poller = await startPoller({
      endpoint: config.sqsEndpoint ?? '',
      queueUrl,
      handler: crashingOnce,
      batchSize: 10,
    });
    try {
      await expect.poll(() => invocations, { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(2);
    } finally {
      await poller.stop();
    }
    expect(await balanceOf(merchant.merchant_id)).toBe(4_000);
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  }, 30_000);

  it("credits one merchant's batch in one ledger transaction, and a redelivery among them once", async () => {
    const { merchant } = await aMerchant();
    const events = Array.from({ length: 9 }, (_, i) =>
      paymentEvent({ account_number: merchant.account_number, amount: 1_000 + i }),
    );
    const first = events[0] as ReturnType<typeof paymentEvent>;
    const transactions = vi.spyOn(dynamo, 'send');
    const result = await handler(
      {
        Records: [...events, first].map(
          (event, i) => ({ messageId: `g${i}`, body: queued(event) }) as SQSEvent['Records'][number],
        ),
      },
      {} as Context,
    );
    const writes = transactions.mock.calls.filter(
      ([command]) => command instanceof TransactWriteCommand,
    ).length;
    transactions.mockRestore();
    expect(result.batchItemFailures).toEqual([]);
    // 9 distinct payments in one transaction; the repeat of the first goes one by one (and finds it applied).
    expect(writes).toBeLessThanOrEqual(2);
    expect(await balanceOf(merchant.merchant_id)).toBe(events.reduce((sum, e) => sum + e.data.amount, 0));
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });

  it('credits a batch spread over ten merchants in one ledger transaction; a group credited before goes one by one', async () => {
    const merchants = await Promise.all(Array.from({ length: 10 }, () => aMerchant()));
    const events = merchants.map(({ merchant }, i) =>
      paymentEvent({ account_number: merchant.account_number, amount: 1_000 + i }),
    );
    const records = (list: typeof events, prefix: string) =>
      list.map(
        (event, i) => ({ messageId: `${prefix}${i}`, body: queued(event) }) as SQSEvent['Records'][number],
      );
    const sends = vi.spyOn(dynamo, 'send');
    const transactions = () =>
      sends.mock.calls.filter(([command]) => command instanceof TransactWriteCommand).length;
    try {
      // Nine of the ten first: one transaction for nine merchants.
      expect((await handler({ Records: records(events.slice(1), 'a') })).batchItemFailures).toEqual([]);
      expect(transactions()).toBe(1);
      // All ten again with one more payment to the first merchant: the nine redelivered groups
      // are refused as a whole, the rest is credited, and each redelivery is found applied.
      sends.mockClear();
      const extra = paymentEvent({ account_number: merchants[0]?.merchant.account_number ?? '', amount: 7 });
      expect((await handler({ Records: records([...events, extra], 'b') })).batchItemFailures).toEqual([]);
    } finally {
      sends.mockRestore();
    }
    for (const [i, { merchant }] of merchants.entries()) {
      expect(await balanceOf(merchant.merchant_id)).toBe(1_000 + i + (i === 0 ? 7 : 0));
      expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
    }
  });

  it('falls back to one by one when a grouped payment was credited before, crediting the rest once', async () => {
    const { merchant } = await aMerchant();
    const events = [1, 2, 3].map((n) =>
      paymentEvent({ account_number: merchant.account_number, amount: n * 1_000 }),
    );
    await handler({
      Records: [
        {
          messageId: 'early',
          body: queued(events[1] as ReturnType<typeof paymentEvent>),
        } as SQSEvent['Records'][number],
      ],
    });
    const result = await handler({
      Records: events.map(
        (event, i) => ({ messageId: `late${i}`, body: queued(event) }) as SQSEvent['Records'][number],
      ),
    });
    expect(result.batchItemFailures).toEqual([]);
    expect(await balanceOf(merchant.merchant_id)).toBe(6_000);
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });

  it('credits each payment alone when the grouped transaction fails, and says why in a warning', async () => {
    const { merchant } = await aMerchant();
    const events = [1, 2, 3].map((n) =>
      paymentEvent({ account_number: merchant.account_number, amount: n * 100 }),
    );
    const send = dynamo.send.bind(dynamo);
    let failed = false;
    vi.spyOn(dynamo, 'send').mockImplementation((async (command: unknown) => {
      if (!failed && command instanceof TransactWriteCommand) {
        failed = true;
        throw new Error('the grouped transaction was lost on the way');
      }
      return send(command as never);
    }) as never);
    const warnings = vi.spyOn(logger, 'warn');
    try {
      const result = await handler({
        Records: events.map(
          (event, i) => ({ messageId: `lost${i}`, body: queued(event) }) as SQSEvent['Records'][number],
        ),
      });
      expect(result.batchItemFailures).toEqual([]);
    } finally {
      vi.restoreAllMocks();
    }
    expect(failed).toBe(true);
    const fellBack = warnings.mock.calls.filter(
      ([message]) => message === 'grouped credits failed: crediting each payment alone',
    );
    expect(fellBack).toEqual([
      [
        'grouped credits failed: crediting each payment alone',
        { merchants: 1, error: 'Error: the grouped transaction was lost on the way' },
      ],
    ]);
    expect(await balanceOf(merchant.merchant_id)).toBe(600);
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });

  it('credits a shuffled batch with duplicates once per session', async () => {
    const { merchant } = await aMerchant();
    const events = [1, 2, 3].map((n) =>
      paymentEvent({ account_number: merchant.account_number, amount: n * 100 }),
    );
    const bodies = [...events, events[0], events[2], events[0]].map((event) =>
      queued(event as ReturnType<typeof paymentEvent>),
    );
    const records = bodies
      .sort(() => Math.random() - 0.5)
      .map((body, i) => ({ messageId: `m${i}`, body }) as SQSEvent['Records'][number]);
    const result = await handler({ Records: records }, {} as Context);
    expect(result.batchItemFailures).toEqual([]);
    expect(await balanceOf(merchant.merchant_id)).toBe(600);
  });

  it('keeps an unusable delivery for operators once however often it comes, and another body beside it', async () => {
    const sessionId = nipSessionId();
    const unusable = (amount: unknown) =>
      queuedFromSandbox({
        type: 'payment.received',
        data: { session_id: sessionId, account_number: '1', amount },
      });
    const first = unusable('5000');
    const again = { ...unusable('5000'), delivery_id: 'msg_again' };
    const other = unusable(-1);
    const records = [first, again, other].map((event, i) => ({
      messageId: `m-${i}`,
      body: JSON.stringify(event),
    }));
    const result = await handler({ Records: records } as unknown as SQSEvent, {} as Context);
    expect(result.batchItemFailures).toEqual([]);
    const kept = await unmatchedOf('sandbox', sessionId);
    expect(kept).toHaveLength(2);
    expect(kept.map((item) => item.reason).sort()).toEqual([
      expect.stringContaining('data.account_number'),
      expect.stringContaining('data.account_number'),
    ]);
    expect(kept.map((item) => (item.event as { type: string }).type)).toEqual([
      'DeliveryUnusable',
      'DeliveryUnusable',
    ]);
  });
});
