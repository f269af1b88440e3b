import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { listDeadLetters, queuePair, redriveDeadLetters, summarize } from '#shared/aws/dead-letters.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { config } from '#shared/config.ts';
import { PAYMENT_EVENTS_QUEUE } from '#shared/definitions/queues.ts';
import { aQueueWithDlq } from '#test/support/queues.ts';

const send = async (queueUrl: string, body: string) =>
  (await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }))).MessageId ?? '';

/** Everything in a queue now (received and hidden for a minute: the test's own queues only). */
async function drain(queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
      }),
    );
    if (Messages.length === 0) return bodies.sort();
    bodies.push(...Messages.map((message) => message.Body ?? ''));
  }
}

describe('dead-letter queues for operators', () => {
  it('finds the service queue and its dead-letter queue by name', async () => {
    const pair = await queuePair(PAYMENT_EVENTS_QUEUE);
    expect(pair.source).toBe(config.paymentsQueueUrl);
    expect(pair.deadLetters).toContain('payment-events-dlq');
  });

  it('lists the messages with their receive count, sent time and a summary, and leaves them there', async () => {
    const { dlqUrl } = await aQueueWithDlq('ops-list');
    const event = { type: 'PaymentReceived', partner: 'sandbox', payment_id: '123', amount: 500 };
    const first = await send(dlqUrl, JSON.stringify(event));
    const second = await send(dlqUrl, 'not json at all');
    const listed = await listDeadLetters(dlqUrl);
    expect(listed.map((m) => m.messageId).sort()).toEqual([first, second].sort());
    expect(listed.find((m) => m.messageId === first)).toMatchObject({
      receiveCount: 1,
      sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      summary: 'type=PaymentReceived partner=sandbox payment_id=123 amount=500',
    });
    expect(await listDeadLetters(dlqUrl)).toHaveLength(2);
    expect(await drain(dlqUrl)).toEqual([JSON.stringify(event), 'not json at all'].sort());
  });

  it('moves one message back by id, then the rest, to the source queue', async () => {
    const { queueUrl, dlqUrl } = await aQueueWithDlq('ops-redrive');
    const ids = [await send(dlqUrl, 'a'), await send(dlqUrl, 'b'), await send(dlqUrl, 'c')];
    const one = await redriveDeadLetters({ source: queueUrl, deadLetters: dlqUrl }, { messageId: ids[1] });
    expect(one).toEqual([{ from: ids[1], to: expect.any(String), summary: 'b' }]);
    expect((await listDeadLetters(dlqUrl)).map((m) => m.summary).sort()).toEqual(['a', 'c']);
    expect(
      await redriveDeadLetters({ source: queueUrl, deadLetters: dlqUrl }, { messageId: 'missing' }),
    ).toEqual([]);
    const rest = await redriveDeadLetters({ source: queueUrl, deadLetters: dlqUrl });
    expect(rest.map((m) => m.summary).sort()).toEqual(['a', 'c']);
    expect(await listDeadLetters(dlqUrl)).toEqual([]);
    expect(await drain(queueUrl)).toEqual(['a', 'b', 'c']);
  });

  it('summarizes long or odd bodies in one short line', () => {
    expect(summarize('x'.repeat(200))).toHaveLength(81);
    expect(summarize('[1,2]')).toBe('[1,2]');
    expect(summarize(JSON.stringify({ merchant_id: 'mer_1', event_id: 'evt_2', delivery_id: 'dlv_3' }))).toBe(
      'merchant_id=mer_1 event_id=evt_2 delivery_id=dlv_3',
    );
  });
});
