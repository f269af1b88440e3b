import { describe, expect, it } from 'vitest';
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
