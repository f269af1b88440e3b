import { userInfo } from 'node:os';
import { pathToFileURL } from 'node:url';
import { SSMClient } from '@aws-sdk/client-ssm';
import { loadStageConfig, resolveRegion, useStageEnvironment } from '#infra/cli/aws-stage.ts';
import {
  parseCommandLine,
  Refusal,
  refuseOptionsNotTaken,
  runMain,
  shellSettingsNote,
  usage,
  useLocalEnvironment,
} from '#infra/cli/command-line.ts';
import { QUEUE_LIST } from '#shared/definitions/queues.ts';
import { isIsoDateTime } from '#shared/schemas.ts';

/**
 * Operator tools: `npm run ops -- dlq …` (dead-letter queues), `npm run ops -- unmatched …`
 * (payments nobody could be credited for), `given-up …` / `events fan-out` (merchant webhooks
 * the events stream never fanned out), and `ledger audit` (each merchant's ledger checked). Without `--stage` it talks to a running `npm start`
 * (its DynamoDB Local and local SQS); with `--stage <name>` to a deployed stack, found as
 * `npm run keys` finds it. The work is done by shared/ (aws/dead-letters.ts, payments/operator.ts,
 * merchant-webhooks/given-up.ts).
 */
const QUEUE_NAMES = QUEUE_LIST.map((queue) => queue.name);
const USAGE = `Usage:
  npm run ops -- dlq list [--queue ${QUEUE_NAMES.join('|')}] [--json] [--stage prod]
  npm run ops -- dlq redrive [--queue …] [--message <message_id>] [--json] [--stage prod]
  npm run ops -- unmatched list [--status open,held|credited|returned|all] [--json] [--stage prod]
  npm run ops -- unmatched credit <id> --merchant <merchant_id> --reason "<text>" [--allow-over-max-balance] [--not-the-owner] [--by <name>] [--json] [--stage prod]
  npm run ops -- unmatched return <id> --reason "<text>" [--by <name>] [--json] [--stage prod]
  npm run ops -- given-up list [--json] [--stage prod]
  npm run ops -- given-up replay [--message <message_id>] [--json] [--stage prod]
  npm run ops -- events fan-out --from <time> --to <time> [--json] [--stage prod]
  npm run ops -- ledger audit [--merchant <merchant_id>] [--json] [--stage prod]
  npm run ops -- transfers show <reference> --merchant <merchant_id> [--json] [--stage prod]
  npm run ops -- transfers fail <reference> --merchant <merchant_id> --reason "<text>" [--partner-checked] [--by <name>] [--json] [--stage prod]
With --stage, --region <region> sets the AWS region of every call (default: AWS_REGION, else the profile's region).

ledger audit checks every merchant's ledger (or one's): the balance is the sum of its entries, the
entries run 1..n without gaps, each balance_after follows from the one before, none below zero.

transfers show prints a transfer as the merchant sees it, and its hand-overs to the partner (how
many, the last, until when resends are held): it reads only, and asks the partner nothing.

transfers fail ends a pending transfer failed and gives amount + fee back, for one the partner
never made (check with the partner first: the service never fails a transfer by guess; it asks the
configured partner too, and refuses one the partner has). The reason is shown to the merchant.
Refused within 15 minutes of its last hand-over to the partner, and for one sent through another
partner, or another account of it that does not show it, than the configured one (locally your
shell's PARTNER and PAYSTACK_SECRET_KEY: give the service's (it says when PARTNER differs); with
--stage, the stage's): only
--partner-checked, after looking the transfer up with that partner yourself, fails it then.

Exit codes: 0 done, 1 failed (e.g. the service did not answer, a batch could not be replayed, or
the audit found a problem),
2 wrong command line or unknown id, merchant, message or transfer, 3 refused (already resolved or
credited, not creditable, past MAX_BALANCE, a transfer not pending, sent in the last 15 minutes,
known to the partner, or with a partner the command cannot ask, without --partner-checked).`;

