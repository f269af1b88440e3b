import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { type AccountNumberOwner, ownerOf } from '#shared/accounts/account-numbers.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { credit, GroupNotApplied, type Posting, postAll } from '#shared/ledger/ledger.ts';
import { logger } from '#shared/logger.ts';
import { type Payment, paymentsKey } from '#shared/payments/virtual-accounts.ts';
import { putTransactionItem, transactionRecord } from '#shared/transactions/store.ts';
import { parsePartnerReference, settleTransfer } from '#shared/transfers/transfers.ts';
import type { PaymentReceived, QueuedEvent, TransferSettled } from '#shared/webhooks/events.ts';

/** The ledger entry id of a received payment: the partner's session id, permanent and global. */
export function paymentEntryId(sessionId: string): string {
  return `payment:${sessionId}`;
}

/** Keeps a payment nobody can be credited for, for operators; never credited, never dropped. */
async function keepUnmatched(event: QueuedEvent & PaymentReceived, reason: string): Promise<void> {
  logger.warn('payment kept as unmatched', { session_id: event.data.session_id, reason });
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName('unmatchedPayments'),
        Item: { session_id: event.data.session_id, reason, event, received_at: event.received_at },
        ConditionExpression: 'attribute_not_exists(session_id)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

function receivedAt(event: QueuedEvent & PaymentReceived): string {
  const paid = event.data.paid_at ? Date.parse(event.data.paid_at) : Number.NaN;
  return Number.isNaN(paid) ? event.received_at : new Date(paid).toISOString();
}

/** The ledger posting of a payment, its own companion writes, and the account total it adds to. */
function paymentPosting(event: QueuedEvent & PaymentReceived, owner: AccountNumberOwner) {
  const { data } = event;
  const payment: Payment = {
    session_id: data.session_id,
    amount: data.amount,
    sender_name: data.sender?.account_name ?? null,
    sender_account_number: data.sender?.account_number ?? null,
    sender_bank_code: data.sender?.bank_code ?? null,
    received_at: receivedAt(event),
  };
  const entryId = paymentEntryId(data.session_id);
  const virtualAccount = owner.kind === 'virtual_account' && owner.reference ? owner.reference : undefined;
  const posting: Omit<Posting, 'merchantId'> = {
    entryId,
    amount: data.amount,
    category: 'payment',
    reference: entryId,
    companions: (posted) => [
      putTransactionItem(
        transactionRecord(posted, {
          reference: entryId,
          amount: data.amount,
          fee: 0,
          status: 'success',
          narration: data.narration ?? null,
          counterparty: {
            account_name: payment.sender_name ?? '',
            account_number: payment.sender_account_number ?? '',
            bank_code: payment.sender_bank_code ?? '',
          },
        }),
      ),
      ...(virtualAccount
        ? [
            {
              Put: {
                TableName: tableName('payments'),
                Item: { virtual_account: paymentsKey(owner.merchant_id, virtualAccount), ...payment },
                ConditionExpression: 'attribute_not_exists(session_id)',
              },
            },
          ]
        : []),
    ],
  };
  return { posting, virtualAccount, amount: data.amount };
}

/** One write that adds payments to a virtual account's totals. */
function accountTotalItem(merchantId: string, reference: string, amount: number, count: number) {
  return {
    Update: {
      TableName: tableName('virtualAccounts'),
      Key: { merchant_id: merchantId, reference },
      UpdateExpression: 'ADD amount_received :amount, payment_count :count',
      ConditionExpression: 'attribute_exists(merchant_id)',
      ExpressionAttributeValues: { ':amount': amount, ':count': count },
    },
  };
}

export type PaymentOutcome = 'credited' | 'duplicate' | 'unmatched';

/**
 * Credits a received payment exactly once: one ledger transaction puts the entry keyed by the
 * partner's session id, the payment's transaction record, and (for a virtual account) the payment
 * and the account's new total. A redelivery finds the entry and changes nothing.
 */
export async function receivePayment(
  event: QueuedEvent & PaymentReceived,
  known?: AccountNumberOwner,
): Promise<PaymentOutcome> {
  const owner = known ?? (await ownerOf(event.data.account_number));
  if (!owner) {
    await keepUnmatched(event, 'unknown account number');
    return 'unmatched';
  }
  const { posting, virtualAccount, amount } = paymentPosting(event, owner);
  const { entry, applied } = await credit({
    ...posting,
    merchantId: owner.merchant_id,
    companions: (posted) => [
      ...(posting.companions?.(posted) ?? []),
      ...(virtualAccount ? [accountTotalItem(owner.merchant_id, virtualAccount, amount, 1)] : []),
    ],
  });
  if (applied) return 'credited';
  if (entry.merchant_id !== owner.merchant_id || entry.amount !== amount) {
    // The partner reused a session id for a different payment: never credit it as the first one.
    await keepUnmatched(event, `session id already credited with other details (${entry.entry_id})`);
    return 'unmatched';
  }
  return 'duplicate';
}

/** Payments credited per transaction at most when grouped (each is 3 writes; DynamoDB takes 100). */
const GROUP_LIMIT = 25;

/**
 * Credits a batch of payments, each exactly once, with one ledger transaction per merchant where
 * it can: a merchant's payments in the batch move its balance in one write instead of racing each
 * other for it. If a group cannot be applied whole (a redelivered payment among them), its payments
 * are credited one by one. Resolves with each event's outcome, or the error that stopped it.
 */
export async function receivePayments(
  events: readonly (QueuedEvent & PaymentReceived)[],
): Promise<PromiseSettledResult<PaymentOutcome>[]> {
  const owners = new Map<string, Promise<AccountNumberOwner | undefined>>();
  const ownerOfCached = (accountNumber: string) => {
    const known = owners.get(accountNumber);
    if (known) return known;
    const owner = ownerOf(accountNumber);
    owners.set(accountNumber, owner);
    return owner;
  };
  const results: PromiseSettledResult<PaymentOutcome>[] = new Array(events.length);
  const groups = new Map<string, { index: number; owner: AccountNumberOwner }[]>();
  const unknown: number[] = [];
  const repeats: { index: number; owner: AccountNumberOwner }[] = [];
  const seen = new Set<string>();
  await Promise.all(
    events.map(async (event, index) => {
      const owner = await ownerOfCached(event.data.account_number).catch(() => undefined);
      // Unknown accounts, and repeats of a session within the batch, take the one-by-one path.
      if (!owner) return unknown.push(index);
      if (seen.has(event.data.session_id)) return repeats.push({ index, owner });
      seen.add(event.data.session_id);
      groups.set(owner.merchant_id, [...(groups.get(owner.merchant_id) ?? []), { index, owner }]);
    }),
  );
  const oneByOne = async (index: number, owner?: AccountNumberOwner) => {
    try {
      results[index] = {
        status: 'fulfilled',
        value: await receivePayment(events[index] as QueuedEvent & PaymentReceived, owner),
      };
    } catch (reason) {
      results[index] = { status: 'rejected', reason };
    }
  };
  const creditGroup = async (merchantId: string, members: { index: number; owner: AccountNumberOwner }[]) => {
    if (members.length === 1) return oneByOne(members[0]?.index ?? 0, members[0]?.owner);
    const built = members.map(({ index, owner }) =>
      paymentPosting(events[index] as QueuedEvent & PaymentReceived, owner),
    );
    const totals = new Map<string, { amount: number; count: number }>();
    for (const { virtualAccount, amount } of built) {
      if (!virtualAccount) continue;
      const total = totals.get(virtualAccount) ?? { amount: 0, count: 0 };
      totals.set(virtualAccount, { amount: total.amount + amount, count: total.count + 1 });
    }
    try {
      await postAll(
        merchantId,
        built.map(({ posting }) => posting),
        () =>
          [...totals].map(([reference, total]) =>
            accountTotalItem(merchantId, reference, total.amount, total.count),
          ),
      );
      for (const { index } of members) results[index] = { status: 'fulfilled', value: 'credited' };
    } catch (error) {
      if (!(error instanceof GroupNotApplied)) throw error;
      for (const { index, owner } of members) await oneByOne(index, owner);
    }
  };
  await Promise.all([
    ...[...groups].flatMap(([merchantId, members]) => {
      const chunks = [];
      for (let i = 0; i < members.length; i += GROUP_LIMIT) chunks.push(members.slice(i, i + GROUP_LIMIT));
      return [
        (async () => {
          for (const chunk of chunks) {
            await creditGroup(merchantId, chunk).catch(async () => {
              for (const { index, owner } of chunk) await oneByOne(index, owner);
            });
          }
        })(),
      ];
    }),
    ...unknown.map((index) => oneByOne(index)),
  ]);
  // After the groups, so a repeat cannot get in first and force its whole group one by one.
  await Promise.all(repeats.map(({ index, owner }) => oneByOne(index, owner)));
  return results;
}

/** A partner's verdict on a transfer: settles it once; a reference that is not ours is only logged. */
export async function receiveTransferVerdict(event: QueuedEvent & TransferSettled): Promise<void> {
  const ours = parsePartnerReference(event.data.reference);
  if (!ours) {
    logger.warn('transfer verdict for an unknown reference', { reference: event.data.reference });
    return;
  }
  await settleTransfer(
    ours.merchantId,
    ours.reference,
    event.type === 'transfer.success'
      ? { status: 'success' }
      : { status: 'failed', reason: event.data.reason ?? 'Failed at the bank' },
  );
}
