import { type AccountOwner, ownerOf } from '#shared/accounts/owners.ts';
import { credit, GroupNotApplied, type Posting, postAll } from '#shared/ledger/ledger.ts';
import { logger } from '#shared/logger.ts';
import type { PaymentReceived, PaymentRejected, QueuedEvent } from '#shared/partners/partner.ts';
import { keepUnmatched } from '#shared/payments/unmatched.ts';
import {
  accountTotalItem,
  getVirtualAccount,
  type Payment,
  paymentItem,
  paymentStatus,
  recordRejectedAttempt,
} from '#shared/payments/virtual-accounts.ts';
import { putTransactionItem, transactionRecord } from '#shared/transactions/store.ts';

/**
 * Crediting payments: a customer's payment into an account the service was issued is credited to
 * its owner exactly once, keyed by the partner's own payment id.
 */

/** The ledger entry id of a received payment: the partner's payment id, qualified by the partner. */
export function paymentEntryId(event: Pick<PaymentReceived, 'partner' | 'payment_id'>): string {
  return `payment:${event.partner}:${event.payment_id}`;
}

/** The reference a merchant sees a payment's transaction under. */
export function paymentReference(event: Pick<PaymentReceived, 'payment_id'>): string {
  return `payment:${event.payment_id}`;
}

type Received = QueuedEvent & PaymentReceived;

function receivedAt(event: Received): string {
  const paid = event.paid_at ? Date.parse(event.paid_at) : Number.NaN;
  return Number.isNaN(paid) ? event.received_at : new Date(paid).toISOString();
}

/** The ledger posting of a payment, its own companion writes, and the account total it adds to. */
function paymentPosting(event: Received, owner: AccountOwner) {
  const payment: Payment = {
    session_id: event.payment_id,
    amount: event.amount,
    sender_name: event.sender.account_name,
    sender_account_number: event.sender.account_number,
    sender_bank_code: event.sender.bank_code,
    received_at: receivedAt(event),
  };
  const entryId = paymentEntryId(event);
  const reference = paymentReference(event);
  const virtualAccount = owner.kind === 'virtual_account' && owner.reference ? owner.reference : undefined;
  const posting: Omit<Posting, 'merchantId'> = {
    entryId,
    amount: event.amount,
    category: 'payment',
    reference,
    companions: (posted) => [
      putTransactionItem(
        transactionRecord(posted, {
          reference,
          amount: event.amount,
          fee: 0,
          status: 'success',
          narration: event.narration,
          counterparty: {
            account_name: payment.sender_name ?? '',
            account_number: payment.sender_account_number ?? '',
            bank_code: payment.sender_bank_code ?? '',
          },
          partner: event.partner,
          virtual_account_reference: virtualAccount ?? null,
        }),
      ),
      ...(virtualAccount ? [paymentItem(owner.merchant_id, virtualAccount, payment)] : []),
    ],
  };
  return { posting, virtualAccount, amount: event.amount };
}

export type PaymentOutcome = 'credited' | 'duplicate' | 'unmatched';

/**
 * Credits a received payment exactly once: one ledger transaction puts the entry keyed by the
 * partner's session id, the payment's transaction record, and (for a virtual account) the payment
 * and the account's new total. A redelivery finds the entry and changes nothing.
 */
export async function receivePayment(event: Received, known?: AccountOwner): Promise<PaymentOutcome> {
  const owner = known ?? (await ownerOf(event.partner, event.account_ids));
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
    // The partner reused a payment id for a different payment: never credit it as the first one.
    await keepUnmatched(event, `payment id already credited with other details (${entry.entry_id})`);
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
  events: readonly Received[],
): Promise<PromiseSettledResult<PaymentOutcome>[]> {
  const owners = new Map<string, Promise<AccountOwner | undefined>>();
  const ownerOfCached = (event: Received) => {
    const key = `${event.partner}:${event.account_ids.join(' ')}`;
    const known = owners.get(key);
    if (known) return known;
    const owner = ownerOf(event.partner, event.account_ids);
    owners.set(key, owner);
    return owner;
  };
  const results: PromiseSettledResult<PaymentOutcome>[] = new Array(events.length);
  const groups = new Map<string, { index: number; owner: AccountOwner }[]>();
  const unknown: number[] = [];
  const repeats: { index: number; owner: AccountOwner }[] = [];
  const seen = new Set<string>();
  await Promise.all(
    events.map(async (event, index) => {
      const owner = await ownerOfCached(event).catch(() => undefined);
      // Unknown accounts, and repeats of a payment within the batch, take the one-by-one path.
      if (!owner) return unknown.push(index);
      const entryId = paymentEntryId(event);
      if (seen.has(entryId)) return repeats.push({ index, owner });
      seen.add(entryId);
      groups.set(owner.merchant_id, [...(groups.get(owner.merchant_id) ?? []), { index, owner }]);
    }),
  );
  const oneByOne = async (index: number, owner?: AccountOwner) => {
    try {
      results[index] = {
        status: 'fulfilled',
        value: await receivePayment(events[index] as Received, owner),
      };
    } catch (reason) {
      results[index] = { status: 'rejected', reason };
    }
  };
  const creditGroup = async (merchantId: string, members: { index: number; owner: AccountOwner }[]) => {
    if (members.length === 1) return oneByOne(members[0]?.index ?? 0, members[0]?.owner);
    const built = members.map(({ index, owner }) => paymentPosting(events[index] as Received, owner));
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

/**
 * A payment the partner refused and returned to the payer (nothing to credit): listed on the
 * virtual account it was meant for, or kept for operators when it matches none that is open.
 */
export async function receiveRejectedPayment(event: QueuedEvent & PaymentRejected): Promise<void> {
  const owner = await ownerOf(event.partner, event.account_ids);
  const account =
    owner?.kind === 'virtual_account' && owner.reference
      ? await getVirtualAccount(owner.merchant_id, owner.reference)
      : undefined;
  if (!account || paymentStatus(account) === 'expired') {
    await keepUnmatched(event, 'refused payment matches no open virtual account');
    return;
  }
  await recordRejectedAttempt(
    account.merchant_id,
    account.reference,
    `${event.partner}:${event.attempt_id}`,
    {
      amount: event.amount,
      reason: event.reason,
      received_at: event.rejected_at ?? event.received_at,
    },
  );
  logger.info('refused payment recorded', { reference: account.reference, attempt_id: event.attempt_id });
}
