import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { dynamo } from '#shared/aws/clients.ts';
import { sqs } from '#shared/aws/sqs.ts';
import { config } from '#shared/config.ts';

/**
 * Fault injection into the process's shared AWS clients (`shared/aws/clients.ts`), through the SDK's
 * own middleware stack: what a test installs runs for every command any code of this process sends
 * (domain functions called directly, and handlers behind an in-process gateway), and is removed
 * afterwards. Nothing is mocked: a command that is let through really reaches DynamoDB Local / SQS.
 */

const scopes = new AsyncLocalStorage<string>();

/**
 * Runs `work` in a named scope: a fault installed with that `scope` touches only the commands this
 * work sends (async context follows every await, timer and SDK retry), so several faulted flows can
 * run at once in one process without seeing each other's commands.
 */
export function inScope<T>(scope: string, work: () => Promise<T>): Promise<T> {
  return scopes.run(scope, work);
}

/** One command sent through the shared DynamoDB client. */
export interface DynamoCall {
  /** 1-based position in the recording. */
  index: number;
  /** The low-level command name, e.g. `TransactWriteItemsCommand`. */
  command: string;
  /** Physical table names the command touches. */
  tables: string[];
  /** Whether the command writes (a crash can happen before or after its write). */
  write: boolean;
  /** Whether a read asked for a strongly consistent answer (`ConsistentRead`). */
  consistent: boolean;
}

const WRITE_COMMANDS = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'TransactWriteItemsCommand',
  'BatchWriteItemCommand',
]);

/** Thrown in place of a command's answer: the process "died" at that point. */
export class SimulatedCrash extends Error {
  constructor(
    readonly call: DynamoCall,
    readonly when: 'before' | 'after',
  ) {
    super(`simulated crash ${when} command #${call.index} (${call.command} on ${call.tables.join(', ')})`);
    this.name = 'SimulatedCrash';
  }
}

function tablesOf(input: Record<string, unknown>): string[] {
  if (typeof input.TableName === 'string') return [input.TableName];
  const items = (input.TransactItems ?? []) as Record<string, { TableName?: string }>[];
  const names = items.flatMap((item) => Object.values(item).map((op) => op?.TableName ?? '?'));
  const batch = Object.keys((input.RequestItems ?? {}) as object);
  return [...names, ...batch];
}

type Step = 'initialize' | 'finalizeRequest';

/**
 * What an interceptor decides for one command: `proceed()` sends it on (for `finalizeRequest`, one
 * attempt; the SDK's retries call the interceptor again). Return its result, or throw instead.
 */
export type Interceptor = (call: DynamoCall, proceed: () => Promise<unknown>) => Promise<unknown>;

export interface Installed {
  /** Every command (initialize) or attempt (finalizeRequest) seen while installed. */
  calls: DynamoCall[];
  remove(): void;
}

/**
 * Installs `intercept` on the shared DynamoDB client. At `initialize` it sees each `send` once, above
 * the SDK's retry loop; at `finalizeRequest` (below the retry middleware, which has high priority in
 * that step) it sees every attempt, so errors thrown there are retried by the SDK as real ones would.
 */
export function interceptDynamo(step: Step, intercept: Interceptor, scope?: string): Installed {
  const name = `fault-${step}-${randomUUID()}`;
  const calls: DynamoCall[] = [];
  const middleware =
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
    async (args: unknown) => {
      if (scope !== undefined && scopes.getStore() !== scope) return next(args);
      const input = ((args as { input?: Record<string, unknown> }).input ?? {}) as Record<string, unknown>;
      const command = context.commandName ?? 'UnknownCommand';
      const call: DynamoCall = {
        index: calls.length + 1,
        command,
        tables: tablesOf(input),
        write: WRITE_COMMANDS.has(command),
        consistent: input.ConsistentRead === true,
      };
      calls.push(call);
      return intercept(call, () => next(args));
    };
  // The stack's overloads are per step; the middleware's shape is the same for both steps used here.
  (dynamo.middlewareStack as unknown as { add(m: unknown, o: object): void }).add(middleware, {
    step,
    name,
    priority: 'low',
  });
  return { calls, remove: () => void dynamo.middlewareStack.remove(name) };
}

