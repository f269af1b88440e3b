import { AsyncLocalStorage } from 'node:async_hooks';
import type { MiddlewareStack } from '@smithy/types';
import { AUTHORIZER_TABLE_GRANTS, type TableGrants, tableGrants } from '#infra/table-grants.ts';
import { QUEUE_LIST } from '#shared/definitions/queues.ts';
import { API_KEY_AUTHORIZER, REQUERY_ACCESS, ROUTES } from '#shared/definitions/routes.ts';
import { STREAMS } from '#shared/definitions/streams.ts';
import { TABLES, type TableName } from '#shared/definitions/tables.ts';

/**
 * IAM's part locally: every function runs in one process with one DynamoDB client, so nothing
 * stopped a handler from touching a table its role on AWS may not (a transfer's event written by
 * `create-transfer` passed every local test and would have been AccessDenied on AWS). The local
 * runtime runs each invocation as its function (`asFunction`), and the client refuses any call
 * outside that function's grants (`tableGrants`, the very map the stack grants from) as AWS does:
 * `AccessDeniedException`, the whole call refused. Code outside an invocation (tests, the operator
 * CLI, the bootstrap) is not checked: on AWS it runs with an operator's credentials.
 */

/** The table grants of a function of the stack, by its name. */
export function grantsOf(functionName: string): TableGrants {
  if (functionName === API_KEY_AUTHORIZER.name) return AUTHORIZER_TABLE_GRANTS;
  if (functionName === 'requery-transfers') return tableGrants(REQUERY_ACCESS);
  const access =
    ROUTES.find((route) => route.name === functionName)?.access ??
    QUEUE_LIST.find((queue) => queue.consumer === functionName)?.consumerAccess ??
    STREAMS.find((stream) => stream.consumer === functionName)?.consumerAccess;
  if (!access) throw new Error(`no function ${functionName} in the stack`);
  return tableGrants(access);
}

const invocation = new AsyncLocalStorage<{ functionName: string; grants: TableGrants }>();

/**
 * Runs `work` as an invocation of `functionName`: its DynamoDB calls are held to `grants` (by
 * default the stack's grants of that function; a test's own route brings its route's).
 */
export function asFunction<T>(functionName: string, work: () => T, grants = grantsOf(functionName)): T {
  return invocation.run({ functionName, grants }, work);
}

/** The DynamoDB actions a command asks for, each with the physical table it names. */
export function actionsOf(
  command: string,
  input: Record<string, unknown>,
): [table: string, action: string][] {
  const named = (item: unknown) => String((item as { TableName?: unknown } | undefined)?.TableName);
  const single: Record<string, string> = {
    GetItemCommand: 'GetItem',
    PutItemCommand: 'PutItem',
    UpdateItemCommand: 'UpdateItem',
    DeleteItemCommand: 'DeleteItem',
    QueryCommand: 'Query',
    ScanCommand: 'Scan',
  };
  const action = single[command];
  if (action) return [[named(input), action]];
  if (command === 'BatchGetItemCommand' || command === 'BatchWriteItemCommand') {
    const batch = command === 'BatchGetItemCommand' ? 'BatchGetItem' : 'BatchWriteItem';
    return Object.keys((input.RequestItems as object | undefined) ?? {}).map((table) => [table, batch]);
  }
  if (command === 'TransactWriteItemsCommand' || command === 'TransactGetItemsCommand') {
    const kinds: Record<string, string> = {
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      ConditionCheck: 'ConditionCheckItem',
      Get: 'GetItem',
    };
    return ((input.TransactItems as Record<string, unknown>[] | undefined) ?? []).flatMap((item) =>
      Object.entries(item).map(([kind, operation]): [string, string] => [
        named(operation),
        kinds[kind] ?? kind,
      ]),
    );
  }
  // Anything else (DescribeTable, ListTables…) is no function's business.
  return [['*', command.replace(/Command$/, '')]];
}

/** What AWS answers a call the role does not allow (the SDK's error name, so handlers see the same). */
export class AccessDenied extends Error {
  override readonly name = 'AccessDeniedException';
}

const installed = new WeakSet<object>();

/**
 * Holds every call `client` sends within an invocation to that function's grants; `tableName` gives
 * a table's physical name (`shared/aws/clients.ts`). Installed once per client.
 */
export function enforceTableGrants(
  // biome-ignore lint/suspicious/noExplicitAny: any client's stack, whatever its input and output types.
  client: { middlewareStack: MiddlewareStack<any, any> },
  tableName: (table: TableName) => string,
): void {
  if (installed.has(client)) return;
  installed.add(client);
  const logical = new Map<string, TableName>(
    (Object.keys(TABLES) as TableName[]).map((name) => [tableName(name), name]),
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const current = invocation.getStore();
      if (current) {
        for (const [table, action] of actionsOf(context.commandName ?? '', args.input)) {
          const name = logical.get(table);
          if (!name || !current.grants.get(name)?.includes(`dynamodb:${action}`)) {
            throw new AccessDenied(
              `User: naira-local-${current.functionName} is not authorized to perform: dynamodb:${action} on resource: table/${table} (not granted in infra/table-grants.ts)`,
            );
          }
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'localTableGrants' },
  );
}

/**
 * Holds the DynamoDB client every handler of this process shares to the grants: called when a
 * handler is loaded, once the environment (read by that client at import) is set.
 */
export async function enforceGrantsOfHandlers(): Promise<void> {
  const { dynamo, tableName } = await import('#shared/aws/clients.ts');
  enforceTableGrants(dynamo, tableName);
}
