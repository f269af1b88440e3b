import { ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#shared/aws/clients.ts';

// A module of its own, imported by no function: the IAM test reads every module a handler imports
// for the calls it makes, and no function may scan (none is granted Scan).

/** Every item of a scan, across all of DynamoDB's pages (operators' tools and tests only). */
export async function scanAll<T>(input: ScanCommandInput): Promise<T[]> {
  const items: T[] = [];
  let start = input.ExclusiveStartKey;
  do {
    const page = await dynamo.send(new ScanCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...((page.Items ?? []) as T[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
