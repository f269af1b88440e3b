import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { claimAccountNumberItem } from '#shared/accounts/account-numbers.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { retryingConflicts } from '#shared/aws/transactions.ts';
import { newId, nowIso } from '#shared/ids.ts';
import { issueAccount } from '#shared/partner/client.ts';

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

/** Attempts at getting an account number the service has not used before. */
const ISSUE_ATTEMPTS = 3;

/**
 * Creates a merchant with a wallet account number issued by the partner bank, at balance 0. The
 * number is claimed in `account-numbers` in the same transaction, so it is never used twice.
 */
export async function createMerchant(name: string): Promise<Merchant> {
  for (let attempt = 1; ; attempt++) {
    const issued = await issueAccount('wallet', name);
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
    try {
      await retryingConflicts(() =>
        dynamo.send(
          new TransactWriteCommand({
            TransactItems: [
              claimAccountNumberItem({
                account_number: merchant.account_number,
                kind: 'wallet',
                merchant_id: merchant.merchant_id,
                created_at: now,
              }),
              {
                Put: {
                  TableName: tableName('merchants'),
                  Item: merchant,
                  ConditionExpression: 'attribute_not_exists(merchant_id)',
                },
              },
            ],
          }),
        ),
      );
      return merchant;
    } catch (error) {
      const numberTaken =
        error instanceof TransactionCanceledException &&
        error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
      if (!numberTaken || attempt >= ISSUE_ATTEMPTS) throw error;
    }
  }
}

export async function getMerchant(merchantId: string): Promise<Merchant | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: tableName('merchants'), Key: { merchant_id: merchantId } }),
  );
  return Item as Merchant | undefined;
}
