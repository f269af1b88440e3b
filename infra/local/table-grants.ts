import { AsyncLocalStorage } from 'node:async_hooks';
import type { MiddlewareStack } from '@smithy/types';
import {
  AUTHORIZER_SECRET_GRANTS,
  AUTHORIZER_TABLE_GRANTS,
  secretGrants,
  type TableGrants,
  tableGrants,
} from '#infra/table-grants.ts';
import { QUEUE_LIST, QUEUES, type QueueKey } from '#shared/definitions/queues.ts';
import {
  type Access,
  API_KEY_AUTHORIZER,
  REQUERY_ACCESS,
  ROUTES,
  type RouteAuth,
} from '#shared/definitions/routes.ts';
import { STREAMS } from '#shared/definitions/streams.ts';
import { TABLES, type TableName } from '#shared/definitions/tables.ts';
import type { SecretName } from '#shared/secrets.ts';

/**
 * IAM's part locally: every function runs in one process with one DynamoDB client and one SQS
 * client, and finds every secret in the environment, so nothing stopped a handler from touching a
 * table, a queue or a secret its role on AWS may not (a
 * transfer's event written by `create-transfer` passed every local test and would have been
 * AccessDenied on AWS). The local
 * runtime runs each invocation as its function (`asFunction`), and the client refuses any call
 * outside that function's grants (`tableGrants`, the very map the stack grants from) as AWS does:
 * `AccessDeniedException`, the whole call refused. Code outside an invocation (tests, the operator
 * CLI, the bootstrap) is not checked: on AWS it runs with an operator's credentials.
 */

/**
 * What a function's role may do, locally checked: its tables' actions, the queues it sends to, and
 * the secrets it reads.
 */
export interface FunctionGrants {
  tables: TableGrants;
  queues: readonly QueueKey[];
  secrets: readonly SecretName[];
}

/** The grants of a function with `access` (as the stack grants them); `auth`: its route's. */
export function accessGrants(access: Access, auth?: RouteAuth): FunctionGrants {
  return { tables: tableGrants(access), queues: access.sendsTo ?? [], secrets: secretGrants(access, auth) };
}

/** The grants of every function of the stack, by its name (made once, read on every invocation). */
const STACK_GRANTS = new Map<string, FunctionGrants>([
  [
    API_KEY_AUTHORIZER.name,
    { tables: AUTHORIZER_TABLE_GRANTS, queues: [], secrets: AUTHORIZER_SECRET_GRANTS },
  ],
  ['requery-transfers', accessGrants(REQUERY_ACCESS)],
  ...ROUTES.map((route): [string, FunctionGrants] => [route.name, accessGrants(route.access, route.auth)]),
  ...QUEUE_LIST.map((queue): [string, FunctionGrants] => [
    queue.consumer,
    accessGrants(queue.consumerAccess),
  ]),
  ...STREAMS.map((stream): [string, FunctionGrants] => [
    stream.consumer,
    accessGrants(stream.consumerAccess),
  ]),
]);

/** The grants of a function of the stack, by its name. */
export function grantsOf(functionName: string): FunctionGrants {
  const grants = STACK_GRANTS.get(functionName);
  if (!grants) throw new Error(`no function ${functionName} in the stack`);
  return grants;
}

const invocation = new AsyncLocalStorage<{ functionName: string; grants: FunctionGrants }>();

/**
 * Runs `work` as an invocation of `functionName`: its DynamoDB and SQS calls are held to `grants`
 * (by default the stack's grants of that function; a test's own route brings its route's).
 */
