import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ResolvedAccount } from '#shared/accounts/resolve.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { wroteOnce } from '#shared/aws/written-once.ts';
import { ApiError } from '#shared/errors.ts';
import { newId } from '#shared/ids.ts';

/** How long a validation's `session_id` stands in for the account (API.md §4). */
export const SESSION_TTL_MS = 30 * 60 * 1000;

export class SessionExpired extends ApiError {
  constructor() {
    super('session_expired', 'session_id is unknown or has expired; validate the account again');
  }
}

interface SessionItem extends ResolvedAccount {
  session_id: string;
  merchant_id: string;
  expires_at: string;
  ttl: number;
}

/** Stores a validated account for 30 minutes, for this merchant only; returns its `session_id`. */
export async function createSession(
  merchantId: string,
  account: ResolvedAccount,
  now = Date.now(),
): Promise<string> {
  const expires = now + SESSION_TTL_MS;
  const item: SessionItem = {
    ...account,
    session_id: newId('ses', 16),
    merchant_id: merchantId,
    expires_at: new Date(expires).toISOString(),
    ttl: Math.ceil(expires / 1000),
  };
  const stored = await wroteOnce(
    () =>
      dynamo.send(
        new PutCommand({
          TableName: tableName('accountSessions'),
          Item: item,
          ConditionExpression: 'attribute_not_exists(session_id)',
        }),
      ),
    // The SDK's retry of this put, its answer lost: the session is there, this merchant's, this expiry.
    async () => {
      const { Item } = await dynamo.send(
        new GetCommand({
          TableName: tableName('accountSessions'),
          Key: { session_id: item.session_id },
          ConsistentRead: true,
        }),
      );
      return Item?.merchant_id === merchantId && Item.expires_at === item.expires_at;
    },
  );
  if (!stored) throw new Error('a new account session id collided with a stored one');
  return item.session_id;
}

/**
 * The account a merchant validated under `sessionId`. Another merchant's session, an unknown one
 * and an expired one (TTL deletion can lag by hours) are all `SessionExpired`.
 */
export async function accountOfSession(
  merchantId: string,
  sessionId: string,
  now = Date.now(),
): Promise<ResolvedAccount> {
  // Consistent: a session is used right after `validate-account` made it, which an eventually
  // consistent read on AWS may not see yet (a spurious `session_expired`).
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('accountSessions'),
      Key: { session_id: sessionId },
      ConsistentRead: true,
    }),
  );
  const session = Item as SessionItem | undefined;
  if (!session || session.merchant_id !== merchantId || Date.parse(session.expires_at) <= now) {
    throw new SessionExpired();
  }
  return { account_name: session.account_name, account_number: session.account_number, bank: session.bank };
}
