import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryPage } from '#shared/aws/query.ts';
import { backoff, metContention } from '#shared/aws/transactions.ts';
import { config } from '#shared/config.ts';
import { ApiError } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';

/**
 * The ledger: the only code that changes a balance. Each change is one DynamoDB transaction that
 * puts an immutable entry keyed by a permanent business id (`attribute_not_exists`) and moves the
 * merchant's balance with an optimistic version check, so every entry knows its `balance_after` and
 * a merchant's entries form a gap-free sequence (`seq` = the balance item's new version).
 */

export type EntryCategory = 'payment' | 'transfer' | 'reversal';

/** An applied ledger entry, as stored. `amount` is signed: credits positive, debits negative. */
export interface LedgerEntry {
  entry_id: string;
  merchant_id: string;
  seq: number;
  amount: number;
  balance_after: number;
  category: EntryCategory;
  reference: string;
  created_at: string;
}

/** What a posting's companion writes may depend on: the entry as it will be stored. */
export type Companions = (
  entry: LedgerEntry,
) => NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>;

export interface Posting {
  /** Derived from a permanent business id: the same id is applied once, ever. */
  entryId: string;
  merchantId: string;
  /** Signed kobo: positive credits, negative debits. */
  amount: number;
  category: EntryCategory;
  reference: string;
  /** Writes that must happen in the same transaction as the entry (records, statuses). */
  companions?: Companions;
  /**
   * Lets a payment take the balance past MAX_BALANCE: only an operator's explicit decision
   * (`npm run ops -- unmatched credit … --allow-over-max-balance`), never a partner's delivery.
   */
  allowPastMaxBalance?: boolean;
}

export interface PostResult {
  entry: LedgerEntry;
  /** False when the entry already existed: a retry of something applied before. */
  applied: boolean;
}

export class InsufficientFunds extends ApiError {
  constructor() {
    super('insufficient_funds', 'The balance does not cover the amount and fee');
  }
}

/** A payment would take the balance past MAX_BALANCE: nothing was written (the caller holds it). */
export class BalanceCeiling extends Error {
  constructor(readonly balanceAfter: number) {
    super(`a credit would take the balance to ${balanceAfter}, past MAX_BALANCE`);
  }
}

/** A posting would take a balance past 2^53, where it is no longer exact: no flag lets it through. */
export class PastExactIntegers extends RangeError {
  constructor(readonly balanceAfter: number) {
    super(`a posting would take the balance to ${balanceAfter}, past exact integers`);
  }
}

/** A companion write's condition failed: the caller's precondition no longer holds. */
export class CompanionConflict extends Error {
  constructor(readonly index: number) {
    super(`companion write ${index} of a ledger posting failed its condition`);
  }
}

/**
 * What a claim (`claimItem`) says: why the business id may never be posted, when, and by whom.
 * Stored in place of an entry under that id.
 */
export interface Claim {
  reason: string;
  at: string;
  by: string;
}

/** A posting's id was claimed for good (`claimItem`): nothing was written, and nothing ever will be. */
export class EntryClaimed extends Error {
  constructor(
    readonly entryId: string,
    readonly claim: Claim,
  ) {
    super(`${entryId} may never be posted: ${claim.reason} (${claim.at}, by ${claim.by})`);
  }
}

/**
 * A transaction item that takes a business id for good without moving money, only if no posting
 * has used it: every later posting of it throws `EntryClaimed` and writes nothing. A payment an
 * operator returned to its payer is claimed so that no redelivery of it is ever credited as well.
 * A claim has no merchant, amount or seq: no merchant's ledger lists it (the `by-merchant` index
 * holds only items with a merchant), so balances and audits never see it.
 */
export function claimItem(entryId: string, claim: Claim) {
  return {
    Put: {
      TableName: tableName('ledgerEntries'),
      Item: { entry_id: entryId, claim },
      ConditionExpression: 'attribute_not_exists(entry_id)',
    },
  };
}

