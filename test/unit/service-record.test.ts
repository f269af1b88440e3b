import { describe, expect, it } from 'vitest';
import { type ServiceRecord, settingsOf, useServiceSettings } from '#infra/local/service-record.ts';

const record: ServiceRecord = {
  dynamodbEndpoint: 'http://127.0.0.1:8000',
  tablePrefix: 'naira-',
  partner: 'paystack',
  settings: { MAX_BALANCE: '30000' },
};

describe("a local CLI run with the running service's settings", () => {
  it("takes the service's values, drops the shell's where the service has none, and says so", () => {
    const env: NodeJS.ProcessEnv = {
      MAX_BALANCE: '9',
      MAX_PAYMENT_AMOUNT: '5',
      LOG_LEVEL: 'DEBUG',
      PARTNER: 'paystack',
    };
    expect(useServiceSettings(env, record)).toEqual([
      "Using the running service's MAX_PAYMENT_AMOUNT (its default), not this shell's 5.",
      "Using the running service's MAX_BALANCE (30000), not this shell's 9.",
    ]);
    // The CLI's own log level stays its own.
    expect(env).toEqual({ MAX_BALANCE: '30000', LOG_LEVEL: 'DEBUG', PARTNER: 'paystack' });
  });

  it("sets what the shell lacks silently, and names a partner that is not the service's", () => {
    const env: NodeJS.ProcessEnv = {};
    expect(useServiceSettings(env, record)).toEqual([
      "The running service's partner is paystack, this shell's sandbox: give this command the service's PARTNER (and its PAYSTACK_* settings).",
    ]);
    expect(env.MAX_BALANCE).toBe('30000');
  });

  it('records only the settings a deploy may give, and never LOG_LEVEL', () => {
    expect(
      settingsOf({ MAX_BALANCE: '1', LOG_LEVEL: 'DEBUG', PORT: '3000', TRANSFER_FEE_TIERS: '[]' }),
    ).toEqual({
      MAX_BALANCE: '1',
      TRANSFER_FEE_TIERS: '[]',
    });
  });
});
