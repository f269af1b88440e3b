import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ownerOf } from '#shared/accounts/account-numbers.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { credit } from '#shared/ledger/ledger.ts';
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

/**
 * Credits a received payment exactly once: one ledger transaction puts the entry keyed by the
 * partner's session id, the payment's transaction record, and (for a virtual account) the payment
 * and the account's new total. A redelivery finds the entry and changes nothing.
 */
export async function receivePayment(
  event: QueuedEvent & PaymentReceived,
): Promise<'credited' | 'duplicate' | 'unmatched'> {
  const { data } = event;
  const owner = await ownerOf(data.account_number);
  if (!owner) {
    await keepUnmatched(event, 'unknown account number');
    return 'unmatched';
  }
  const payment: Payment = {
    session_id: data.session_id,
    amount: data.amount,
    sender_name: data.sender?.account_name ?? null,
    sender_account_number: data.sender?.account_number ?? null,
    sender_bank_code: data.sender?.bank_code ?? null,
    received_at: receivedAt(event),
  };
  const entryId = paymentEntryId(data.session_id);
  const { entry, applied } = await credit({
    entryId,
    merchantId: owner.merchant_id,
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
      ...(owner.kind === 'virtual_account' && owner.reference
        ? [
            {
              Put: {
                TableName: tableName('payments'),
                Item: { virtual_account: paymentsKey(owner.merchant_id, owner.reference), ...payment },
                ConditionExpression: 'attribute_not_exists(session_id)',
              },
            },
            {
              Update: {
                TableName: tableName('virtualAccounts'),
                Key: { merchant_id: owner.merchant_id, reference: owner.reference },
                UpdateExpression: 'ADD amount_received :amount, payment_count :one',
                ConditionExpression: 'attribute_exists(merchant_id)',
                ExpressionAttributeValues: { ':amount': data.amount, ':one': 1 },
              },
            },
          ]
        : []),
    ],
  });
  if (applied) return 'credited';
  if (entry.merchant_id !== owner.merchant_id || entry.amount !== data.amount) {
    // The partner reused a session id for a different payment: never credit it as the first one.
    await keepUnmatched(event, `session id already credited with other details (${entry.entry_id})`);
    return 'unmatched';
  }
  return 'duplicate';
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
