import { describe, expect, it } from 'vitest';
import { BatchSizes, describeBatches, summarizeBatches } from '#test/bench/diagnostics.ts';

describe("the bench's consumer batch sizes", () => {
  it('keeps each consumer’s batch sizes until taken, and summarises them', () => {
    const batches = new BatchSizes();
    for (const size of [10, 3, 10, 7]) batches.record('process-payment-events', size);
    batches.record('fan-out-events', 25);
    const taken = batches.take();
    expect(taken.get('process-payment-events')).toEqual([10, 3, 10, 7]);
    expect(batches.take().size).toBe(0);
    const summary = summarizeBatches(taken.get('process-payment-events') ?? []);
    expect(summary).toEqual({ batches: 4, mean: 7.5, p50: 7, max: 10 });
    expect(describeBatches(summary)).toBe('4 batches of 7.5 mean (p50 7, max 10)');
    expect(summarizeBatches([])).toEqual({ batches: 0, mean: 0, p50: 0, max: 0 });
  });
});
