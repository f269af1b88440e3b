import { tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import { scanAll } from '#shared/aws/scan.ts';
import { entriesOf } from '#shared/ledger/audit.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { paymentsKey } from '#shared/payments/virtual-accounts.ts';

type Item = Record<string, unknown>;

const byMerchant = (table: Parameters<typeof tableName>[0], merchantId: string) =>
  queryAll<Item>({
    TableName: tableName(table),
    KeyConditionExpression: 'merchant_id = :m',
    ExpressionAttributeValues: { ':m': merchantId },
    ConsistentRead: true,
  });

/** Every validation session of a merchant (the table is keyed by session id: a filtered scan). */
async function sessionsOf(merchantId: string): Promise<Item[]> {
  const items = await scanAll<Item>({
    TableName: tableName('accountSessions'),
    FilterExpression: 'merchant_id = :m',
    ExpressionAttributeValues: { ':m': merchantId },
    ConsistentRead: true,
  });
  return items.sort((a, b) => String(a.session_id).localeCompare(String(b.session_id)));
}

/**
 * Everything the service keeps for a merchant, read consistently: the wallet item, its ledger
 * entries, transactions, beneficiaries, virtual accounts with their payments, and validation
 * sessions. Two snapshots are equal when no request changed any of it.
 */
export async function merchantState(merchantId: string) {
  const [merchant, entries, transactions, beneficiaries, virtualAccounts, sessions] = await Promise.all([
    getMerchant(merchantId),
    entriesOf(merchantId),
    byMerchant('transactions', merchantId),
    byMerchant('beneficiaries', merchantId),
    byMerchant('virtualAccounts', merchantId),
    sessionsOf(merchantId),
  ]);
  const payments = await Promise.all(
    virtualAccounts.map((account) =>
      queryAll<Item>({
        TableName: tableName('payments'),
        KeyConditionExpression: 'virtual_account = :va',
        ExpressionAttributeValues: { ':va': paymentsKey(merchantId, String(account.reference)) },
        ConsistentRead: true,
      }),
    ),
  );
  return { merchant, entries, transactions, beneficiaries, virtualAccounts, payments, sessions };
}
