import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { openWithIssuedNumber } from '#shared/accounts/issue.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { newId, nowIso } from '#shared/ids.ts';

/** A merchant and its wallet. `balance` (kobo) and `version` are written only by the ledger. */
export interface Merchant {
  merchant_id: string;
  name: string;
  account_number: string;
  account_name: string;
  bank_code: string;
  balance: number;
  version: number;
  created_at: string;
  updated_at: string;
}

/**
 * Creates a merchant with a wallet account number issued by the partner bank, at balance 0. The
 * number is claimed in `account-numbers` in the same transaction, so it is never used twice.
 */
export function createMerchant(name: string): Promise<Merchant> {
  return openWithIssuedNumber('wallet', name, (issued) => {
    const now = nowIso();
    const merchant: Merchant = {
      merchant_id: newId('mer'),
      name,
      account_number: issued.account_number,
      account_name: issued.account_name,
      bank_code: issued.bank_code,
      balance: 0,
      version: 0,
      created_at: now,
      updated_at: now,
    };
    return {
      owner: { merchant_id: merchant.merchant_id, created_at: now },
      item: {
        Put: {
          TableName: tableName('merchants'),
          Item: merchant,
          ConditionExpression: 'attribute_not_exists(merchant_id)',
        },
      },
      result: merchant,
    };
  });
}

export async function getMerchant(merchantId: string): Promise<Merchant | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: tableName('merchants'), Key: { merchant_id: merchantId } }),
  );
  return Item as Merchant | undefined;
}
