import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type AccountOwner, ownerItems, ownerOf } from '#shared/accounts/owners.ts';
import { dynamo } from '#shared/aws/clients.ts';
import { retryingConflicts } from '#shared/aws/transactions.ts';
import type { IssuedAccount } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';

/** Accounts asked of the partner before giving up on finding one the service has not used. */
const ISSUE_ATTEMPTS = 3;

type TransactItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

/**
 * The partner issued, every time it was asked, an account whose ids are another owner's already (a
 * partner that keeps one account per customer, asked again for the same customer): nothing opened.
 */
export class AccountAlreadyIssued extends Error {
  constructor(
    readonly issued: IssuedAccount,
    readonly owner: AccountOwner | undefined,
    { hint }: { hint?: string } = {},
  ) {
    const whose = owner ? ` (${owner.kind} of ${owner.merchant_id})` : '';
    super(
      `the partner issued account ${issued.account_number}, which is another's already${whose}, ${ISSUE_ATTEMPTS} times: nothing opened${hint ? `; ${hint}` : ''}`,
    );
    this.name = 'AccountAlreadyIssued';
  }
}

/**
 * Opens something that gets its own account from the partner bank (a wallet, a virtual account):
 * `issue` asks the partner, `open` builds the owner's item for the issued account, and one
 * transaction claims the account's ids for it and writes the item, so an id is never used twice.
 * An account whose id the service had already used is replaced by a new one (`AccountAlreadyIssued`
 * after `ISSUE_ATTEMPTS`); a failure of the item's own condition is the caller's to handle (the error
 * is rethrown as DynamoDB gave it: the claims first, the item last).
 */
export async function openWithIssuedAccount<T>(
  kind: AccountOwner['kind'],
  issue: (bank: ReturnType<typeof partner>) => Promise<IssuedAccount>,
  open: (issued: IssuedAccount) => {
    owner: Pick<AccountOwner, 'merchant_id' | 'reference' | 'created_at'>;
    item: TransactItem;
    result: T;
  },
): Promise<T> {
  const bank = partner();
  for (let attempt = 1; ; attempt++) {
    const issued = await issue(bank);
    const { owner, item, result } = open(issued);
    const claims = ownerItems(bank.name, issued, { ...owner, kind });
    try {
      await retryingConflicts(() =>
        dynamo.send(new TransactWriteCommand({ TransactItems: [...claims, item] })),
      );
      return result;
    } catch (error) {
      const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
      const failed = (i: number) => reasons[i]?.Code === 'ConditionalCheckFailed';
      const idTaken = issued.account_ids.some((_, i) => failed(i)) && !failed(claims.length);
      if (!idTaken) throw error;
      if (attempt >= ISSUE_ATTEMPTS)
        throw new AccountAlreadyIssued(issued, await ownerOf(bank.name, issued.account_ids));
    }
  }
}
