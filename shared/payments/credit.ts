import { type AccountOwner, ownerOf, ownersOfAlias } from '#shared/accounts/owners.ts';
import { backoff } from '#shared/aws/transactions.ts';
import { config } from '#shared/config.ts';
import { eventItem, newEvent } from '#shared/events/events.ts';
import {
  BalanceCeiling,
  CompanionConflict,
  type Companions,
  claimItem,
  creditPrepared,
  EntryClaimed,
  type GroupPosting,
  type LedgerEntry,
  type PostResult,
  postGroupsPrepared,
} from '#shared/ledger/ledger.ts';
import { logger } from '#shared/logger.ts';
import { traceKeys } from '#shared/partner-webhooks/trace.ts';
import type { PaymentReceived, PaymentRejected, QueuedEvent } from '#shared/partners/partner.ts';
import { creditedTwinOf, keepUnmatched, returnedTwinOf } from '#shared/payments/unmatched.ts';
import {
  accountTotalItem,
  decideRefusal,
  getVirtualAccount,
  type Payment,
  paymentItem,
  type RefusalDecision,
  recordRejectedAttempt,
  toApiVirtualAccountSummary,
  type VirtualAccount,
  type VirtualAccountState,
  virtualAccountState,
  withPayment,
} from '#shared/payments/virtual-accounts.ts';
import {
  getTransaction,
  putTransactionItem,
  toApiTransaction,
  transactionRecord,
} from '#shared/transactions/store.ts';

/** Why a payment is kept when the partner reused the id of another, credited payment. */
export const REUSED_PAYMENT_ID = 'payment id already credited with other details';
/** Why a payment is kept whose partner id is that of another payment, returned to its payer. */
export const REUSED_RETURNED_ID = 'payment id already returned to its payer for another payment';
/** Why a payment is kept when it came under a delivery id another credited payment came under. */
export const REUSED_DELIVERY_ID = 'webhook-id already credited for another payment';

/**
 * The ledger claim that takes a delivery's id (`QueuedEvent.delivery_claim`) for the payment it
 * credits, only if no payment took it before (`claimItem`: no merchant, so no ledger lists it).
 */
function deliveryClaimItem(claim: string, posted: LedgerEntry) {
  return claimItem(claim, {
    reason: `webhook-id of ${posted.entry_id}`,
    at: posted.created_at,
    by: 'consumer',
  });
}
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

/** One payment of a batch, with the account that receives it. */
interface Member {
  event: Received;
  owner: AccountOwner;
}

/** The virtual account a member pays into, if it is one. */
function virtualAccountOf({ owner }: Member): string | undefined {
  return owner.kind === 'virtual_account' && owner.reference ? owner.reference : undefined;
}

function paymentOf(event: Received): Payment {
  return {
    session_id: event.payment_id,
    amount: event.amount,
    sender_name: event.sender.account_name,
    sender_account_number: event.sender.account_number,
    sender_bank_code: event.sender.bank_code,
    received_at: receivedAt(event),
  };
}

/** The states of the virtual accounts some payments of one merchant go to, read now. */
async function statesOf(merchantId: string, members: readonly Member[]) {
  const references = [...new Set(members.map(virtualAccountOf).filter((r): r is string => r !== undefined))];
  const states = await Promise.all(
    references.map(async (reference) => {
      const state = await virtualAccountState(merchantId, reference);
      if (!state) throw new Error(`virtual account ${reference} of ${merchantId} is missing`);
      return [reference, state] as const;
    }),
  );
  return new Map(states);
}

/**
 * What a credited payment writes beside its ledger entry: the transaction record in the merchant's
 * history and its `payment.received` event (the outbox entry merchants' webhooks are sent from).
 */
