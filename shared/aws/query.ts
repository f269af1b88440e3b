import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#shared/aws/clients.ts';

/**
 * One page of up to `limit` items of a query, following DynamoDB's own pages (a filter can leave
 * them short), and whether more items follow. Reads one item beyond the page to know that.
 */
export async function queryPage<T>(
  input: QueryCommandInput,
  limit: number,
): Promise<{ items: T[]; more: boolean }> {
  const wanted = limit + 1;
  const found: T[] = [];
  let start = input.ExclusiveStartKey;
  do {
    const page = await dynamo.send(
      new QueryCommand({ ...input, Limit: Math.max(wanted - found.length, 10), ExclusiveStartKey: start }),
    );
    found.push(...((page.Items ?? []) as T[]));
    start = page.LastEvaluatedKey;
  } while (start && found.length < wanted);
  return { items: found.slice(0, limit), more: found.length > limit };
}

/** Every item of a query, across all of DynamoDB's pages. */
export async function queryAll<T>(input: QueryCommandInput): Promise<T[]> {
  const items: T[] = [];
  let start = input.ExclusiveStartKey;
  do {
    const page = await dynamo.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...((page.Items ?? []) as T[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
