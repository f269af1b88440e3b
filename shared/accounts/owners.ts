import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryPage } from '#shared/aws/query.ts';
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
  /** When the partner closes the account, if it does (Paystack's Pay with Transfer). */
  expires_at?: string;
  /** Set on the items of ids that are not exclusive: one item per account that carries the id. */
  alias?: boolean;
  /** On alias items, the id they carry (`<partner>:<alias id>`), which the `by-alias` index reads. */
  alias_key?: string;
}

/** The closing time of an account that never closes, in the `by-alias` index's sort order. */
const NEVER_CLOSES = '9999-12-31T23:59:59.999Z';

/** The key of one partner's account id. */
export function accountKey(partner: PartnerName, accountId: string): string {
  return `${partner}:${accountId}`;
}

/**
 * Transaction items that claim an issued account's ids for its owner. Each claim fails if the id
 * was ever claimed before, so no account id is used twice. An alias id gets an item of its own for
 * this account (keyed by the id, the merchant and the reference), written unconditionally: the
 * accounts that share it are all found again (`ownersOfAlias`), none overwrites another.
 */
export function ownerItems(
  partner: PartnerName,
  issued: IssuedAccount,
  owner: Pick<AccountOwner, 'kind' | 'merchant_id' | 'reference' | 'created_at'>,
) {
  const base = {
    ...owner,
    partner,
    account_number: issued.account_number,
    ...(issued.expires_at ? { expires_at: issued.expires_at } : {}),
  };
  return [
    ...issued.account_ids.map((id) => ({
      Put: {
        TableName: tableName('accountOwners'),
        Item: { ...base, account_key: accountKey(partner, id) } satisfies AccountOwner,
        ConditionExpression: 'attribute_not_exists(account_key)',
      },
    })),
    ...(issued.alias_ids ?? []).map((id) => ({
      Put: {
        TableName: tableName('accountOwners'),
        Item: {
          ...base,
          account_key: `${accountKey(partner, id)}#${owner.merchant_id}#${owner.reference ?? owner.kind}`,
          alias: true,
          alias_key: accountKey(partner, id),
          // In toISOString's form, so the index sorts it with the times it is compared with.
          expires_at: issued.expires_at ? new Date(issued.expires_at).toISOString() : NEVER_CLOSES,
        } satisfies AccountOwner,
      },
    })),
  ];
}

/**
 * The owners of the accounts carrying a partner's alias id (a customer's email) that were open at
 * some time between `from` and `to` (ISO 8601): opened by `to`, closing at `from` or later. Up to
 * `max`, and whether there are more. Read from the `by-alias` index, which trails writes by
 * moments; an account is paid into long after it is opened.
 */
export async function ownersOfAlias(
  partner: PartnerName,
  aliasId: string,
  { from, to }: { from: string; to: string },
  max: number,
): Promise<{ owners: AccountOwner[]; more: boolean }> {
  const { items, more } = await queryPage<AccountOwner>(
    {
      TableName: tableName('accountOwners'),
      IndexName: 'by-alias',
      KeyConditionExpression: 'alias_key = :alias AND expires_at >= :from',
      FilterExpression: 'created_at <= :to',
      ExpressionAttributeValues: { ':alias': accountKey(partner, aliasId), ':from': from, ':to': to },
    },
    max,
    // All of them, as few as they are: a page cut short would read as "more than `max`".
    { maxReads: Number.POSITIVE_INFINITY },
  );
  return { owners: items, more };
}

/**
 * Owners already looked up by this container. A claimed id never changes owner, so a found owner
 * is good forever; an id not found is asked again (it may be issued in the meantime). Items of
 * the alias layout before `by-alias` (one per email, its newest owner) are never cached.
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
