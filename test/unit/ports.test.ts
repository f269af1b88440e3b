import { afterEach, describe, expect, it, vi } from 'vitest';
import { changedPortSettings, portSetting } from '#infra/local/ports.ts';
import { ephemeralLow, freePort } from '#infra/local/process.ts';

/** The list itself is checked against Node's fetch in test/integration/fetch-blocked-ports.test.ts. */
describe('the ports npm start takes', () => {
  it('refuses a blocked port with the reason and a port to use instead, and reads the rest', () => {
    expect(() => portSetting('PORT', '6000', 3000)).toThrow(
      /PORT=6000 is one of the ports Node's fetch refuses .* e\.g\. 6001$/,
    );
    expect(() => portSetting('PORT', '6665', 3000)).toThrow(/e\.g\. 6670$/);
    expect(() => portSetting('SQS_PORT', 'x', 9324)).toThrow('SQS_PORT must be a port number');
    expect(portSetting('PORT', undefined, 3000)).toBe(3000);
    expect(portSetting('PORT', '6002', 3000)).toBe(6002);
  });

  it('repeats in a printed command only the ports set to something other than their default, in the order asked', () => {
    const env = { PORT: '3001', SANDBOX_PORT: '3100', DYNAMODB_PORT: '8001', SQS_PORT: undefined };
    expect(changedPortSettings(['DYNAMODB_PORT', 'SQS_PORT', 'SANDBOX_PORT', 'PORT'], env)).toEqual([
      'DYNAMODB_PORT=8001',
      'PORT=3001',
    ]);
    expect(changedPortSettings(['PORT'], {})).toEqual([]);
    expect(() => changedPortSettings(['PORT'], { PORT: 'x' })).toThrow('PORT must be a port number');
  });
});

describe('the free ports tests and tools pick', () => {
  afterEach(() => vi.restoreAllMocks());

  it("never picks one Node's fetch refuses (10080), which npm start would refuse", async () => {
    const span = ephemeralLow() - 1 - 10_000;
    // The first pick lands on 10080; the next one elsewhere.
    vi.spyOn(Math, 'random')
      .mockReturnValueOnce(80.5 / span)
      .mockReturnValueOnce(1_234.5 / span);
    expect(await freePort()).not.toBe(10_080);
  });
});
