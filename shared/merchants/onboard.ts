import { AccountAlreadyIssued, openWithIssuedAccount } from '#shared/accounts/issue.ts';
import { createKey, type KeyRegistry } from '#shared/api-keys/lifecycle.ts';
import type { ApiKeyRecord } from '#shared/api-keys/store.ts';
import { tableName } from '#shared/aws/clients.ts';
import { newId, nowIso } from '#shared/ids.ts';
import type { Merchant } from '#shared/merchants/store.ts';
import { partner } from '#shared/partners/registry.ts';

/** How to reach a merchant, for a partner that needs it to issue the wallet (`WalletOrder`). */
export interface Contact {
  email?: string;
  phone?: string;
}

/**
 * Creates a merchant with a wallet account issued by the partner bank, at balance 0. The account's
 * ids are claimed in `account-owners` in the same transaction, so none is ever used twice.
 */
export async function createMerchant(name: string, contact: Contact = {}): Promise<Merchant> {
  const merchantId = newId('mer');
  return openWithIssuedAccount(
    'wallet',
    (bank) => bank.issueWallet({ merchant_id: merchantId, name, ...contact }),
    (issued) => {
      const now = nowIso();
      const merchant: Merchant = {
        merchant_id: merchantId,
        name,
        partner: partner().name,
        account_number: issued.account_number,
        account_name: issued.account_name,
        bank_code: issued.bank_code,
        balance: 0,
        version: 0,
        created_at: now,
        updated_at: now,
      };
      return {
        owner: { merchant_id: merchantId, created_at: now },
        item: {
          Put: {
            TableName: tableName('merchants'),
            Item: merchant,
            ConditionExpression: 'attribute_not_exists(merchant_id)',
          },
        },
        result: merchant,
      };
    },
  ).catch((error: unknown) => {
    // Paystack keeps one customer, and one dedicated account, per email.
    if (error instanceof AccountAlreadyIssued && contact.email) {
      throw new AccountAlreadyIssued(error.issued, error.owner, {
        hint: `the partner issues one wallet per customer email, and ${contact.email} is another merchant's: give this merchant an email of its own`,
      });
    }
    throw error;
  });
}

export interface KeyOptions {
  allowedIps?: string[];
  expiresAt?: string;
}

/**
 * A new merchant with its wallet and a first key pair; the secret is returned once. The contact
 * email and phone are what a partner may need for the wallet (Paystack's customer); without an
 * email, a synthetic one.
 * The key is made as every new key is (`createKey`): in `registry` (the usage plan on AWS) before it is stored.
 */
export async function onboardMerchant(
  name: string,
  keyOptions: KeyOptions = {},
  contact: Contact = {},
  registry?: KeyRegistry,
): Promise<{ merchant: Merchant; key: ApiKeyRecord; apiSecret: string }> {
  const merchant = await createMerchant(name, contact);
  const { record, apiSecret } = await createKey(merchant.merchant_id, keyOptions, registry).catch(
    (error: unknown) => {
      throw new KeylessMerchant(merchant, error);
    },
  );
  return { merchant, key: record, apiSecret };
}

/** The merchant and its wallet were made, its first key was not (`cause` says why): make one alone. */
export class KeylessMerchant extends Error {
  constructor(
    readonly merchant: Merchant,
    cause: unknown,
  ) {
    super(
      `Merchant ${merchant.merchant_id} was created, but not its first key: ${(cause as Error).message}`,
      {
        cause,
      },
    );
    this.name = 'KeylessMerchant';
  }
}
