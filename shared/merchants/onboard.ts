import { type ApiKeyRecord, createApiKey } from '#shared/api-keys/store.ts';
import { createMerchant, type Merchant } from '#shared/merchants/store.ts';

export interface KeyOptions {
  allowedIps?: string[];
  expiresAt?: string;
}

/** A new merchant with its wallet and a first key pair; the secret is returned once. */
export async function onboardMerchant(
  name: string,
  keyOptions: KeyOptions = {},
): Promise<{ merchant: Merchant; key: ApiKeyRecord; apiSecret: string }> {
  const merchant = await createMerchant(name);
  const { record, apiSecret } = await createApiKey(merchant.merchant_id, keyOptions);
  return { merchant, key: record, apiSecret };
}
