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
    // API.md §8: retried after 5 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h, 24 h and 24 h.
    expect(config.merchantWebhooks.retrySchedule).toEqual([
      5, 60, 300, 1800, 7200, 21600, 43200, 86400, 86400, 86400,
    ]);
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

  it('refuses the bounds a deploy could otherwise get silently wrong, and keeps private webhook addresses off unless asked', () => {
    // On AWS nothing sets it: the default is what keeps merchants' webhooks off private addresses.
    expect(loadConfig({}).merchantWebhooks.allowPrivate).toBe(false);
    // An alert window of 0 or less would report every pending transfer as overdue at once.
    for (const hours of ['0', '-1']) {
      expect(() => loadConfig({ TRANSFER_REQUERY_ALERT_HOURS: hours })).toThrow(
        /TRANSFER_REQUERY_ALERT_HOURS/,
      );
    }
    // A requery every 0 s would ask the partner in a tight loop (locally, setInterval's 0).
    expect(() => loadConfig({ TRANSFER_REQUERY_INTERVAL_SECONDS: '0' })).toThrow(
      /TRANSFER_REQUERY_INTERVAL_SECONDS/,
    );
    // An empty step would be read as 0 s, a word as NaN: a retry at once, or never.
    for (const schedule of ['5,,60', '5,soon', '', '5, 60']) {
      expect(() => loadConfig({ MERCHANT_WEBHOOK_RETRY_SCHEDULE: schedule })).toThrow(
        /MERCHANT_WEBHOOK_RETRY_SCHEDULE/,
      );
    }
    expect(loadConfig({ MERCHANT_WEBHOOK_RETRY_SCHEDULE: '1,2,3' }).merchantWebhooks.retrySchedule).toEqual([
      1, 2, 3,
    ]);
    // The master key of merchants' webhook secrets, as the pepper's: at least 32 characters.
    expect(() => loadConfig({ MERCHANT_WEBHOOK_KEY: 'k'.repeat(31) })).toThrow(/MERCHANT_WEBHOOK_KEY/);
    expect(loadConfig({ MERCHANT_WEBHOOK_KEY: 'k'.repeat(32) }).merchantWebhooks.key).toBe('k'.repeat(32));
  });

  it('reads PAYSTACK_WEBHOOK_IPS as a list: empty (the default) is no list, so the address is not checked', () => {
    expect(loadConfig({}).paystack.webhookIps).toEqual([]);
    expect(loadConfig({ PAYSTACK_WEBHOOK_IPS: '' }).paystack.webhookIps).toEqual([]);
    expect(
      loadConfig({ PAYSTACK_WEBHOOK_IPS: ' 52.31.139.75, 52.49.173.169 ,' }).paystack.webhookIps,
    ).toEqual(['52.31.139.75', '52.49.173.169']);
  });
});
