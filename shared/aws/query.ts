import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#shared/aws/clients.ts';

/**
 * How much one page of a list may read. A filter that matches little (`?status=reversed` in a long
 * history) leaves DynamoDB's pages short, so a page is read in requests that grow (twice the last,
 * up to `maxReadSize` items: DynamoDB itself stops at 1 MB), and after `maxReads` requests it ends
 * where the reading got to, shorter than asked, even empty, with a cursor that continues from there.
 * A request thus reads at most about 20,000 items (20,300 at the default limit) whatever the history, far inside API Gateway's
 * 29 s (it read them all, ten at a time, before). Tests lower `maxReads`.
 */
export const PAGE_READS = { maxReads: 25, maxReadSize: 1_000 };

/**
 * One page of up to `limit` items of a query, following DynamoDB's own pages (a filter can leave
 * them short), and whether more items follow. Reads one item beyond the page to know that. `after`,
 * when more follow, is where the next page starts after: the last item, or, on a page cut short by
 * `PAGE_READS`, the key of the last item read (which may match no filter; its key attributes only).
 */
export async function queryPage<T>(
  input: QueryCommandInput,
  limit: number,
  { maxReads = PAGE_READS.maxReads } = {},
): Promise<{ items: T[]; more: boolean; after?: Partial<T> }> {
  const wanted = limit + 1;
  const found: T[] = [];
  let start = input.ExclusiveStartKey;
  let size = Math.max(wanted, 10);
  for (let reads = 1; ; reads++) {
    const page = await dynamo.send(
      new QueryCommand({ ...input, Limit: Math.max(wanted - found.length, size), ExclusiveStartKey: start }),
    );
    found.push(...((page.Items ?? []) as T[]));
    start = page.LastEvaluatedKey;
    if (!start || found.length >= wanted) break;
    if (reads >= maxReads) return { items: found, more: true, after: start as Partial<T> };
    size = Math.min(size * 2, PAGE_READS.maxReadSize);
  }
  const items = found.slice(0, limit);
  const more = found.length > limit;
  return { items, more, ...(more ? { after: items.at(-1) } : {}) };
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