export function creditedPaymentItems(
  posted: LedgerEntry,
  event: Received,
  details: { reference: string; virtualAccount: string | null; accountAfter?: VirtualAccountState },
) {
  const payment = paymentOf(event);
  const record = transactionRecord(posted, {
    reference: details.reference,
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
    virtual_account_reference: details.virtualAccount,
  });
  return [
    putTransactionItem(record),
    eventItem(
      newEvent(
        posted.merchant_id,
        'payment.received',
        {
          transaction: toApiTransaction(record),
          virtual_account: details.accountAfter ? toApiVirtualAccountSummary(details.accountAfter) : null,
        },
        posted.created_at,
      ),
    ),
  ] as const;
}

/**
 * The ledger postings of some payments of one merchant, and the writes that go with them: for each
 * payment its transaction record, its payment item and its `payment.received` event; for each
 * virtual account its new total (conditional on the total the events were computed from) and,
 * when the total first reaches the amount, its `virtual_account.paid` event.
 */
function plan(merchantId: string, members: readonly Member[], states: Map<string, VirtualAccountState>) {
  const running = new Map(states);
  const crossed = new Map<string, { index: number; state: VirtualAccountState }>();
  const afterEach = members.map((member, index) => {
    const reference = virtualAccountOf(member);
    const before = reference ? running.get(reference) : undefined;
    if (!reference || !before) return undefined;
    const after = withPayment(before, paymentOf(member.event));
    running.set(reference, after);
    const { amount } = after.account;
    if (before.account.amount_received < amount && after.account.amount_received >= amount)
      crossed.set(reference, { index, state: after });
    return after;
  });
  const postings = members.map((member, index): GroupPosting => {
    const { event } = member;
    const reference = paymentReference(event);
    const virtualAccount = virtualAccountOf(member);
    const payment = paymentOf(event);
    return {
      entryId: paymentEntryId(event),
      amount: event.amount,
      category: 'payment',
      reference,
      companions: (posted) => {
        const after = afterEach[index];
        const [transaction, received] = creditedPaymentItems(posted, event, {
          reference,
          virtualAccount: virtualAccount ?? null,
          accountAfter: after,
        });
        return [
          // First, so a conflict of companion 0 names it (`receivePayment`).
          ...(event.delivery_claim ? [deliveryClaimItem(event.delivery_claim, posted)] : []),
          transaction,
          ...(virtualAccount ? [paymentItem(merchantId, virtualAccount, payment)] : []),
          received,
        ];
      },
    };
  });
  const accountWrites = (entries: readonly LedgerEntry[]) =>
    [...states].flatMap(([reference, before]) => {
      const after = running.get(reference) ?? before;
      const paid = crossed.get(reference);
      const at = entries[paid?.index ?? 0]?.created_at ?? new Date().toISOString();
      return [
        accountTotalItem(merchantId, reference, {
          amount: after.account.amount_received - before.account.amount_received,
          count: after.account.payment_count - before.account.payment_count,
          before: before.account.amount_received,
        }),
        ...(paid
          ? [
              eventItem(
                newEvent(
                  merchantId,
                  'virtual_account.paid',
                  { virtual_account: toApiVirtualAccountSummary(paid.state) },
                  at,
                  // After the payment.received of the payment that paid it, made at the same time.
                  1,
                ),
              ),
            ]
          : []),
      ];
    });
  return { postings, accountWrites };
}

/**
 * One payment's posting, planned in its merchant's turn (`creditPrepared`), so the virtual account's
 * total it reads is not overtaken meanwhile: its records, its payment on the account, the account's
 * new total and, if it pays it, `virtual_account.paid`. `first` companions (the caller's) go before.
 * `totalMoved` tells whether a conflict was on the account's total (it moved: read again).
 */
