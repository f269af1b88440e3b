import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { aDashboardUser } from '#test/support/dashboard.ts';
import { startTestGateway } from '#test/support/gateway.ts';
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
    const [, payload = ''] = user.idToken.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    expect(claims['custom:merchant_id']).toBe(merchant.merchant_id);
    expect(claims.token_use).toBe('id');
    expect(claims.email).toBe(user.email);
  });
});
