import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import type { PartnerName } from '#shared/partners/partner.ts';

/** A durable key-value store an adapter keeps partner ids in (e.g. Paystack recipient codes). */
export interface PartnerMemo {
  get(key: string): Promise<string | undefined>;
  put(key: string, value: string): Promise<void>;
}

/** The memo of one partner, in the `partner-memos` table (keys are prefixed with the partner). */
export function dynamoMemo(partner: PartnerName): PartnerMemo {
  const memoKey = (key: string) => `${partner}:${key}`;
  return {
    async get(key) {
      const { Item } = await dynamo.send(
        new GetCommand({ TableName: tableName('partnerMemos'), Key: { memo_key: memoKey(key) } }),
      );
      return typeof Item?.value === 'string' ? Item.value : undefined;
    },
    async put(key, value) {
      await dynamo.send(
        new PutCommand({
          TableName: tableName('partnerMemos'),
          Item: { memo_key: memoKey(key), value, updated_at: new Date().toISOString() },
        }),
      );
    },
  };
}