function paymentPosting(member: Member, first?: Companions) {
  const merchantId = member.owner.merchant_id;
  let totalIndex: number | undefined;
  return {
    prepare: async () => {
      const { postings, accountWrites } = plan(merchantId, [member], await statesOf(merchantId, [member]));
      const [posting] = postings;
      if (!posting) throw new Error('no posting');
      return {
        ...posting,
        companions: (posted: LedgerEntry) => {
          const before = [...(first?.(posted) ?? []), ...(posting.companions?.(posted) ?? [])];
          const account = accountWrites([posted]);
          totalIndex = account.length > 0 ? before.length : undefined;
          return [...before, ...account];
        },
      };
    },
    totalMoved: (error: unknown) => error instanceof CompanionConflict && error.index === totalIndex,
  };
}

/**
 * Credits a kept payment to the merchant whose virtual account it paid (an operator's credit,
 * `shared/payments/operator.ts`), written as the consumer writes a payment, so the account shows it:
 * its payment, total and status, and the transaction's `virtual_account_reference`. `first` (the
 * operator's resolution) goes in the same transaction; a conflict there is the caller's. Tried again
 * while the account's total moves under it (a payment to it credited meanwhile by another process).
 */
export async function creditIntoVirtualAccount(
  event: Received,
  owner: AccountOwner,
  options: { allowPastMaxBalance?: boolean; first: Companions },
): Promise<PostResult> {
  // The delivery's id was never claimed for a payment kept before its posting, and a payment kept
  // because another took that id must not claim it now.
  const member = { event: { ...event, delivery_claim: undefined }, owner };
  const posting = paymentPosting(member, options.first);
  for (let attempt = 1; ; attempt++) {
    try {
      return await creditPrepared(owner.merchant_id, async () => ({
        ...(await posting.prepare()),
        allowPastMaxBalance: options.allowPastMaxBalance,
      }));
    } catch (error) {
      if (!posting.totalMoved(error) || attempt >= ACCOUNT_ATTEMPTS) throw error;
      await backoff(attempt);
    }
  }
}

export type PaymentOutcome = 'credited' | 'duplicate' | 'unmatched' | 'held';

/**
 * Whether the payment the merchant was credited under this payment's id went to the account `owner`
 * names (its wallet, or which of its virtual accounts): one that reused the id for another account
 * of the same merchant, for the same amount, is another payment, not a redelivery. Read only when
 * the id is taken. (A redelivery of a payment kept and credited by an operator elsewhere may read
 * as another: it is kept under its fingerprint, which it has already, and nothing new is kept.)
 */
export async function paidSameAccount(
  merchantId: string,
  event: Pick<PaymentReceived, 'payment_id'>,
  owner: AccountOwner,
): Promise<boolean> {
  const credited = await getTransaction(merchantId, paymentReference(event));
  // Unreadable as a payment's: taken for the redelivery it most likely is.
  if (!credited) return true;
  const paidInto = owner.kind === 'virtual_account' ? (owner.reference ?? null) : null;
  return (credited.virtual_account_reference ?? null) === paidInto;
}

/** Times a payment is tried again when a virtual account's total moved under it. */
const ACCOUNT_ATTEMPTS = 10;

/**
 * Credits a received payment exactly once: one ledger transaction puts the entry keyed by the
 * partner's payment id, the payment's transaction record, its event, and (for a virtual account)
 * the payment, the account's new total and, if this payment pays it, its paid event. A redelivery
 * finds the entry and changes nothing.
 */
