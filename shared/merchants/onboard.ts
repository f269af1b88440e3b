import { type ApiKeyRecord, createApiKey } from '#shared/api-keys/store.ts';
import { createMerchant, type Merchant } from '#shared/merchants/store.ts';

export interface KeyOptions {
  allowedIps?: string[];
  expiresAt?: string;
}

/**
 * A new merchant with its wallet and a first key pair; the secret is returned once. The contact
 * email is the one a partner may need for the wallet (Paystack's customer), else a synthetic one.
 */
export async function onboardMerchant(
  name: string,
  keyOptions: KeyOptions = {},
  contact: { email?: string } = {},
): Promise<{ merchant: Merchant; key: ApiKeyRecord; apiSecret: string }> {
  const merchant = await createMerchant(name, contact);
  const { record, apiSecret } = await createApiKey(merchant.merchant_id, keyOptions);
  return { merchant, key: record, apiSecret };
}