/** Each group's commands and the options each reads (as USAGE lists them), besides every command's. */
const OPTIONS_OF: Record<string, Record<string, readonly string[]>> = {
  dlq: { list: ['queue'], redrive: ['queue', 'message'] },
  unmatched: {
    list: ['status'],
    credit: ['merchant', 'reason', 'by', 'allow-over-max-balance', 'not-the-owner'],
    return: ['reason', 'by'],
  },
  'given-up': { list: [], replay: ['message'] },
  events: { 'fan-out': ['from', 'to'] },
  ledger: { audit: ['merchant'] },
  transfers: { show: ['merchant'], fail: ['merchant', 'reason', 'by', 'partner-checked'] },
};

/** Refusals that mean the command named something that does not exist (exit 2, like a typo). */
const NAMING_MISTAKES = new Set(['not_found', 'ambiguous', 'unknown_merchant', 'reason_required']);

function operatorName(given: string | undefined): string {
  if (given?.trim()) return given.trim();
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Runs one CLI command; returns what it prints. */
export async function runOps(argv: string[]): Promise<string> {
  const { values, positionals, tokens } = parseCommandLine(argv, {
    queue: { type: 'string', default: 'payment-events' },
    message: { type: 'string' },
    status: { type: 'string', default: 'open,held' },
    merchant: { type: 'string' },
    reason: { type: 'string' },
    by: { type: 'string' },
    'allow-over-max-balance': { type: 'boolean', default: false },
    'not-the-owner': { type: 'boolean', default: false },
    'partner-checked': { type: 'boolean', default: false },
    stage: { type: 'string' },
    region: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) return USAGE;
  const [group, command, id, ...extra] = positionals;
  if (group === undefined)
    usage(
      'give a command: dlq list, dlq redrive, unmatched list, credit or return, given-up list or replay, events fan-out, ledger audit, transfers show or fail',
    );
  const commands = group !== undefined && Object.hasOwn(OPTIONS_OF, group) ? OPTIONS_OF[group] : undefined;
  const options =
    commands && command !== undefined && Object.hasOwn(commands, command)
      ? (commands[command] ?? [])
      : usage(`unknown command ${positionals.join(' ')}`);
  if (extra.length > 0 || (id !== undefined && !['credit', 'return', 'fail', 'show'].includes(command ?? '')))
    usage(`unexpected ${[id, ...extra].filter(Boolean).join(' ')}`);
  refuseOptionsNotTaken(tokens, `${group} ${command}`, options);
  process.env.LOG_LEVEL ??= 'ERROR';
  if (values.stage !== undefined) {
    // One region for every AWS call (SSM, DynamoDB, SQS): --region, else the profile's.
    const region = await resolveRegion(values.region as string | undefined);
    useStageEnvironment(await loadStageConfig(values.stage, new SSMClient({ region })), region);
  } else {
    if (values.region !== undefined) usage('--region goes with --stage');
    // The sandbox too: `transfers fail` asks the partner first (the only command that calls it).
    useLocalEnvironment(
      group === 'transfers' && command === 'fail' ? ['dynamodb', 'sqs', 'partner'] : ['dynamodb', 'sqs'],
    );
  }
  const print = (json: unknown, text: string) => (values.json ? JSON.stringify(json) : text);
  if (group === 'dlq') return deadLetters(command ?? '', values, print);
  if (group === 'unmatched') return unmatched(command ?? '', id, values, print);
  if (group === 'ledger') return auditLedgers(values, print);
  if (group === 'transfers' && command === 'show') return showTransfer(id, values, print);
  if (group === 'transfers') return failTransfer(id, values, print);
  return givenUp(command ?? '', values, print);
}

type Values = Record<string, string | boolean | undefined>;
type Print = (json: unknown, text: string) => string;

async function deadLetters(command: string, values: Values, print: Print): Promise<string> {
  const queue = QUEUE_LIST.find((definition) => definition.name === values.queue);
  if (!queue) return usage(`--queue must be one of ${QUEUE_NAMES.join(', ')}`);
  // Imported after the environment is set: the shared modules read their configuration at load.
  const { listDeadLetters, queuePair, redriveDeadLetters } = await import('#shared/aws/dead-letters.ts');
  const pair = await queuePair(queue);
  if (command === 'list') {
    const messages = await listDeadLetters(pair.deadLetters);
    return print(
      messages,
      messages.length === 0
        ? `No messages in the dead-letter queue of ${queue.name}`
        : [
            `${messages.length} message(s) in the dead-letter queue of ${queue.name} (left there):`,
            ...messages.map(
              (m) => `  ${m.messageId}  received ${m.receiveCount}x  sent ${m.sentAt ?? '?'}  ${m.summary}`,
            ),
          ].join('\n'),
    );
  }
  const messageId = typeof values.message === 'string' ? values.message : undefined;
  const moved = await redriveDeadLetters(pair, { messageId });
  if (messageId && moved.length === 0)
    usage(
      `no message ${messageId} in the dead-letter queue of ${queue.name} (or it is hidden for up to 30 s by a dlq list or redrive running elsewhere: run again then)`,
    );
  return print(
    moved,
    moved.length === 0
      ? `No messages in the dead-letter queue of ${queue.name}: nothing to move (a dlq list or redrive running elsewhere hides its messages for up to 30 s)`
      : [
          `Moved ${moved.length} message(s) back to ${queue.name} (new ids):`,
          ...moved.map((m) => `  ${m.from} -> ${m.to}  ${m.summary}`),
        ].join('\n'),
  );
}

/**
 * A time given on the command line: ISO 8601 with its offset (`Z` or `+01:00`), since a time without
 * one would be read in this machine's time zone and shift the window silently.
 */
function timeOption(values: Values, name: 'from' | 'to'): string {
  const given = values[name];
  if (typeof given !== 'string')
    return usage(`fan-out needs --${name} <time> (ISO 8601 with its offset, e.g. 2026-11-24T10:00:00Z)`);
  // As the API reads times: a real day and time of day (`Date.parse` reads 2026-02-30 as 2 March).
  if (!isIsoDateTime(given))
    return usage(`--${name}: not a real ISO 8601 time with its offset (Z or +01:00): ${given}`);
  return new Date(Date.parse(given)).toISOString();
}

async function givenUp(command: string, values: Values, print: Print): Promise<string> {
  const { fanOutAgain, listGivenUp, replayGivenUp } = await import('#shared/merchant-webhooks/given-up.ts');
  type Batch = Awaited<ReturnType<typeof listGivenUp>>[number];
  type Report = Awaited<ReturnType<typeof fanOutAgain>>;
  const describe = (batch: Batch) =>
    `  ${batch.messageId}  ${batch.condition ?? '?'}  ${batch.batchSize ?? '?'} record(s) of ${batch.shardId ?? '?'} ` +
    `(${batch.firstSequence ?? '?'}..${batch.lastSequence ?? '?'}) arrived ${batch.firstArrival ?? '?'} to ${batch.lastArrival ?? '?'}` +
    (batch.window ? '' : '  (not a description of a stream batch)');
  const fannedOut = (report: Report, indent: string, after = '') =>
    [
      `${indent}${indent ? 'f' : 'F'}anned out again ${report.events} event(s) created ${report.from} to ${report.to} (of ${report.merchants} merchant(s)): ${report.queued} delivery(ies) queued${after}`,
      ...report.skipped.map(
        (event) =>
          `${indent}  SKIPPED ${event.merchant_id} ${event.event_id}: it can never be fanned out as it is: ${event.error}`,
      ),
    ].join('\n');
  if (command === 'fan-out') {
    const from = timeOption(values, 'from');
    const to = timeOption(values, 'to');
    if (from > to) usage(`--from ${from} is after --to ${to}`);
    const report = await fanOutAgain({ from, to });
    return failIf(print(report, fannedOut(report, '')), skippedProblem(report.skipped.length));
  }
  if (command === 'list') {
    const batches = await listGivenUp();
    return print(
      batches,
      batches.length === 0
        ? 'No batches given up by the events stream'
        : [
            `${batches.length} batch(es) given up by the events stream (left in the queue):`,
            ...batches.map(describe),
          ].join('\n'),
    );
  }
  const messageId = typeof values.message === 'string' ? values.message : undefined;
  const replayed = await replayGivenUp({ messageId });
  if (messageId && replayed.length === 0) usage(`no message ${messageId} in the given-up queue`);
  const lines = replayed.map((batch) =>
    batch.deleted && batch.fannedOut
      ? `${describe(batch)}\n${fannedOut(batch.fannedOut, '    ', '; message deleted')}`
      : `${describe(batch)}\n    NOT replayed, left in the queue: ${batch.error}`,
  );
  const output = print(
    replayed,
    replayed.length === 0 ? 'No batches given up by the events stream: nothing to replay' : lines.join('\n'),
  );
  const left = replayed.filter((batch) => !batch.deleted).length;
  const skipped = replayed.reduce((sum, batch) => sum + (batch.fannedOut?.skipped.length ?? 0), 0);
  return failIf(output, [...(left ? [`${left} batch(es) not replayed`] : []), ...skippedProblem(skipped)]);
}

/**
 * `ledger audit`: each merchant's ledger against its balance (`shared/ledger/audit.ts`), every
 * merchant's (a scan of the merchants table) or the one of `--merchant`. Best run while the
 * merchants are quiet: on AWS the entries are read from an index a moment behind the balance.
 * Any problem makes the command fail (exit 1) after printing the reports.
 */
async function auditLedgers(values: Values, print: Print): Promise<string> {
  const { auditMerchant } = await import('#shared/ledger/audit.ts');
  let merchantIds: string[];
  if (typeof values.merchant === 'string') {
    const { getMerchant } = await import('#shared/merchants/store.ts');
    if (!(await getMerchant(values.merchant))) usage(`no merchant ${values.merchant}`);
    merchantIds = [values.merchant];
  } else {
    const { scanAll } = await import('#shared/aws/scan.ts');
    const { tableName } = await import('#shared/aws/clients.ts');
    const items = await scanAll<{ merchant_id: string }>({
      TableName: tableName('merchants'),
      ProjectionExpression: 'merchant_id',
    });
    merchantIds = items.map((item) => item.merchant_id).sort();
  }
  const reports = [];
  for (const merchantId of merchantIds) reports.push(await auditMerchant(merchantId));
  const unsound = reports.filter((report) => report.problems.length > 0);
  const lines = reports.map(
    (report) =>
      `${report.merchantId}  balance ${report.balance}  ${report.entries} entries summing to ${report.sumOfEntries}${report.postedSince ? ` (and ${report.postedSince} posted while it read, in the chain)` : ''}  ${report.problems.length === 0 ? 'sound' : `${report.problems.length} PROBLEM(S)`}` +
      report.problems.map((problem) => `\n    ${problem}`).join(''),
  );
  const output = print(
    reports,
    [...lines, `${reports.length} merchant(s) audited, ${unsound.length} with problems`].join('\n'),
  );
  return failIf(
    output,
    unsound.length ? [`the ledgers of ${unsound.length} merchant(s) have problems: see above`] : [],
  );
}

/**
 * `transfers show <reference>`: one transfer as its merchant sees it, and its hand-overs, reading
 * only (the partner is not asked). Resends are held until the later of the partner's hold (an
 * answer that it has the transfer) and an operator's (`transfers fail` refused as sent lately).
 */
async function showTransfer(reference: string | undefined, values: Values, print: Print): Promise<string> {
  const { getTransaction, resendsHeldUntil, toApiTransaction } = await import(
    '#shared/transactions/store.ts'
  );
  if (!reference) return usage('transfers show needs the reference of a transfer');
  if (typeof values.merchant !== 'string') return usage('transfers show needs --merchant <merchant_id>');
  const merchantId = values.merchant;
  const transfer = await getTransaction(merchantId, reference);
  if (transfer?.category !== 'transfer')
    return usage(
      `no transfer ${reference} of ${merchantId} (a transfer's own reference, as the merchant gave it)`,
    );
  const heldUntil = resendsHeldUntil(transfer);
  const handOvers = {
    partner: transfer.partner ?? null,
    partner_reference: transfer.partner_reference ?? null,
    partner_account: transfer.partner_account ?? null,
    dispatches: transfer.dispatches ?? 0,
    dispatched_at: transfer.dispatched_at ? at(transfer.dispatched_at) : null,
    resends_held_until: heldUntil > Date.now() ? at(heldUntil) : null,
    kept_refusal: transfer.refusal ?? null,
    failed_by: transfer.failed_by ?? null,
  };
  const api = toApiTransaction(transfer);
  return print(
    { ...api, ...handOvers },
    [
      `Transfer ${shown(transfer.reference)} of ${merchantId}: ${api.status}, ${api.amount} kobo + ${api.fee} fee to ${api.counterparty.account_number} (${api.counterparty.bank_code}), created ${api.created_at}`,
      `  partner ${handOvers.partner ?? 'none'}${handOvers.partner_account ? ` (account ${shown(handOvers.partner_account)})` : ''}, its reference ${shown(handOvers.partner_reference ?? 'none')}; handed over ${handOvers.dispatches} time(s), last ${at(transfer.dispatched_at)}; ${handOvers.resends_held_until ? `resends held until ${handOvers.resends_held_until}` : 'resends not held'}`,
      ...(transfer.refusal
        ? [
            `  the partner's refusal of hand-over ${transfer.refusal.dispatch} is kept, not yet applied: ${shown(transfer.refusal.reason)}`,
          ]
        : []),
      ...(transfer.failure_reason ? [`  reason: ${shown(transfer.failure_reason)}`] : []),
      ...(transfer.failed_by ? [`  failed by ${shown(transfer.failed_by)} (transfers fail)`] : []),
    ].join('\n'),
  );
}

/** A time for an operator: ISO 8601 (UTC), or "never". */
const at = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : 'never');

/**
 * `transfers fail <reference>`: a pending transfer the partner never made, ended failed with its
 * money given back (`shared/transfers/operator.ts`).
 */
async function failTransfer(reference: string | undefined, values: Values, print: Print): Promise<string> {
  const { failTransfer: fail, TransferOperatorError } = await import('#shared/transfers/operator.ts');
  const { toApiTransaction } = await import('#shared/transactions/store.ts');
  if (!reference) usage('transfers fail needs the reference of a transfer');
  const merchantId =
    typeof values.merchant === 'string'
      ? values.merchant
      : usage('transfers fail needs --merchant <merchant_id>');
  const reason = typeof values.reason === 'string' ? values.reason.trim() : '';
  if (!reason)
    usage('transfers fail needs --reason "<text>" (the merchant sees it as the failure\'s reason)');
  try {
    const { transfer: failed, partnerAsked } = await fail(merchantId ?? '', reference ?? '', {
      reason,
      by: operatorName(values.by as string | undefined),
      partnerChecked: values['partner-checked'] === true,
    });
    return print(
      { ...toApiTransaction(failed), failed_by: failed.failed_by, partner_asked: partnerAsked },
      `Transfer ${reference} of ${merchantId}: failed, ${failed.amount + failed.fee} kobo given back (ledger entry reversal:${reference}); ${partnerAsked}`,
    );
  } catch (error) {
    if (!(error instanceof TransferOperatorError)) throw error;
    if (error.code === 'not_found') usage(error.message);
    // The partner not answering is a failure to try again (exit 1), not a refusal.
    if (error.code === 'partner_unavailable') throw new Error(error.message);
    throw new Refusal(error.message);
  }
}

/**
 * Text from a partner (an id, an event name) or an operator as one terminal line: a control
 * character (which would act on the terminal, or start a false line), a line separator or a
 * bidirectional control is written as its `\u` escape. `--json` escapes them as JSON does.
 */
export function shown(text: string): string {
  return text.replace(
    /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Printed either way; what is left for a person makes the command fail (exit 1), so a script notices. */
function failIf(output: string, problems: string[]): string {
  if (problems.length === 0) return output;
  console.log(output);
  throw new Error(problems.join('; '));
}

function skippedProblem(count: number): string[] {
  return count
    ? [
        `${count} event(s) skipped: fix what is wrong with them, then run events fan-out around their time (their ids start with it)`,
      ]
    : [];
}

async function unmatched(command: string, id: string | undefined, values: Values, print: Print) {
  const { UNMATCHED_STATUSES, statusOf } = await import('#shared/payments/unmatched.ts');
  const { listUnmatched } = await import('#shared/payments/operator.ts');
  const operator = await import('#shared/payments/operator.ts');
  // An unusable delivery has neither an amount nor an account the service could read: its body
  // (in --json) is what the operator reads them from.
  type View = ReturnType<typeof operator.toOperatorView> & {
    account_owner?: Awaited<ReturnType<typeof operator.accountOwnerOf>>;
  };
  const what = (view: View) =>
    view.delivery
      ? `unusable delivery (${view.delivery.partner_event ?? 'no event type'}, ${view.delivery.body_bytes} bytes; body in --json)`
      : `${view.amount} kobo  to ${view.account_number ?? (view.account_ids.join(',') || 'unknown account')}${
          view.account_owner ? ` of ${operator.ownerText(view.account_owner)}` : ''
        }`;
  const describe = (view: View) =>
    shown(`${view.id}  ${view.status.padEnd(8)}  ${what(view)}  ${view.received_at}  ${view.reason}`) +
    (view.resolved_at
      ? `\n    ${shown(`${view.status} ${view.resolved_at} by ${view.resolved_by}${view.merchant_id ? ` to ${view.merchant_id} (${view.entry_id})` : ''}: ${view.resolution_reason}`)}`
      : '');

  if (command === 'list') {
    const wanted = String(values.status).split(',');
    const unknown = wanted.filter((s) => s !== 'all' && !UNMATCHED_STATUSES.includes(s as never));
    if (unknown.length)
      usage(
        `--status: unknown ${unknown.join(', ')} (one or more of ${UNMATCHED_STATUSES.join(', ')}, or all)`,
      );
    // Whose account each was paid into, where the service knows it: who to credit, and who not.
    const views = await Promise.all(
      (await listUnmatched())
        .filter((record) => wanted.includes('all') || wanted.includes(statusOf(record)))
        .map(async (record) => ({
          ...operator.toOperatorView(record),
          account_owner: await operator.accountOwnerOf(record),
        })),
    );
    return print(
      views,
      views.length === 0 ? `No unmatched payments (${values.status})` : views.map(describe).join('\n'),
    );
  }

  const paymentId = id ?? usage(`${command} needs the id of an unmatched payment (see unmatched list)`);
  const reason = typeof values.reason === 'string' && values.reason.trim() ? values.reason.trim() : undefined;
  if (!reason) usage(`${command} needs --reason "<text>" (kept with the payment: the audit trail)`);
  const action = { reason: reason ?? '', by: operatorName(values.by as string | undefined) };
  try {
    if (command === 'credit') {
      const merchantId =
        typeof values.merchant === 'string'
          ? values.merchant
          : usage('credit needs --merchant <merchant_id>');
      // Locally, with no running service's settings to check with, the shell's are said.
      const { config } = await import('#shared/config.ts');
      const note =
        values.stage === undefined ? shellSettingsNote('MAX_BALANCE', config.limits.maxBalance) : undefined;
      if (note) console.error(note);
      const { record, entry } = await operator.creditUnmatched(paymentId, {
        ...action,
        merchantId,
        allowPastMaxBalance: values['allow-over-max-balance'] === true,
        notTheOwner: values['not-the-owner'] === true,
      });
      const view = operator.toOperatorView(record);
      return print(
        { ...view, balance_after: entry.balance_after },
        `Credited ${entry.amount} kobo to ${merchantId} (ledger entry ${entry.entry_id}, balance now ${entry.balance_after})\n${describe(view)}`,
      );
    }
    const view = operator.toOperatorView(await operator.returnUnmatched(paymentId, action));
    return print(view, `Marked returned (no money moved)\n${describe(view)}`);
  } catch (error) {
    if (!(error instanceof operator.OperatorError)) throw error;
    if (NAMING_MISTAKES.has(error.code)) usage(error.message);
    const hint =
      error.code === 'over_max_balance'
        ? ' (give --allow-over-max-balance to credit it anyway)'
        : error.code === 'not_the_owner'
          ? ' (credit it to them, or give --not-the-owner to credit this merchant all the same)'
          : '';
    throw new Refusal(shown(`${error.message}${hint}`));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runMain(() => runOps(process.argv.slice(2)), {
    usage: USAGE,
    tried: ['dynamodb', 'sqs', 'partner'],
    portsHint: 'is `npm start` running? DYNAMODB_PORT, SQS_PORT and SANDBOX_PORT set other ports.',
  });
}