/** Retries of a posting whose balance version moved underneath it (other postings of the merchant). */
const MAX_ATTEMPTS = 60;

interface Balance {
  balance: number;
  version: number;
  /** `created_at` of the merchant's last entry (absent before the first): the next one's is later. */
  lastEntryAt?: string;
}

/**
 * How far a merchant's last entry may be ahead of this clock and still be followed: beyond it, a
 * writer's clock was wrong (an operator's machine, say), and following it would date every later
 * entry ahead of real time (hiding them from `to=now` lists and delaying the requery).
 */
export const MAX_ENTRY_TIME_LEAD_MS = 5_000;

/**
 * When a merchant's next entry happens (ms since the epoch; a group's entries take the following
 * milliseconds): now, but at least 1 ms after the entry before, so a merchant's entries (and the
 * transactions and events written with them) sort by time exactly as by `seq`, and a list newest
 * first agrees with `balance_after`. Without this, the entries of one grouped transaction would share
 * a time, and an entry posted by a container whose clock is a little behind could sort before the
 * entry it follows. Entry times run ahead of the clock only while a merchant gets more than 1,000
 * entries a second, never by more than MAX_ENTRY_TIME_LEAD_MS: a last entry further ahead than
 * that came from a wrong clock, and the clock wins (logged, as that entry then sorts out of order).
 */
export function nextEntryTime(lastEntryAt: string | undefined, now = Date.now()): number {
  if (lastEntryAt === undefined) return now;
  const after = Date.parse(lastEntryAt) + 1;
  if (after - now > MAX_ENTRY_TIME_LEAD_MS) {
    logger.warn('a ledger entry is dated ahead of this clock: the next entry takes the clock', {
      last_entry_at: lastEntryAt,
      ahead_ms: after - 1 - now,
    });
    return now;
  }
  return Math.max(now, after);
}

/**
 * Each merchant's balance and version as this container last read or wrote them: a hint that saves
 * the read before a posting (one DynamoDB call per credit instead of two). Never trusted: the
 * write's version condition checks it, a conflict re-reads, and a refusal (a debit not covered, a
 * balance ceiling) is only ever given on a fresh, consistent read.
 */
const lastKnown = new Map<string, Balance>();
const MAX_KNOWN = 10_000;

function remember(merchantId: string, balance: Balance): void {
  lastKnown.delete(merchantId);
  lastKnown.set(merchantId, balance);
  if (lastKnown.size > MAX_KNOWN) lastKnown.delete(lastKnown.keys().next().value as string);
}

/**
 * The posting of each merchant in progress in this container: a posting waits for the one before it
 * (chained per merchant), so postings of one merchant in one container take turns on the remembered
 * balance instead of racing each other to a conflict and a re-read. Other containers still race
 * (the version condition decides), and a failure never blocks the next posting.
 */
const turns = new Map<string, Promise<unknown>>();

function inTurn<T>(merchantId: string, work: () => Promise<T>): Promise<T> {
  const before = turns.get(merchantId) ?? Promise.resolve();
  const mine = before.then(work, work);
  const settled = mine.then(
    () => undefined,
    () => undefined,
  );
  turns.set(merchantId, settled);
  void settled.then(() => {
    if (turns.get(merchantId) === settled) turns.delete(merchantId);
  });
  return mine;
}

/** The balance to compute a posting from: the remembered one, unless `fresh` or none is remembered. */
async function balanceFor(merchantId: string, fresh: boolean): Promise<Balance & { fresh: boolean }> {
  const known = fresh ? undefined : lastKnown.get(merchantId);
  if (known) return { ...known, fresh: false };
  const read = await readBalance(merchantId);
  remember(merchantId, read);
  return { ...read, fresh: true };
}

