import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#shared/aws/clients.ts';
import { backoff } from '#shared/aws/transactions.ts';

/** One item to read: its table's physical name, its key, and whether the read must be consistent. */
export interface ItemRead {
  TableName: string;
  Key: Record<string, string | number>;
  ConsistentRead?: boolean;
}

/** The most keys one BatchGetItem takes. */
const MAX_KEYS = 100;
/** How often keys DynamoDB leaves unprocessed (throttling) are asked for again before giving up. */
const UNPROCESSED_RETRIES = 5;

const sameKey = (item: Record<string, unknown>, key: ItemRead['Key']) =>
  Object.entries(key).every(([name, value]) => item[name] === value);

/**
 * Items of one or several tables by key, in one BatchGetItem (up to 100 keys): one round trip where
 * separate GetItems would take one each. Answers each read's item, or undefined where none exists,
 * in the order asked. A table's reads are strongly consistent if any of them asks. Keys DynamoDB
 * leaves unprocessed are asked again with backoff; still left after a few tries (about a second),
 * it throws, and the caller's own retry takes over.
 */
export async function getItems(reads: readonly ItemRead[]): Promise<(Record<string, unknown> | undefined)[]> {
  if (reads.length > MAX_KEYS) throw new Error(`getItems: ${reads.length} keys, at most ${MAX_KEYS}`);
  const found = new Map<string, Record<string, unknown>[]>();
  let requested: Record<string, { Keys: ItemRead['Key'][]; ConsistentRead: boolean }> = {};
  for (const read of reads) {
    const table = requested[read.TableName] ?? { Keys: [], ConsistentRead: false };
    // BatchGetItem refuses a key asked for twice: each is asked once, and answers every read of it.
    if (!table.Keys.some((key) => sameKey(key, read.Key))) table.Keys.push(read.Key);
    table.ConsistentRead ||= read.ConsistentRead === true;
    requested[read.TableName] = table;
  }
  for (let attempt = 1; Object.keys(requested).length > 0; attempt++) {
    if (attempt > 1 + UNPROCESSED_RETRIES) throw new Error('BatchGetItem left keys unprocessed');
    if (attempt > 1) await backoff(attempt);
    const { Responses, UnprocessedKeys } = await dynamo.send(
      new BatchGetCommand({ RequestItems: requested }),
    );
    for (const [table, items] of Object.entries(Responses ?? {})) {
      found.set(table, [...(found.get(table) ?? []), ...items]);
    }
    requested = (UnprocessedKeys ?? {}) as typeof requested;
  }
  return reads.map((read) => found.get(read.TableName)?.find((item) => sameKey(item, read.Key)));
}