/** Records every command the shared DynamoDB client sends (in `scope`), changing nothing. */
export function recordDynamo(scope?: string): Installed {
  return interceptDynamo('initialize', (_call, proceed) => proceed(), scope);
}

/**
 * Crashes the `k`-th command: `before` it is sent (nothing written), or `after` it was performed and
 * before its caller learns of it (the write is durable, the caller sees an error). Every other
 * command goes through.
 */
export function crashAt(
  k: number,
  when: 'before' | 'after',
  scope?: string,
): Installed & { crashed(): DynamoCall | undefined; thrown(): boolean } {
  let crashed: DynamoCall | undefined;
  let thrown = false;
  const installed = interceptDynamo(
    'initialize',
    async (call, proceed) => {
      if (call.index !== k) return proceed();
      crashed = call;
      // After: a command that fails by itself (a condition another writer already met) fails with
      // its own error, and the crash is never thrown.
      if (when === 'after') await proceed();
      thrown = true;
      throw new SimulatedCrash(call, when);
    },
    scope,
  );
  return { ...installed, crashed: () => crashed, thrown: () => thrown };
}

/**
 * Fails the first `times` attempts of every command named `command` with the error `make()` builds
 * (thrown below the SDK's retry loop, exactly where a DynamoDB error response would surface).
 */
export function failAttempts(
  command: string,
  times: number,
  make: () => Error,
  scope?: string,
): Installed & { injected(): number } {
  let injected = 0;
  const installed = interceptDynamo(
    'finalizeRequest',
    async (call, proceed) => {
      if (call.command !== command || injected >= times) return proceed();
      injected += 1;
      throw make();
    },
    scope,
  );
  return { ...installed, injected: () => injected };
}

/**
 * Makes the shared SQS client's `SendMessage` fail (every one, or the `only`-th): `before` (nothing
 * queued) or `after` (queued, then the answer is lost, as when the connection drops on the way
 * back). Other commands pass.
 */
export function failSqsSends(
  when: 'before' | 'after',
  { only }: { only?: number } = {},
): { attempts(): number; remove(): void } {
  const name = `sqs-fault-${randomUUID()}`;
  let attempts = 0;
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageCommand') return next(args);
      attempts += 1;
      // `only`: the n-th send alone fails; the others pass.
      if (only !== undefined && attempts !== only) return next(args);
      if (when === 'after') await next(args);
      throw Object.assign(new Error('injected: SQS did not answer'), { name: 'InjectedSqsFault' });
    },
    { step: 'initialize', name },
  );
  return { attempts: () => attempts, remove: () => void sqs.middlewareStack.remove(name) };
}

/**
 * Waits until the payment events queue holds nothing (visible or in flight), or `timeoutMs` passes;
 * returns whether it drained. Other test files share the queue, so this is an upper bound only.
 */
export async function queueDrained(timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { Attributes: a } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: config.paymentsQueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    if (
      Number(a?.ApproximateNumberOfMessages ?? 0) + Number(a?.ApproximateNumberOfMessagesNotVisible ?? 0) ===
      0
    )
      return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

/** What a piece of work did under a fault: its value, or the error it threw. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `work` in a scope of its own under the fault `install` sets up for that scope, and removes
 * the fault afterwards whatever happens. Returns the fault (to inspect) and the work's outcome.
 */
export async function underFault<F extends { remove(): void }, T>(
  install: (scope: string) => F,
  work: () => Promise<T>,
): Promise<{ fault: F; outcome: Outcome<T> }> {
  const scope = randomUUID();
  const fault = install(scope);
  try {
    const outcome = await inScope(scope, work).then(
      (value): Outcome<T> => ({ ok: true, value }),
      (error: unknown): Outcome<T> => ({ ok: false, error }),
    );
    return { fault, outcome };
  } finally {
    fault.remove();
  }
}