async function readBalance(merchantId: string): Promise<Balance> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('merchants'),
      Key: { merchant_id: merchantId },
      ProjectionExpression: 'balance, version, last_entry_at',
      ConsistentRead: true,
    }),
  );
  if (!Item) throw new Error(`no wallet for merchant ${merchantId}`);
  const version = Number(Item.version);
  const stored = typeof Item.last_entry_at === 'string' ? Item.last_entry_at : undefined;
  // A wallet with entries but no stored time was written before it was kept.
  const lastEntryAt = stored ?? (version > 0 ? await lastEntryTime(merchantId) : undefined);
  return { balance: Number(Item.balance), version, lastEntryAt };
}

/**
 * The time of a merchant's latest entry, for a wallet written before it kept `last_entry_at` (its
 * next posting writes it). Read from the `by-merchant` index (seq order): on AWS that index may lag
 * a posting made a moment ago, which only matters for a wallet posting for the first time since.
 */
async function lastEntryTime(merchantId: string): Promise<string | undefined> {
  const { items } = await queryPage<{ created_at?: unknown }>(
    {
      TableName: tableName('ledgerEntries'),
      IndexName: 'by-merchant',
      KeyConditionExpression: 'merchant_id = :m',
      ExpressionAttributeValues: { ':m': merchantId },
      ProjectionExpression: 'created_at',
      ScanIndexForward: false,
    },
    1,
  );
  const createdAt = items[0]?.created_at;
  return typeof createdAt === 'string' ? createdAt : undefined;
}

/**
 * The stored entry of a business id, if it was applied; throws `EntryClaimed` if the id was claimed
 * instead (it never will be applied).
 */
export async function getEntry(entryId: string): Promise<LedgerEntry | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName('ledgerEntries'),
      Key: { entry_id: entryId },
      ConsistentRead: true,
    }),
  );
  if (Item?.claim) throw new EntryClaimed(entryId, Item.claim as Claim);
  return Item as LedgerEntry | undefined;
}

/**
 * Applies one posting exactly once. A debit that the balance does not cover throws
 * `InsufficientFunds` and writes nothing. A posting whose entry exists already is reported as
 * `applied: false` with the stored entry: a retry, never a second application. One whose id was
 * claimed (`claimItem`) throws `EntryClaimed` and writes nothing.
 */
export async function post(posting: Posting): Promise<PostResult> {
  return postPrepared(posting.merchantId, async () => posting);
}

/**
 * `post` of the posting `prepare` makes once it is the merchant's turn in this container, so that
 * what it reads to make it (a virtual account's total, which a companion write's condition pins)
 * is not overtaken by this container's other postings of the merchant while it waits: those would
 * fail the condition, and a burst into one account would fail over and over. Another container can
 * still move it first (the condition decides, `CompanionConflict`).
 */
export function postPrepared(
  merchantId: string,
  prepare: () => Promise<Omit<Posting, 'merchantId'>>,
): Promise<PostResult> {
  return inTurn(merchantId, async () => {
    const posting = { ...(await prepare()), merchantId };
    if (!Number.isSafeInteger(posting.amount)) throw new RangeError('a posting is a whole number of kobo');
    return postNow(posting);
  });
}

