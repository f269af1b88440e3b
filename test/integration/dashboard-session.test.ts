import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { aDashboardUser, claimsOf } from '#test/support/dashboard.ts';
import { call, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';

describe('dashboard users in the local Cognito', () => {
  let gateway: LocalGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('signs a user in with an ID token naming the merchant, which the gateway verifies', async () => {
    const { merchant } = await aMerchant();
    const user = await aDashboardUser(merchant.merchant_id);
    const claims = claimsOf(user.idToken);
    expect(claims['custom:merchant_id']).toBe(merchant.merchant_id);
    expect(claims.token_use).toBe('id');
    expect(claims.email).toBe(user.email);
  });

  it('refuses an ID token past its exp, as the Cognito authorizer does on AWS', async () => {
    const { merchant } = await aMerchant();
    const user = await aDashboardUser(merchant.merchant_id);
    const keys = () => call(gateway, 'GET', '/api/v1/dashboard/keys', { headers: user.headers });
    expect((await keys()).status).toBe(200);
    // The gateway runs in this process: its clock, an hour and a minute on.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61 * 60_000 });
    try {
      const late = await keys();
      expect([late.status, late.body]).toEqual([
        401,
        { status: 'error', message: 'Invalid API credentials' },
      ]);
    } finally {
      vi.useRealTimers();
    }
    expect((await keys()).status).toBe(200);
  });
});
