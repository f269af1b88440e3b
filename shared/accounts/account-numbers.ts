import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';

/** Who an issued account number belongs to: a merchant's wallet, or one of its virtual accounts. */
export interface AccountNumberOwner {
  account_number: string;
  kind: 'wallet' | 'virtual_account';
  merchant_id: string;
  reference?: string;
  created_at: string;
}

/**
 * A transaction item that claims an account number for its owner; it fails if the number was ever
 * claimed before, so no number is issued twice.
 */
export function claimAccountNumberItem(owner: AccountNumberOwner) {
  return {
    Put: {
      TableName: tableName('accountNumbers'),
      Item: owner,
      ConditionExpression: 'attribute_not_exists(account_number)',
    },
  };
}

/**
 * Owners already looked up by this container. An issued number never changes owner, so a found
 * owner is good forever; a number not found is asked again (it may be issued in the meantime).
 */
const knownOwners = new Map<string, AccountNumberOwner>();
const MAX_KNOWN_OWNERS = 50_000;

/** The owner of an account number the service issued, or undefined. */
export async function ownerOf(accountNumber: string): Promise<AccountNumberOwner | undefined> {
  const known = knownOwners.get(accountNumber);
  if (known) return known;
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('accountNumbers'),
      Key: { account_number: accountNumber },
      ConsistentRead: true,
    }),
  );
  const owner = Item as AccountNumberOwner | undefined;
  if (owner) {
    if (knownOwners.size >= MAX_KNOWN_OWNERS) knownOwners.clear();
    knownOwners.set(accountNumber, owner);
  }
  return owner;
}
