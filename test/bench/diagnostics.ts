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

/** The sizes of the batches each consumer was invoked with, as the local runtime reports them. */
export class BatchSizes {
  private sizes = new Map<string, number[]>();

  readonly record = (consumer: string, records: number): void => {
    const sizes = this.sizes.get(consumer) ?? [];
    sizes.push(records);
    this.sizes.set(consumer, sizes);
  };

  /** The sizes since the last reset, per consumer, and a reset. */
  take(): Map<string, number[]> {
    const sizes = this.sizes;
    this.sizes = new Map();
    return sizes;
  }
}

/** How a consumer's batches ran: `12 batches of 8.3 mean (p50 9, max 10)`. */
export interface BatchSummary {
  batches: number;
  mean: number;
  p50: number;
  max: number;
}

export function summarizeBatches(sizes: readonly number[]): BatchSummary {
  const sorted = [...sizes].sort((a, b) => a - b);
  const total = sorted.reduce((sum, size) => sum + size, 0);
  return {
    batches: sorted.length,
    mean: sorted.length === 0 ? 0 : total / sorted.length,
    p50: sorted[Math.floor((sorted.length - 1) / 2)] ?? 0,
    max: sorted.at(-1) ?? 0,
  };
}

export function describeBatches({ batches, mean, p50, max }: BatchSummary): string {
  return `${batches} batches of ${mean.toFixed(1)} mean (p50 ${p50}, max ${max})`;
}
