import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { openWithIssuedAccount } from '#shared/accounts/issue.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { newId, nowIso } from '#shared/ids.ts';
import type { PartnerName } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';

/** A merchant and its wallet. `balance` (kobo) and `version` are written only by the ledger. */
export interface Merchant {
  merchant_id: string;
  name: string;
  /** The partner that issued the wallet. */
  partner: PartnerName;
  account_number: string;
  account_name: string;
  bank_code: string;
  balance: number;
  version: number;
  created_at: string;
  updated_at: string;
}

/**
 * Creates a merchant with a wallet account issued by the partner bank, at balance 0. The account's
 * ids are claimed in `account-owners` in the same transaction, so none is ever used twice.
 */
export function createMerchant(name: string, options: { email?: string } = {}): Promise<Merchant> {
  const merchantId = newId('mer');
  return openWithIssuedAccount(
    'wallet',
    (bank) => bank.issueWallet({ merchant_id: merchantId, name, email: options.email }),
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
  );
}

export async function getMerchant(merchantId: string): Promise<Merchant | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: tableName('merchants'), Key: { merchant_id: merchantId } }),
  );
  return Item as Merchant | undefined;
}
