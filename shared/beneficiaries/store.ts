import { randomBytes } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { ResolvedAccount } from '#shared/accounts/resolve.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryPage } from '#shared/aws/query.ts';
import { retryingConflicts } from '#shared/aws/transactions.ts';
import { ApiError, ValidationError } from '#shared/errors.ts';
import { decodeCursor, encodeCursor, ownList } from '#shared/pagination.ts';

export class BeneficiaryNotFound extends ApiError {
  constructor() {
    super('beneficiary_not_found', 'beneficiary_id does not name a beneficiary of yours');
  }
}

/** A beneficiary as the API shows it. */
export interface Beneficiary extends ResolvedAccount {
  id: string;
  nickname: string | null;
  created_at: string;
}

interface BeneficiaryItem extends Beneficiary {
  merchant_id: string;
  sk: string;
}

const BENEFICIARY = 'ben#';
const ACCOUNT_GUARD = 'acct#';

/** Time-ordered ids: the list's sort order is the ids' order. */
function newBeneficiaryId(now: number): string {
  return `ben_${now.toString(16).padStart(12, '0')}${randomBytes(8).toString('hex')}`;
}

/** The API's beneficiary, its fields in one order however DynamoDB returned the item's. */
const strip = (item: BeneficiaryItem): Beneficiary => ({
  id: item.id,
  account_name: item.account_name,
  account_number: item.account_number,
  bank: { code: item.bank.code, name: item.bank.name },
  nickname: item.nickname,
  created_at: item.created_at,
});

/**
 * Saves a validated bank account as a beneficiary. One beneficiary per bank account and merchant:
 * saving the same account again returns the existing one (`created: false`), as a guard item
 * claimed in the same transaction makes sure even under concurrent saves.
 */
export async function saveBeneficiary(
  merchantId: string,
  account: ResolvedAccount,
  nickname: string | null,
): Promise<{ beneficiary: Beneficiary; created: boolean }> {
  const now = Date.now();
  const id = newBeneficiaryId(now);
  const guardKey = `${ACCOUNT_GUARD}${account.bank.code}:${account.account_number}`;
  const item: BeneficiaryItem = {
    merchant_id: merchantId,
    sk: `${BENEFICIARY}${id}`,
    id,
    account_name: account.account_name,
    account_number: account.account_number,
    bank: account.bank,
    nickname,
    created_at: new Date(now).toISOString(),
  };
  try {
    await retryingConflicts(() =>
      dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName('beneficiaries'),
                Item: { merchant_id: merchantId, sk: guardKey, beneficiary_id: id },
                ConditionExpression: 'attribute_not_exists(sk)',
              },
            },
            { Put: { TableName: tableName('beneficiaries'), Item: item } },
          ],
        }),
      ),
    );
    return { beneficiary: strip(item), created: true };
  } catch (error) {
    const taken =
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
    if (!taken) throw error;
    const existing = await savedBeneficiary(merchantId, account.bank.code, account.account_number);
    if (!existing) throw error;
    return { beneficiary: existing, created: false };
  }
}

/** The merchant's beneficiary for this bank account, if it saved one (read through its guard item). */
export async function savedBeneficiary(
  merchantId: string,
  bankCode: string,
  accountNumber: string,
): Promise<Beneficiary | undefined> {
  const { Item: guard } = await dynamo.send(
    new GetCommand({
      TableName: tableName('beneficiaries'),
      Key: { merchant_id: merchantId, sk: `${ACCOUNT_GUARD}${bankCode}:${accountNumber}` },
      ConsistentRead: true,
    }),
  );
  return guard ? getBeneficiary(merchantId, String(guard.beneficiary_id)) : undefined;
}

/** One of this merchant's beneficiaries, or undefined (another merchant's id is not found). */
export async function getBeneficiary(merchantId: string, id: string): Promise<Beneficiary | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('beneficiaries'),
      Key: { merchant_id: merchantId, sk: `${BENEFICIARY}${id}` },
      ConsistentRead: true,
    }),
  );
  return Item ? strip(Item as BeneficiaryItem) : undefined;
}

/** A merchant's beneficiaries, newest first, one page at a time. */
export async function listBeneficiaries(merchantId: string, page: { limit: number; cursor?: string }) {
  const list = ownList('beneficiaries', merchantId);
  const position = decodeCursor(page.cursor, list, ['sk']);
  if (position && !position.sk?.startsWith(BENEFICIARY)) {
    throw new ValidationError([{ field: 'query.cursor', message: 'Not a valid cursor' }]);
  }
  const { items, after } = await queryPage<BeneficiaryItem>(
    {
      TableName: tableName('beneficiaries'),
      KeyConditionExpression: 'merchant_id = :m AND begins_with(sk, :ben)',
      ExpressionAttributeValues: { ':m': merchantId, ':ben': BENEFICIARY },
      // A list right after a POST shows what it saved.
      ConsistentRead: true,
      ScanIndexForward: false,
      ExclusiveStartKey: position && { merchant_id: merchantId, ...position },
    },
    page.limit,
  );
  return {
    items: items.map(strip),
    nextCursor: after ? encodeCursor(list, { sk: after.sk }) : null,
  };
}
