import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type AccountNumberOwner, claimAccountNumberItem } from '#shared/accounts/account-numbers.ts';
import { dynamo } from '#shared/aws/clients.ts';
import { retryingConflicts } from '#shared/aws/transactions.ts';
import { type IssuedAccount, issueAccount } from '#shared/partner/client.ts';

/** Numbers asked of the partner before giving up on finding one the service has not used. */
const ISSUE_ATTEMPTS = 3;

type TransactItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

/**
 * Opens something that gets its own account number from the partner bank (a wallet, a virtual
 * account): `open` builds the owner's item for an issued number, and one transaction claims the
 * number for it and writes the item, so a number is never used twice. A number the service had
 * already used is replaced by a new one; a failure of the item's own condition is the caller's to
 * handle (the error is rethrown as DynamoDB gave it: claim first, item second).
 */
export async function openWithIssuedNumber<T>(
  kind: AccountNumberOwner['kind'],
  name: string,
  open: (issued: IssuedAccount) => {
    owner: Omit<AccountNumberOwner, 'account_number' | 'kind'>;
    item: TransactItem;
    result: T;
  },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const issued = await issueAccount(kind, name);
    const { owner, item, result } = open(issued);
    try {
      await retryingConflicts(() =>
        dynamo.send(
          new TransactWriteCommand({
            TransactItems: [
              claimAccountNumberItem({ ...owner, account_number: issued.account_number, kind }),
              item,
            ],
          }),
        ),
      );
      return result;
    } catch (error) {
      const [claim, own] =
        error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
      const numberTaken = claim?.Code === 'ConditionalCheckFailed' && own?.Code !== 'ConditionalCheckFailed';
      if (!numberTaken || attempt >= ISSUE_ATTEMPTS) throw error;
    }
  }
}