export function asFunction<T>(
  functionName: string,
  work: () => T,
  grants: FunctionGrants = grantsOf(functionName),
): T {
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

/** What a client's middleware sees of a call: its command's name and its input. */
interface SentCall {
  commandName: string;
  input: Record<string, unknown>;
}

/**
 * Adds `check` to `client`'s middleware once: it runs before every call the client sends within an
 * invocation, with that invocation, and throws to refuse the call (nothing is sent).
 */
function checkCallsOf(
  // biome-ignore lint/suspicious/noExplicitAny: any client's stack, whatever its input and output types.
  client: { middlewareStack: MiddlewareStack<any, any> },
  name: string,
  check: (call: SentCall, current: { functionName: string; grants: FunctionGrants }) => void,
): void {
  if (installed.has(client)) return;
  installed.add(client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const current = invocation.getStore();
      if (current) {
        check(
          { commandName: context.commandName ?? '', input: args.input as Record<string, unknown> },
          current,
        );
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
}

/**
 * Holds every call `client` sends within an invocation to that function's grants; `tableName` gives
 * a table's physical name (`shared/aws/clients.ts`). Installed once per client.
 */
export function enforceTableGrants(
  // biome-ignore lint/suspicious/noExplicitAny: any client's stack, whatever its input and output types.
  client: { middlewareStack: MiddlewareStack<any, any> },
  tableName: (table: TableName) => string,
): void {
  const logical = new Map<string, TableName>(
    (Object.keys(TABLES) as TableName[]).map((name) => [tableName(name), name]),
  );
  checkCallsOf(client, 'localTableGrants', ({ commandName, input }, current) => {
    for (const [table, action] of actionsOf(commandName, input)) {
      const name = logical.get(table);
      if (!name || !current.grants.tables.get(name)?.includes(`dynamodb:${action}`)) {
        throw new AccessDenied(
          `User: naira-local-${current.functionName} is not authorized to perform: dynamodb:${action} on resource: table/${table} (not granted in infra/table-grants.ts)`,
        );
      }
    }
  });
}

/**
 * Holds every SQS call `client` sends within an invocation to that function's queues: a send
 * (`SendMessage`, `SendMessageBatch`) to the URL of a queue it `sendsTo` (`queueUrl` gives a
 * queue's URL, as the function's environment does), and nothing else (receiving and deleting are
 * the event source mapping's, not the function's). Installed once per client.
 */
export function enforceQueueGrants(
  // biome-ignore lint/suspicious/noExplicitAny: any client's stack, whatever its input and output types.
  client: { middlewareStack: MiddlewareStack<any, any> },
  queueUrl: (queue: QueueKey) => string | undefined,
): void {
  checkCallsOf(client, 'localQueueGrants', ({ commandName, input }, current) => {
    const action = commandName.replace(/Command$/, '');
    const url = String(input.QueueUrl);
    const send = action === 'SendMessage' || action === 'SendMessageBatch';
    if (!send || !current.grants.queues.some((queue) => queueUrl(queue) === url)) {
      throw new AccessDenied(
        `User: naira-local-${current.functionName} is not authorized to perform: sqs:${action} on resource: ${url} (not in its sendsTo)`,
      );
    }
  });
}

/**
 * Holds a read of `secret` within an invocation to that function's secrets: locally every secret
 * is in the environment, where on AWS a role without the grant gets AccessDenied (and has no
 * variable naming the secret).
 */
export function checkSecretRead(secret: SecretName): void {
  const current = invocation.getStore();
  if (current && !current.grants.secrets.includes(secret)) {
    throw new AccessDenied(
      `User: naira-local-${current.functionName} is not authorized to perform: secretsmanager:GetSecretValue on resource: ${secret} (not granted in infra/table-grants.ts)`,
    );
  }
}

/**
 * Holds the DynamoDB and SQS clients and the secret reads every handler of this process shares to
 * the grants: called when a handler is loaded, once the environment (read by those clients at
 * import) is set.
 */
export async function enforceGrantsOfHandlers(): Promise<void> {
  const [{ dynamo, tableName }, { sqs }, { checkSecretReads }] = await Promise.all([
    import('#shared/aws/clients.ts'),
    import('#shared/aws/sqs.ts'),
    import('#shared/secrets.ts'),
  ]);
  enforceTableGrants(dynamo, tableName);
  enforceQueueGrants(sqs, (queue) => process.env[QUEUES[queue].urlEnv]);
  checkSecretReads(checkSecretRead);
}