export async function receivePayment(event: Received, known?: AccountOwner): Promise<PaymentOutcome> {
  const owner = known ?? (await ownerOf(event.partner, event.account_ids));
  if (!owner) {
    await keepUnmatched(event, 'unknown account number');
    return 'unmatched';
  }
  if (event.amount > config.limits.maxPaymentAmount) {
    // Never credited without an operator, and never in the way of later credits (API.md §11).
    await keepUnmatched(event, 'held: amount above MAX_PAYMENT_AMOUNT');
    return 'held';
  }
  const merchantId = owner.merchant_id;
  for (let attempt = 1; ; attempt++) {
    try {
      const { entry, applied } = await creditPrepared(merchantId, paymentPosting({ event, owner }).prepare);
      if (applied) return 'credited';
      if (
        entry.merchant_id !== merchantId ||
        entry.amount !== event.amount ||
        !(await paidSameAccount(merchantId, event, owner)) ||
        // An operator credited another payment kept under this id (to this merchant, for this amount).
        (await creditedTwinOf(event, entry.entry_id)) !== undefined
      ) {
        // The partner reused a payment id for a different payment: never credit it as the first one.
        await keepUnmatched(event, `${REUSED_PAYMENT_ID} (${entry.entry_id})`);
        return 'unmatched';
      }
      return 'duplicate';
    } catch (error) {
      if (error instanceof BalanceCeiling) {
        await keepUnmatched(event, 'held: the balance would pass MAX_BALANCE');
        return 'held';
      }
      if (error instanceof EntryClaimed) {
        // An operator returned another payment under this id to its payer: this one reused the id,
        // and is kept (API.md §11), never dropped. (Its own redeliveries find it kept.)
        if (await returnedTwinOf(event, error.claim)) {
          await keepUnmatched(event, `${REUSED_RETURNED_ID} (${error.entryId})`);
          return 'unmatched';
        }
        // An operator returned this payment to its payer: a redelivery credits nothing.
        logger.warn('payment not credited: it was returned to its payer', {
          entry_id: error.entryId,
          claim: error.claim,
          ...traceKeys(event),
        });
        return 'duplicate';
      }
      if (error instanceof CompanionConflict && error.index === 0 && event.delivery_claim) {
        // Another payment came under this delivery's id before: a redelivery, whatever its body
        // says, credits nothing again (API.md §4); kept, with its difference, for operators.
        await keepUnmatched(event, `${REUSED_DELIVERY_ID} (${event.delivery_claim})`);
        return 'unmatched';
      }
      // The virtual account's total moved since it was read (a payment to it credited by another
      // container): back off, read again.
      if (!(error instanceof CompanionConflict) || attempt >= ACCOUNT_ATTEMPTS) throw error;
      await backoff(attempt);
    }
  }
}

/**
 * Payments of one merchant credited per transaction at most when grouped: each is at most 5 writes
 * (entry, delivery claim, record, payment, event) and its virtual account up to 2 more (total, paid
 * event), beside the merchant's balance: 1 + 7 × 14 = 99 fits DynamoDB's 100.
 */
const GROUP_LIMIT = 14;
const WRITES_PER_PAYMENT = 7;
const TRANSACTION_WRITES = 100;

/** A merchant's payments in a batch (at most GROUP_LIMIT), posted as one ledger group. */
interface Unit {
  merchantId: string;
  members: { index: number; owner: AccountOwner }[];
}

/**
 * Units packed into as few transactions as their writes allow (at most one unit per merchant in
 * each: `units` comes from one round, one unit per merchant).
 */
function packed(units: readonly Unit[]): Unit[][] {
  const transactions: Unit[][] = [];
  let writes = TRANSACTION_WRITES;
  for (const unit of units) {
    const needs = 1 + WRITES_PER_PAYMENT * unit.members.length;
    if (writes + needs > TRANSACTION_WRITES) {
      transactions.push([]);
      writes = 0;
    }
    transactions.at(-1)?.push(unit);
    writes += needs;
  }
  return transactions;
}

