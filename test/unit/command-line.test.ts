import { describe, expect, it } from 'vitest';
import { failureOf, Refusal, UsageError } from '#infra/cli/command-line.ts';
import { PartnerUnavailable } from '#shared/errors.ts';

/** What the operator CLIs print when a command fails, and their exit codes. */

const options = {
  usage: 'usage: keys create --name <name>',
  tried: ['dynamodb', 'partner'] as const,
  portsHint: 'is `npm start` running?',
};
const local = { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', PARTNER_BASE_URL: 'http://127.0.0.1:4010' };
const refused = () =>
  new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:4010') });

describe('the failure of an operator command', () => {
  it('prints a usage mistake with the usage (2) and a refusal as such (3)', () => {
    expect(failureOf(new UsageError('give --name'), options, local)).toEqual({
      message: 'give --name\n\nusage: keys create --name <name>',
      exitCode: 2,
    });
    expect(failureOf(new Refusal('already resolved'), options, local)).toEqual({
      message: 'Refused: already resolved',
      exitCode: 3,
    });
  });

  it('sends to `npm start` when its sandbox partner or DynamoDB does not answer, naming the address that refused', () => {
    for (const error of [new PartnerUnavailable(30, refused()), refused()]) {
      expect(failureOf(error, options, local)).toEqual({
        message: 'Could not reach the service at http://127.0.0.1:4010: is `npm start` running?',
        exitCode: 1,
      });
    }
    // The SDK's own error names the address in its message (SQS on another port than DynamoDB's).
    const sqs = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9324'), { code: 'ECONNREFUSED' });
    expect(failureOf(sqs, options, local).message).toBe(
      'Could not reach the service at http://127.0.0.1:9324: is `npm start` running?',
    );
    // No address in the error: every address it may have tried.
    expect(failureOf(new TypeError('fetch failed'), options, local).message).toBe(
      'Could not reach the service at http://127.0.0.1:8000 and http://127.0.0.1:4010: is `npm start` running?',
    );
  });

  it('blames Paystack, not the local service, when Paystack is down or answers amiss', () => {
    const env = { ...local, PARTNER: 'paystack', PAYSTACK_BASE_URL: 'https://api.paystack.co' };
    const amiss = failureOf(
      new PartnerUnavailable(30, 'unexpected dedicated account answer 503'),
      options,
      env,
    );
    expect(amiss).toEqual({
      message:
        'The banking partner (Paystack at https://api.paystack.co) did not answer as it should: unexpected dedicated account answer 503. Try again once it does.',
      exitCode: 1,
    });
    const down = failureOf(new PartnerUnavailable(30, refused()), options, env);
    expect(down.message).toMatch(/^The banking partner \(Paystack at https:\/\/api\.paystack\.co\)/);
    expect(down.message).toContain('ECONNREFUSED');
    expect(down.message).not.toContain('npm start');
  });

  it('blames any partner npm start does not run, not the local service, when it is down', () => {
    const down = failureOf(new PartnerUnavailable(30, refused()), options, { ...local, PARTNER: 'acmebank' });
    expect(down.message).toMatch(
      /^The banking partner \(acmebank\) did not answer as it should: .*ECONNREFUSED/,
    );
    expect(down.message).not.toContain('npm start');
  });

  it('blames the sandbox partner when it answered, but not as it should', () => {
    expect(failureOf(new PartnerUnavailable(30, 'partner 500'), options, local).message).toBe(
      'The banking partner (the sandbox partner at http://127.0.0.1:4010) did not answer as it should: partner 500. Try again once it does.',
    );
  });

  it('prints any other failure as it is', () => {
    expect(failureOf(new Error('no merchant mer_1'), options, local)).toEqual({
      message: 'Failed: no merchant mer_1',
      exitCode: 1,
    });
  });
});