async function postNow(posting: Posting): Promise<PostResult> {
  // Only new money is capped: a reversal gives back what was already the merchant's and must
  // never be blocked (the transfer would stay pending with its money held).
  const pastCeiling = (after: number) =>
    posting.category === 'payment' && after > config.limits.maxBalance && !posting.allowPastMaxBalance;
  const refused = (after: number) => after < 0 || pastCeiling(after) || !Number.isSafeInteger(after);
  let fresh = false;
  for (let attempt = 1; ; attempt++) {
    const existing = attempt === 1 ? undefined : await getEntry(posting.entryId);
    if (existing) return { entry: existing, applied: false };
    let current = await balanceFor(posting.merchantId, fresh);
    // A remembered balance may be stale: a refusal is only ever decided on a fresh read.
    if (!current.fresh && refused(current.balance + posting.amount)) {
      current = await balanceFor(posting.merchantId, true);
    }
    const { balance, version, lastEntryAt } = current;
    const balanceAfter = balance + posting.amount;
    if (pastCeiling(balanceAfter)) throw new BalanceCeiling(balanceAfter);
    // Past 2^53 a balance is no longer exact: no flag lets a posting go there.
    if (!Number.isSafeInteger(balanceAfter)) throw new PastExactIntegers(balanceAfter);
    if (balanceAfter < 0) {
      // The balance read is current (consistent read); still, a concurrent debit may have applied
      // this very entry: only a missing entry makes this an insufficient-funds answer.
      const applied = await getEntry(posting.entryId);
      if (applied) return { entry: applied, applied: false };
      throw new InsufficientFunds();
    }
    const createdAt = new Date(nextEntryTime(lastEntryAt)).toISOString();
    const entry: LedgerEntry = {
      entry_id: posting.entryId,
      merchant_id: posting.merchantId,
      seq: version + 1,
      amount: posting.amount,
      balance_after: balanceAfter,
      category: posting.category,
      reference: posting.reference,
      created_at: createdAt,
    };
    try {
      await dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName('merchants'),
                Key: { merchant_id: posting.merchantId },
                // `updated_at` is the entry's own time: the balance as of it is exactly the history up
                // to it (a clock read before the balance was, earlier than the entry, would not be).
                UpdateExpression:
                  'SET balance = :after, version = :next, updated_at = :entryAt, last_entry_at = :entryAt',
                // The version pins the balance this entry was computed from (so balance_after and
                // seq are exact); a debit also states its cover in the same condition.
                ConditionExpression:
                  posting.amount < 0 ? 'version = :version AND balance >= :debit' : 'version = :version',
                ExpressionAttributeValues: {
                  ':after': balanceAfter,
                  ':next': version + 1,
                  ':version': version,
                  ':entryAt': createdAt,
                  ...(posting.amount < 0 ? { ':debit': -posting.amount } : {}),
                },
              },
            },
            {
              Put: {
                TableName: tableName('ledgerEntries'),
                Item: entry,
                ConditionExpression: 'attribute_not_exists(entry_id)',
              },
            },
            ...(posting.companions?.(entry) ?? []),
          ],
        }),
      );
      remember(posting.merchantId, { balance: balanceAfter, version: version + 1, lastEntryAt: createdAt });
      return { entry, applied: true };
    } catch (error) {
      // Whatever failed, the next attempt (if any) reads the balance afresh.
      lastKnown.delete(posting.merchantId);
      fresh = true;
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      if (reasons[1]?.Code === 'ConditionalCheckFailed') {
        const stored = await getEntry(posting.entryId);
        if (stored) return { entry: stored, applied: false };
      }
      const companion = reasons.findIndex((reason, i) => i >= 2 && reason.Code === 'ConditionalCheckFailed');
      if (companion >= 2) throw new CompanionConflict(companion - 2);
      if (attempt >= MAX_ATTEMPTS) {
        logger.error('ledger posting gave up after conflicts', {
          entry_id: posting.entryId,
          attempts: attempt,
        });
        throw error;
      }
      // The version moved (another posting won) or the transaction conflicted: back off, re-read.
      // A remembered balance that was merely stale is re-read at once.
      if (current.fresh) await backoff(attempt);
    }
  }
}

/** A credit of a group (`postAll`): never past MAX_BALANCE, so it takes no operator's flag. */
export type GroupPosting = Omit<Posting, 'merchantId' | 'allowPastMaxBalance'>;

/** A group posting could not be applied as one: some entry existed, or a companion's condition failed. */
export class GroupNotApplied extends Error {
  constructor(readonly reason: 'already_applied' | 'companion_conflict' | 'balance_ceiling') {
    super(`group posting not applied: ${reason}`);
  }
}

