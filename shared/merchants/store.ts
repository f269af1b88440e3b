import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import type { PartnerName } from '#shared/partners/partner.ts';

/*
 * Reading merchants. Creating one (which needs the partner that issues the wallet) is in
 * `onboard.ts`, so that what only reads a merchant does not load the partners.
 */

/**
 * A merchant and its wallet. `balance` (kobo), `version` and `last_entry_at` are written only by
 * the ledger.
 */
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
  /** `created_at` of the wallet's last ledger entry (absent before the first). */
  last_entry_at?: string;
  created_at: string;
  updated_at: string;
}

/**
 * A merchant as last written: consistent, so a balance read right after a transfer or a credit
 * shows it (an eventually consistent read on AWS may not yet).
 */
export async function getMerchant(merchantId: string): Promise<Merchant | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('merchants'),
      Key: { merchant_id: merchantId },
      ConsistentRead: true,
    }),
  );
  return Item as Merchant | undefined;
}
