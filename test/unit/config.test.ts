import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';

describe('config', () => {
  it('has local defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.tablePrefix).toBe('naira-local-');
    expect(config.partner).toEqual({
      name: 'sandbox',
      baseUrl: 'http://127.0.0.1:3100',
      timeoutMs: 5000,
      bankCode: '101',
    });
    expect(config.requery).toEqual({ afterSeconds: 60, intervalSeconds: 60, alertHours: 24 });
    expect(config.apiKeyPepper).toBeUndefined();
    expect(config.dynamoEndpoint).toBeUndefined();
  });

  it('reads and converts values from the environment', () => {
    const config = loadConfig({
      PARTNER_TIMEOUT_MS: '750',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      PORT: '4000',
    });
    expect(config.partner.timeoutMs).toBe(750);
    expect(config.dynamoEndpoint).toBe('http://127.0.0.1:8000');
    expect(config.port).toBe(4000);
  });

  it('fails at load with every invalid variable named', () => {
    expect(() => loadConfig({ PARTNER_TIMEOUT_MS: 'soon', DYNAMODB_ENDPOINT: 'not a url' })).toThrow(
      /PARTNER_TIMEOUT_MS.*DYNAMODB_ENDPOINT|DYNAMODB_ENDPOINT.*PARTNER_TIMEOUT_MS/,
    );
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT/);
    expect(() => loadConfig({ API_KEY_PEPPER: 'short' })).toThrow(/API_KEY_PEPPER/);
    expect(() => loadConfig({ AUTH_CACHE_SECONDS: '61' })).toThrow(/AUTH_CACHE_SECONDS/);
    // A requery round must have time to resend (test/integration/requery.test.ts).
    expect(() => loadConfig({ PARTNER_TIMEOUT_MS: '7501' })).toThrow(/PARTNER_TIMEOUT_MS/);
    expect(loadConfig({ PARTNER_TIMEOUT_MS: '7500' }).partner.timeoutMs).toBe(7_500);
  });
});