/** Most operations DynamoDB takes in one transaction. */
const MAX_TRANSACTION_ITEMS = 100;

/** Credits of one merchant to post together (`postGroups`), and writes that belong to them as a whole. */
export interface Group {
  merchantId: string;
  postings: readonly GroupPosting[];
  /** Writes of the group as a whole (e.g. one total per account), computed from its entries. */
  groupCompanions?: (entries: LedgerEntry[]) => ReturnType<Companions>;
}

/** What became of a group: its entries, or why it was not applied (nothing of it was written). */
export type GroupOutcome = { entries: LedgerEntry[] } | { notApplied: GroupNotApplied };

/**
 * Applies several credits of one merchant in one transaction: one version step per entry, so the
 * entries get consecutive `seq` and chained `balance_after` exactly as one-by-one postings would.
 * This is how a hot merchant's batch of payments costs one balance write instead of a race of many.
 * All or nothing: if any entry already exists or a companion condition fails, nothing is written
 * and `GroupNotApplied` tells the caller to post them one by one (which handles duplicates).
 * `groupCompanions` are writes that belong to the group as a whole (e.g. one total per account).
 */
export async function postAll(
  merchantId: string,
  postings: readonly GroupPosting[],
  groupCompanions?: Group['groupCompanions'],
): Promise<LedgerEntry[]> {
  const [outcome] = await postGroups([{ merchantId, postings, groupCompanions }]);
  if (!outcome) throw new Error('postGroups returned no outcome');
  if ('notApplied' in outcome) throw outcome.notApplied;
  return outcome.entries;
}

/**
 * Applies the groups of several merchants (`postAll` each) in one transaction, so a batch of
 * payments to many merchants costs one ledger write, not one per merchant. Each group is still all
 * or nothing on its own: a group whose entry exists already, whose companion's condition fails, or
 * that would pass MAX_BALANCE comes back `notApplied` (nothing of it written) and the others are
 * tried again without it; a merchant whose balance moved is re-read and the transaction retried.
 * The caller keeps the writes under DynamoDB's 100 per transaction.
 */
export async function postGroups(groups: readonly Group[]): Promise<GroupOutcome[]> {
  return postGroupsPrepared(
    groups.map((group) => group.merchantId),
    async () => groups,
  );
}

/**
 * `postGroups` of the groups `prepare` makes (one per merchant of `merchantIds`, in that order)
 * once it holds the turns of all those merchants in this container: see `postPrepared`.
 */
export async function postGroupsPrepared(
  merchantIds: readonly string[],
  prepare: () => Promise<readonly Group[]>,
): Promise<GroupOutcome[]> {
  // Checked before the turns are taken: a merchant's turn taken twice would wait on itself.
  if (new Set(merchantIds).size !== merchantIds.length)
    throw new RangeError('postGroups takes one group per merchant');
  return inTurns(merchantIds, async () => {
    const groups = await prepare();
    if (
      groups.length !== merchantIds.length ||
      groups.some((group, i) => group.merchantId !== merchantIds[i])
    )
      throw new RangeError('the prepared groups are not those of the merchants whose turns were taken');
    const postings = groups.flatMap((group) => group.postings);
    if (postings.some((posting) => !(posting.amount > 0))) throw new RangeError('postAll takes credits only');
    // As `postPrepared` checks every single posting: a fraction of a kobo is never written.
    if (postings.some((posting) => !Number.isSafeInteger(posting.amount))) {
      throw new RangeError('a posting is a whole number of kobo');
    }
    if (new Set(postings.map((posting) => posting.entryId)).size !== postings.length) {
      throw new RangeError('postAll takes distinct entry ids');
    }
    return postGroupsNow(groups);
  });
}

/** Runs `work` holding the turns of every merchant, taken in one order so two callers never wait on each other. */
function inTurns<T>(merchantIds: readonly string[], work: () => Promise<T>): Promise<T> {
  const sorted = [...merchantIds].sort();
  const take = (i: number): Promise<T> => {
    const merchantId = sorted[i];
    return merchantId === undefined ? work() : inTurn(merchantId, () => take(i + 1));
  };
  return take(0);
}