/**
 * Credits a batch of payments, each exactly once, in as few ledger transactions as it can: each
 * merchant's payments form one group (its balance moves once for all of them instead of racing for
 * it), and the groups of every merchant in the batch go in one transaction, so a batch spread over
 * many merchants costs one ledger write, not one per merchant. If a group cannot be applied whole
 * (a redelivered payment among them, a virtual account that moved, the balance ceiling), its
 * payments are credited one by one and the other groups are not held back. Resolves with each
 * event's outcome, or the error that stopped it.
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
  const groups = new Map<string, Unit['members']>();
  const unknown: number[] = [];
  const repeats: Unit['members'] = [];
  const seen = new Set<string>();
  await Promise.all(
    events.map(async (event, index) => {
      const owner = await ownerOfCached(event).catch(() => undefined);
      // Unknown accounts, amounts held for operators, and repeats of a payment within the batch
      // take the one-by-one path.
      if (!owner || event.amount > config.limits.maxPaymentAmount) return unknown.push(index);
      // A payment or a delivery id twice in a batch: the second after the groups, on its own.
      const keys = [paymentEntryId(event), ...(event.delivery_claim ? [event.delivery_claim] : [])];
      if (keys.some((key) => seen.has(key))) return repeats.push({ index, owner });
      for (const key of keys) seen.add(key);
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
  const eachOneByOne = async (members: Unit['members']) => {
    for (const { index, owner } of members) await oneByOne(index, owner);
  };
  const creditTogether = async (units: readonly Unit[]) => {
    // Planned holding the merchants' turns: the account totals read are not overtaken meanwhile.
    const outcomes = await postGroupsPrepared(
      units.map(({ merchantId }) => merchantId),
      () =>
        Promise.all(
          units.map(async ({ merchantId, members }) => {
            const batch = members.map(({ index, owner }) => ({ event: events[index] as Received, owner }));
            const { postings, accountWrites } = plan(merchantId, batch, await statesOf(merchantId, batch));
            return { merchantId, postings, groupCompanions: accountWrites };
          }),
        ),
    );
    await Promise.all(
      units.map(async ({ members }, i) => {
        const outcome = outcomes[i];
        if (outcome && 'entries' in outcome) {
          for (const { index } of members) results[index] = { status: 'fulfilled', value: 'credited' };
        } else await eachOneByOne(members);
      }),
    );
  };
  // Round r holds each merchant's r-th chunk: a transaction moves a balance once at most.
  const rounds: Unit[][] = [];
  for (const [merchantId, members] of groups) {
    for (let i = 0; i * GROUP_LIMIT < members.length; i++) {
      rounds[i] ??= [];
      rounds[i]?.push({ merchantId, members: members.slice(i * GROUP_LIMIT, (i + 1) * GROUP_LIMIT) });
    }
  }
  const grouped = async () => {
    for (const round of rounds) {
      await Promise.all(
        packed(round).map((units) =>
          creditTogether(units).catch(async (error: unknown) => {
            // An error before or in the transaction: each payment alone. If the transaction did land
            // (its answer lost), each payment's entry exists and its credit is a duplicate, not a second credit.
            logger.warn('grouped credits failed: crediting each payment alone', {
              merchants: units.length,
              error: String(error),
            });
            for (const { members } of units) await eachOneByOne(members);
          }),
        ),
      );
    }
  };
  await Promise.all([grouped(), ...unknown.map((index) => oneByOne(index))]);
  // After the groups, so a repeat cannot get in first and force its whole group one by one.
  await Promise.all(repeats.map(({ index, owner }) => oneByOne(index, owner)));
  return results;
}

const HOUR_MS = 3600 * 1000;
/**
 * How old a refusal that carries no time of its own (Paystack's samples) may be when it arrives:
 * Paystack retries a webhook it could not deliver for 72 hours.
 */
const UNDATED_REFUSAL_WINDOW_MS = 73 * HOUR_MS;
/** A refusal's own time, give or take the partner's clock and ours. */
const REFUSAL_CLOCK_SKEW_MS = 5 * 60 * 1000;
/** The accounts one refusal is matched among: more than this carrying its alias keep it for operators. */
const MAX_REFUSAL_CANDIDATES = 10;
const NO_OPEN_ACCOUNT: RefusalDecision = {
  kept: 'refused payment matches no open virtual account',
  shared: false,
};

