import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from 'vitest';
import { firstFailedIndex } from '#infra/local/stream-poller.ts';

/** How the local stream poller reads a consumer's `batchItemFailures`, as Lambda's mapping does. */
const batch = ['101', '102', '103'].map((SequenceNumber) => ({ dynamodb: { SequenceNumber } }) as _Record);
const failing = (...ids: string[]) => ({
  batchItemFailures: ids.map((itemIdentifier) => ({ itemIdentifier })),
});

describe('a stream batch given again', () => {
  it('from nowhere when nothing failed', () => {
    expect(firstFailedIndex(batch, undefined)).toBe(-1);
    expect(firstFailedIndex(batch, failing())).toBe(-1);
  });

  it('from the earliest record reported, in whatever order they are listed', () => {
    expect(firstFailedIndex(batch, failing('102'))).toBe(1);
    expect(firstFailedIndex(batch, failing('103', '102'))).toBe(1);
  });

  it('whole when a reported id is none of the batch records, empty or unknown', () => {
    expect(firstFailedIndex(batch, failing(''))).toBe(0);
    expect(firstFailedIndex(batch, failing('103', '999'))).toBe(0);
  });
});