/** A group in a transaction: where its writes are, and the balance it was computed from. */
interface Placed {
  index: number;
  merchantId: string;
  current: Balance & { fresh: boolean };
  entries: LedgerEntry[];
  /** The balance once the transaction is written. */
  after: Balance;
  /** Its balance update's position in the transaction; its entries follow, then its companions. */
  at: number;
  companionsAt: number;
  end: number;
}

async function postGroupsNow(groups: readonly Group[]): Promise<GroupOutcome[]> {
  const outcomes: (GroupOutcome | undefined)[] = groups.map(() => undefined);
  const fresh = groups.map(() => false);
  for (let attempt = 1; ; attempt++) {
    const pending = groups.flatMap((group, index) => (outcomes[index] ? [] : [{ group, index }]));
    if (pending.length === 0) return outcomes as GroupOutcome[];
    const now = new Date().toISOString();
    const placed: Placed[] = [];
    const items: NonNullable<ReturnType<Companions>>[number][] = [];
    const currents = await Promise.all(
      pending.map(async ({ group, index }) => {
        const total = group.postings.reduce((sum, posting) => sum + posting.amount, 0);
        let current = await balanceFor(group.merchantId, fresh[index] ?? false);
        // A remembered balance may be stale: the ceiling is only ever decided on a fresh read.
        if (!current.fresh && current.balance + total > config.limits.maxBalance) {
          current = await balanceFor(group.merchantId, true);
        }
        return current;
      }),
    );
    pending.forEach(({ group, index }, i) => {
      const current = currents[i] as Balance & { fresh: boolean };
      const { balance, version, lastEntryAt } = current;
      const first = nextEntryTime(lastEntryAt);
      let running = balance;
      const entries: LedgerEntry[] = group.postings.map((posting, n) => {
        running += posting.amount;
        return {
          entry_id: posting.entryId,
          merchant_id: group.merchantId,
          seq: version + 1 + n,
          amount: posting.amount,
          balance_after: running,
          category: posting.category,
          reference: posting.reference,
          created_at: new Date(first + n).toISOString(),
        };
      });
      const lastAt = entries.at(-1)?.created_at ?? lastEntryAt;
      if (running > config.limits.maxBalance) {
        outcomes[index] = { notApplied: new GroupNotApplied('balance_ceiling') };
        return;
      }
      const at = items.length;
      items.push(
        {
          Update: {
            TableName: tableName('merchants'),
            Key: { merchant_id: group.merchantId },
            // As for one posting: `updated_at` is the group's last entry's time.
            UpdateExpression:
              'SET balance = :after, version = :next, updated_at = :entryAt, last_entry_at = :entryAt',
            ConditionExpression: 'version = :version',
            ExpressionAttributeValues: {
              ':after': running,
              ':next': version + entries.length,
              ':version': version,
              ':entryAt': lastAt ?? now,
            },
          },
        },
        ...entries.map((entry) => ({
          Put: {
            TableName: tableName('ledgerEntries'),
            Item: entry,
            ConditionExpression: 'attribute_not_exists(entry_id)',
          },
        })),
      );
      const companionsAt = items.length;
      items.push(
        ...group.postings.flatMap((posting, n) => posting.companions?.(entries[n] as LedgerEntry) ?? []),
        ...(group.groupCompanions?.(entries) ?? []),
      );
      placed.push({
        index,
        merchantId: group.merchantId,
        current,
        entries,
        after: {
          balance: running,
          version: version + entries.length,
          lastEntryAt: lastAt,
        },
        at,
        companionsAt,
        end: items.length,
      });
    });
    if (placed.length === 0) continue;
    if (items.length > MAX_TRANSACTION_ITEMS)
      throw new RangeError(`a group of ${items.length} writes is over ${MAX_TRANSACTION_ITEMS}`);
    try {
      await dynamo.send(new TransactWriteCommand({ TransactItems: items }));
      for (const { index, merchantId, entries, after } of placed) {
        remember(merchantId, after);
        outcomes[index] = { entries };
      }
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) {
        // The write may have landed (an answer lost): no balance here is known any more.
        for (const { merchantId } of placed) lastKnown.delete(merchantId);
        throw error;
      }
      const reasons = error.CancellationReasons ?? [];
      const code = (i: number) => reasons[i]?.Code ?? 'Unknown';
      const failed = (from: number, to: number) =>
        reasons.slice(from, to).some((reason) => reason.Code === 'ConditionalCheckFailed');
      let contended = metContention(reasons);
      for (const { index, merchantId, current, at, companionsAt, end } of placed) {
        if (failed(at + 1, companionsAt))
          outcomes[index] = { notApplied: new GroupNotApplied('already_applied') };
        else if (failed(companionsAt, end))
          outcomes[index] = { notApplied: new GroupNotApplied('companion_conflict') };
        // Its balance moved, or another transaction held it: read it afresh. A group that was only
        // cancelled with the others ('None') keeps the balance it knows.
        if (code(at) !== 'None') {
          lastKnown.delete(merchantId);
          fresh[index] = true;
          if (current.fresh && !outcomes[index]) contended = true;
        }
      }
      if (outcomes.every((outcome) => outcome)) continue;
      if (attempt >= MAX_ATTEMPTS) {
        logger.error('ledger group posting gave up after conflicts', {
          merchant_ids: placed.map(({ merchantId }) => merchantId),
          attempts: attempt,
        });
        throw error;
      }
      // A version moved under a fresh read (another posting won) or the transaction conflicted:
      // back off before reading again. Balances that were merely stale memories are re-read at once.
      if (contended) await backoff(attempt);
    }
  }
}

