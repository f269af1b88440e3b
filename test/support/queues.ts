import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { sqs } from '#shared/aws/sqs.ts';

/** A queue of a test's own, with a short visibility timeout and a DLQ after `maxReceiveCount` receives. */
export async function aQueueWithDlq(
  prefix: string,
  options: { visibilityTimeout?: number; maxReceiveCount?: number } = {},
) {
  const suffix = Math.random().toString(36).slice(2, 8);
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-dlq-${suffix}` }));
  const dlqArn = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${prefix}-${suffix}`,
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeout ?? 2),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn.Attributes?.QueueArn,
          maxReceiveCount: options.maxReceiveCount ?? 2,
        }),
      },
    }),
  );
  return { queueUrl: queue.QueueUrl ?? '', dlqUrl: dlq.QueueUrl ?? '' };
}
