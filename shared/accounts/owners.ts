import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import type { IssuedAccount, PartnerName } from '#shared/partners/partner.ts';

/** Who an account a partner issued belongs to: a merchant's wallet, or one of its virtual accounts. */
export interface AccountOwner {
  /** `<partner>:<account id>`: partner ids never collide. */
  account_key: string;
  partner: PartnerName;
  kind: 'wallet' | 'virtual_account';
  merchant_id: string;
  /** The virtual account's reference. */
  reference?: string;
  account_number: string;
  created_at: string;
  /** Set on items of ids that are not exclusive: the newest owner wins. */
  alias?: boolean;
}

/** The key of one partner's account id. */
export function accountKey(partner: PartnerName, accountId: string): string {
  return `${partner}:${accountId}`;
}

/**
 * Transaction items that claim an issued account's ids for its owner. Each claim fails if the id
 * was ever claimed before, so no account id is used twice; alias ids are written unconditionally.
 */
export function ownerItems(
  partner: PartnerName,
  issued: IssuedAccount,
  owner: Pick<AccountOwner, 'kind' | 'merchant_id' | 'reference' | 'created_at'>,
) {
  const item = (accountId: string, alias: boolean): AccountOwner => ({
    ...owner,
    account_key: accountKey(partner, accountId),
    partner,
    account_number: issued.account_number,
    ...(alias ? { alias } : {}),
  });
  return [
    ...issued.account_ids.map((id) => ({
      Put: {
        TableName: tableName('accountOwners'),
        Item: item(id, false),
        ConditionExpression: 'attribute_not_exists(account_key)',
      },
    })),
    ...(issued.alias_ids ?? []).map((id) => ({
      Put: { TableName: tableName('accountOwners'), Item: item(id, true) },
    })),
  ];
}

/**
 * Owners already looked up by this container. A claimed id never changes owner, so a found owner
 * is good forever; an id not found is asked again (it may be issued in the meantime), and alias
 * ids are never cached (their owner changes).
 */
const knownOwners = new Map<string, AccountOwner>();
const MAX_KNOWN_OWNERS = 50_000;

async function ownerOfKey(key: string): Promise<AccountOwner | undefined> {
  const known = knownOwners.get(key);
  if (known) return known;
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('accountOwners'),
      Key: { account_key: key },
      ConsistentRead: true,
    }),
  );
  const owner = Item as AccountOwner | undefined;
  if (owner && !owner.alias) {
    if (knownOwners.size >= MAX_KNOWN_OWNERS) knownOwners.clear();
    knownOwners.set(key, owner);
  }
  return owner;
}

/** The owner of the first of a partner's account ids that the service issued, or undefined. */
export async function ownerOf(
  partner: PartnerName,
  accountIds: readonly string[],
): Promise<AccountOwner | undefined> {
  for (const id of accountIds) {
    const owner = await ownerOfKey(accountKey(partner, id));
    if (owner) return owner;
  }
  return undefined;
}
