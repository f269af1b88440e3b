/**
 * Counts the DynamoDB commands a client sends and the errors they end in, by attaching a middleware
 * to the client from outside: the service's code is measured unchanged.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface CommandCount {
  calls: number;
  /** Summed duration of the calls (retries inside the SDK included), ms. */
  totalMs: number;
  /** Error name → how many calls ended in it (e.g. TransactionCanceledException). */
  errors: Record<string, number>;
}

export type CommandCounts = Record<string, CommandCount>;

export class CommandCounter {
  private counts: CommandCounts = {};

  attach(client: DynamoDBDocumentClient): this {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = String(context.commandName ?? 'unknown').replace(/Command$/, '');
        const count = this.counts[name] ?? { calls: 0, totalMs: 0, errors: {} };
        this.counts[name] = count;
        count.calls++;
        const started = performance.now();
        try {
          return await next(args);
        } catch (error) {
          const errorName = error instanceof Error ? error.name : 'unknown';
          count.errors[errorName] = (count.errors[errorName] ?? 0) + 1;
          throw error;
        } finally {
          count.totalMs += performance.now() - started;
        }
      },
      { step: 'initialize', name: 'benchCommandCounter' },
    );
    return this;
  }

  /** The counts since the last reset, and a reset. */
  take(): CommandCounts {
    const counts = this.counts;
    this.counts = {};
    return counts;
  }
}

/**
 * Calls per unit and their mean duration, e.g.
 * `GetItem 2.00 × 3.1 ms, TransactWriteItems 1.31 × 40.2 ms (0.31 TransactionCanceledException)`.
 */
export function describeCounts(counts: CommandCounts, per: number): string {
  const fmt = (n: number) => (n / per).toFixed(2);
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, { calls, totalMs, errors }]) => {
      const failed = Object.entries(errors).map(([error, n]) => `${fmt(n)} ${error}`);
      const mean = `${(totalMs / calls).toFixed(1)} ms`;
      return `${name} ${fmt(calls)} × ${mean}${failed.length > 0 ? ` (${failed.join(', ')})` : ''}`;
    })
    .join(', ');
}