/**
 * A payment the partner refused and returned to the payer (nothing to credit): listed on the
 * virtual account it was meant for, or kept for operators when that cannot be told.
 * - Named by the account's own id (a charge reference): listed on that account.
 * - Named only by an alias (the customer's email, all Paystack's samples carry): among the
 *   accounts carrying it that were open at some time the refusal may have happened (within minutes
 *   of its own time, or in the 72 hours before it arrived when it carries none). Accounts of one
 *   merchant: listed on its newest that has not been paid in full, else its newest. Accounts of two
 *   merchants or more: kept for operators, never one merchant's customer shown to another. The
 *   decision is recorded once (`decideRefusal`), so a redelivery follows it.
 */
export async function receiveRejectedPayment(event: QueuedEvent & PaymentRejected): Promise<void> {
  const at = new Date(event.rejected_at ?? event.received_at).toISOString();
  const decision = await refusalDecision(event, at);
  if ('kept' in decision) {
    if (decision.shared) {
      logger.warn('refused payment cannot be told to one merchant: kept for operators', {
        ...traceKeys(event),
        reason: decision.kept,
      });
    }
    await keepUnmatched(event, decision.kept);
    return;
  }
  await recordRejectedAttempt(
    decision.merchant_id,
    decision.reference,
    `${event.partner}:${event.attempt_id}`,
    { amount: event.amount, reason: event.reason, received_at: at },
  );
  logger.info('refused payment recorded', { reference: decision.reference, ...traceKeys(event) });
}

/** Where a refused payment goes (see `receiveRejectedPayment`). */
async function refusalDecision(event: PaymentRejected, at: string): Promise<RefusalDecision> {
  const owner = await ownerOf(event.partner, event.account_ids);
  if (owner) {
    return owner.kind === 'virtual_account' && owner.reference
      ? { merchant_id: owner.merchant_id, reference: owner.reference }
      : NO_OPEN_ACCOUNT;
  }
  if (!event.alias_ids?.length) return NO_OPEN_ACCOUNT;
  return decideRefusal(
    `${event.partner}:${event.attempt_id}`,
    await aliasDecision(event, event.alias_ids, at),
  );
}

async function aliasDecision(
  event: PaymentRejected,
  aliases: readonly string[],
  at: string,
): Promise<RefusalDecision> {
  const time = Date.parse(at);
  const span = event.rejected_at
    ? { from: isoAt(time - REFUSAL_CLOCK_SKEW_MS), to: isoAt(time + REFUSAL_CLOCK_SKEW_MS) }
    : { from: isoAt(time - UNDATED_REFUSAL_WINDOW_MS), to: at };
  const candidates = new Map<string, { merchant_id: string; reference: string }>();
  for (const alias of aliases) {
    const { owners, more } = await ownersOfAlias(event.partner, alias, span, MAX_REFUSAL_CANDIDATES);
    if (more)
      return {
        kept: `refused payment matches more than ${MAX_REFUSAL_CANDIDATES} virtual accounts (shared email)`,
        shared: true,
      };
    for (const { kind, merchant_id, reference } of owners) {
      if (kind === 'virtual_account' && reference)
        candidates.set(`${merchant_id}/${reference}`, { merchant_id, reference });
    }
  }
  const merchants = new Set([...candidates.values()].map((candidate) => candidate.merchant_id));
  if (merchants.size > 1) {
    return {
      kept: `refused payment matches open virtual accounts of ${merchants.size} merchants (shared email): ${[...candidates.keys()].join(', ')}`,
      shared: true,
    };
  }
  const accounts = (
    await Promise.all([...candidates.values()].map((c) => getVirtualAccount(c.merchant_id, c.reference)))
  ).filter((account): account is VirtualAccount => account !== undefined);
  const unpaid = accounts.filter((account) => account.amount_received < account.amount);
  const [newest] = (unpaid.length > 0 ? unpaid : accounts).sort((a, b) =>
    b.created_at.localeCompare(a.created_at),
  );
  return newest ? { merchant_id: newest.merchant_id, reference: newest.reference } : NO_OPEN_ACCOUNT;
}

const isoAt = (ms: number) => new Date(ms).toISOString();
