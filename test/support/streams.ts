import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';

const pick = (item: object, keys: readonly string[]) =>
  Object.fromEntries(Object.entries(item).filter(([key]) => keys.includes(key)));

/** The events table's stream batch of `events` (INSERTs), as Lambda hands it to the fan-out. */
export const streamOf = (events: readonly object[]) =>
  ({
    Records: events.map((event, i) => ({
      eventName: 'INSERT',
      dynamodb: {
        SequenceNumber: String(i + 1),
        Keys: marshall(pick(event, ['merchant_id', 'event_id'])) as Record<string, AttributeValue>,
        NewImage: marshall(event, { removeUndefinedValues: true }) as Record<string, AttributeValue>,
      },
    })),
  }) as unknown as DynamoDBStreamEvent;
