import { TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { isOnlyConflict, metContention } from '#shared/aws/transactions.ts';
import { isTransient } from '#shared/aws/transient.ts';

const awsError = (name: string, fault: 'client' | 'server', extra: object = {}) =>
  Object.assign(new Error(name), { name, $fault: fault, $metadata: {}, ...extra });

describe('isTransient (may trying again later succeed?)', () => {
  it("says yes to a service's own fault, throttling and the network", () => {
    for (const error of [
      awsError('InternalServerError', 'server'),
      awsError('ServiceUnavailable', 'server'),
      awsError('ProvisionedThroughputExceededException', 'client'),
      awsError('ThrottlingException', 'client'),
      awsError('RequestLimitExceeded', 'client'),
      awsError('SomethingNew', 'client', { $retryable: { throttling: true } }),
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      Object.assign(new Error('timed out'), { name: 'TimeoutError' }),
    ]) {
      expect(isTransient(error), error.name).toBe(true);
    }
  });

  it('says no to a request refused as sent and to an input the code cannot read', () => {
    for (const error of [
      awsError('ValidationException', 'client'),
      awsError('ResourceNotFoundException', 'client'),
      awsError('InvalidParameterValue', 'client'),
      new TypeError("Cannot read properties of undefined (reading 'S')"),
      new SyntaxError('Unexpected token'),
    ]) {
      expect(isTransient(error), error.name).toBe(false);
    }
  });
});

describe('conflicts and contention of DynamoDB transactions', () => {
  const cancelled = (...codes: string[]) =>
    new TransactionCanceledException({
      $metadata: {},
      message: `Transaction cancelled [${codes.join(', ')}]`,
      CancellationReasons: codes.map((Code) => ({ Code })),
    });

  it('retries a write refused only by a transaction at the same time, never one whose condition failed', () => {
    expect(isOnlyConflict(cancelled('None', 'TransactionConflict'))).toBe(true);
    // A single-item write on an item a transaction is writing (the SDK does not retry it).
    expect(isOnlyConflict(new TransactionConflictException({ $metadata: {}, message: 'conflict' }))).toBe(
      true,
    );
    expect(isOnlyConflict(cancelled('ConditionalCheckFailed', 'TransactionConflict'))).toBe(false);
    expect(isOnlyConflict(cancelled('None', 'ThrottlingError'))).toBe(false);
    expect(isOnlyConflict(new Error('other'))).toBe(false);
  });

  it('backs off before another try after a conflict or throttling, not after conditions alone', () => {
    expect(metContention([{ Code: 'None' }, { Code: 'TransactionConflict' }])).toBe(true);
    expect(metContention([{ Code: 'None' }, { Code: 'ThrottlingError' }])).toBe(true);
    expect(metContention([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }, {}])).toBe(false);
    expect(metContention([])).toBe(false);
  });
});
