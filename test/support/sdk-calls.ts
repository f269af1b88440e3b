import type { MiddlewareStack } from '@smithy/types';

/** An AWS SDK client (or document client): all this needs is its middleware stack. */
interface Client {
  // biome-ignore lint/suspicious/noExplicitAny: any client's stack, whatever its input and output types.
  middlewareStack: MiddlewareStack<any, any>;
}

/**
 * Runs `act` with every command `client` sends listed in order by name (`GetItemCommand`,
 * `SendMessageBatchCommand`…); `before`, if given, sees each command and its input before it is
 * sent and may throw to fail it.
 */
export async function listingCalls<T>(
  client: Client,
  act: () => Promise<T>,
  before: (command: string, input: Record<string, unknown>) => void = () => undefined,
): Promise<{ result: T; calls: string[] }> {
  const calls: string[] = [];
  const name = `listingCalls-${Math.random()}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      calls.push(command);
      before(command, args.input as Record<string, unknown>);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await act(), calls };
  } finally {
    client.middlewareStack.remove(name);
  }
}
