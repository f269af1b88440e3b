import { describe, expect, it } from 'vitest';
import { withoutSecrets } from '#shared/http/stack.ts';

describe('a path as logged', () => {
  it('loses a secret put in it, to its end, whatever comes before it or within it', () => {
    expect(withoutSecrets('/transactions/sk_live7fa9')).toBe('/transactions/sk_[redacted]');
    // A webhook secret is base64: a `/` within it ends nothing.
    expect(withoutSecrets('/events/whsec_ab/cd+ef=')).toBe('/events/whsec_[redacted]');
    // A pasted space, or an underscore, before it.
    expect(withoutSecrets('/transactions/%20sk_live7fa9')).toBe('/transactions/%20sk_[redacted]');
    expect(withoutSecrets('/transactions/x_sk_live7fa9')).toBe('/transactions/x_sk_[redacted]');
    expect(withoutSecrets('/transactions/sk_live\n7fa9')).toBe('/transactions/sk_[redacted]');
  });

  it('keeps references that only end in sk or whsec', () => {
    for (const path of ['/transactions/task_1', '/payments/risk_2', '/transactions/desk_3', undefined])
      expect(withoutSecrets(path)).toBe(path);
  });
});