/** Credits `amount` kobo (> 0) once per entry id. */
export function credit(posting: Omit<Posting, 'amount'> & { amount: number }): Promise<PostResult> {
  return post(positiveCredit(posting));
}

/** `credit` of the posting `prepare` makes in the merchant's turn (see `postPrepared`). */
export function creditPrepared(
  merchantId: string,
  prepare: () => Promise<Omit<Posting, 'merchantId'>>,
): Promise<PostResult> {
  return postPrepared(merchantId, async () => positiveCredit(await prepare()));
}

/** The posting itself, if it credits: a credit of zero or less is a bug, never posted. */
function positiveCredit<P extends { amount: number }>(posting: P): P {
  if (!(posting.amount > 0)) throw new RangeError('a credit is a positive amount');
  return posting;
}

/** Debits `amount` kobo (> 0) once per entry id, only if the balance covers it. */
export function debit(posting: Omit<Posting, 'amount'> & { amount: number }): Promise<PostResult> {
  if (!(posting.amount > 0)) throw new RangeError('a debit is a positive amount');
  return post({ ...posting, amount: -posting.amount });
}

/** The entry id that reverses an entry: one reversal per original, ever. */
export function reversalEntryId(originalEntryId: string): string {
  return `reversal:${originalEntryId}`;
}

/**
 * Gives back what an entry took: a credit of the same amount under `reversal:<entry id>`. Applies
 * once however often it is called; the original must exist and be a debit.
 */
export async function reverse(
  originalEntryId: string,
  details: { reference: string; companions?: Companions },
): Promise<PostResult> {
  const original = await getEntry(originalEntryId);
  if (!original || original.amount >= 0) throw new Error(`no debit ${originalEntryId} to reverse`);
  return post({
    entryId: reversalEntryId(originalEntryId),
    merchantId: original.merchant_id,
    amount: -original.amount,
    category: 'reversal',
    reference: details.reference,
    companions: details.companions,
  });
}
