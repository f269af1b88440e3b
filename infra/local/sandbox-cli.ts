import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { useLocalEnvironment } from '#infra/cli/command-line.ts';
import { DEFAULT_PORTS } from '#infra/local/ports.ts';
import { signatureProblem } from '#shared/crypto/standard-webhooks.ts';
import { EVENT_TYPES } from '#shared/events/types.ts';
import { PAYMENT_ID, PAYMENT_ID_MAX } from '#shared/partners/partner.ts';

/**
 * `npm run sandbox -- <command>`, the local sandbox's helpers (API.md §8):
 * - `pay`: a customer pays into an account at the sandbox bank, which signs and sends
 *   `payment.received` to the running service; it returns once the service has credited it;
 * - `listen`: a local receiver, registered as a webhook endpoint, that verifies and prints every
 *   event delivered to it (like `stripe listen`), and deletes its endpoint when stopped.
 */
const USAGE = `Usage:
  npm run sandbox -- pay --account <account_number> --amount <kobo> [--session-id <id>]
      A customer pays into an account at the sandbox bank, which sends payment.received to the
      service (--session-id repeats an earlier payment, as a redelivery would). Returns once the
      service has credited it (or kept it for operators), read from DynamoDB Local at
      $DYNAMODB_PORT (8000), in the tables named with $TABLE_PREFIX (naira-local-). Exits 0
      when it says what became of the payment, 3 when the sandbox paid but the credit was not
      seen within 15 s or could not be checked, 1 when the service refused the payment, 2 for a
      mistake in the command line or a sandbox that refused or could not be reached.
  npm run sandbox -- listen [--port <n>] [--key <pk_…> --secret <sk_…>] [--events <type,…>] [--base-url <url>]
      Registers a receiver on 127.0.0.1 (--port, default: a free one) as a webhook endpoint of the
      demo merchant (or of --key/--secret), verifies each delivery's signature and prints the
      events (--events: only these types). Ctrl-C deletes the endpoint. --base-url defaults to
      http://127.0.0.1:$PORT (3000).
  npm start must be running for both.`;

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const HELP_OPTION = { help: { type: 'boolean', short: 'h', default: false } } as const;
const PAY_OPTIONS = {
  account: { type: 'string' },
  amount: { type: 'string' },
  'session-id': { type: 'string' },
  ...HELP_OPTION,
} as const;
const LISTEN_OPTIONS = {
  port: { type: 'string' },
  key: { type: 'string' },
  secret: { type: 'string' },
  events: { type: 'string' },
  'base-url': { type: 'string' },
  ...HELP_OPTION,
} as const;

/** Largest delivery body read: events are a few KB, so anything bigger is not one. */
const MAX_BODY_BYTES = 1024 * 1024;

/** A mistake in the command line: the message, the usage, exit code 2. */
function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

/** A failure of the command itself (the API refused, nothing listening): exit code 1. */
function failure(message: string): never {
  console.error(message);
  process.exit(1);
}

/** The command line parsed by `parse`, or a usage error for an unknown or malformed option. */
function parsedOrUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    return usageError(String((error as Error)?.message ?? error));
  }
}

async function main(argv: string[]): Promise<void> {
  // Options may come before the command, so the command is found by parsing with every option.
  const { values, positionals } = parsedOrUsage(() =>
    parseArgs({ args: argv, allowPositionals: true, options: { ...PAY_OPTIONS, ...LISTEN_OPTIONS } }),
  );
  if (values.help) return console.log(USAGE);
  const command = positionals[0];
  if (command === undefined) usageError('Give a command: pay or listen');
  if (command === 'pay') {
    const pay = parsedOrUsage(() => parseArgs({ args: argv, allowPositionals: true, options: PAY_OPTIONS }));
    return payCommand(pay.values);
  }
  if (command === 'listen') {
    const listen = parsedOrUsage(() =>
      parseArgs({ args: argv, allowPositionals: true, options: LISTEN_OPTIONS }),
    );
    return listenCommand(listen.values);
  }
  usageError('the command is pay or listen');
}

// pay

/** How long `pay` waits for the service to take the payment off its queue (it does in well under a second). */
const CREDIT_WAIT_MS = 15_000;
/**
 * How long a redelivery of a payment kept for operators is watched for a credit: one with the same
 * details leaves nothing new to see, so the wait ends there.
 */
const KEPT_REDELIVERY_WAIT_MS = 3_000;

async function payCommand(values: { account?: string; amount?: string; 'session-id'?: string }) {
  if (!/^\d{10}$/.test(values.account ?? '')) usageError('--account must be a 10-digit account number');
  if (!/^[1-9]\d{0,14}$/.test(values.amount ?? '')) {
    usageError('--amount must be a positive whole number of kobo');
  }
  const repeated = values['session-id'];
  // The service's rule for a payment id (another is kept for operators, never credited).
  if (repeated !== undefined && !(PAYMENT_ID.test(repeated) && repeated.length <= PAYMENT_ID_MAX)) {
    usageError(`--session-id must be 1 to ${PAYMENT_ID_MAX} letters, digits, _ . = or -`);
  }
  const before = repeated === undefined ? undefined : await paymentOutcome(repeated);
  const sandbox = `http://127.0.0.1:${process.env.SANDBOX_PORT ?? DEFAULT_PORTS.SANDBOX_PORT}`;
  const response = await fetch(`${sandbox}/v1/_simulate/payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      account_number: values.account,
      amount: Number(values.amount),
      session_id: repeated,
    }),
  }).catch(() => usageError(`Could not reach the sandbox partner at ${sandbox}: is \`npm start\` running?`));
  const result = (await response.json()) as Record<string, unknown>;
  if (!response.ok) usageError(`The sandbox refused: ${JSON.stringify(result)}`);
  const status = Number(result.webhook_status);
  if (!(status >= 200 && status < 300)) {
    // The bank "paid", but the service did not take the news: nothing will be credited.
    failure(
      [
        `The sandbox sent payment.received for ${values.account}, but the service answered ${result.webhook_status} ${result.webhook_response}: nothing is credited.`,
        'Is `npm start` running with the sandbox partner (PARTNER unset)? With PARTNER=paystack, payments come from Paystack.',
      ].join('\n'),
    );
  }
  const sessionId = String(result.session_id);
  // Said before the wait: interrupted, the reader still knows the payment was made, and its id.
  console.log(
    [
      before?.entry && before.entry.amount !== Number(values.amount)
        ? `Paid ${values.amount} kobo into ${values.account} under the id of payment ${sessionId} (credited with ${before.entry.amount} kobo): another payment, as a partner reusing its id would send`
        : before?.entry || before?.kept || before?.returned
          ? `Delivered payment ${sessionId} into ${values.account} again, as a partner's redelivery would`
          : `Paid ${values.amount} kobo into ${values.account}`,
      `  session_id:  ${sessionId}`,
      `  webhook:     ${result.webhook_status} ${result.webhook_response}`,
    ].join('\n'),
  );
  const settled = await settledLine(sessionId, before);
  console.log(`  ${settled.line}`);
  // Paid, but what became of it is not known: a script must not read that as credited.
  if (!settled.known) process.exitCode = UNCONFIRMED_EXIT_CODE;
}

/** `pay`'s exit code when the sandbox paid but the credit was not seen (in time, or at all). */
const UNCONFIRMED_EXIT_CODE = 3;

/** What `pay` prints last, and whether it says what became of the payment. */
interface Settled {
  line: string;
  /** Credited, kept for operators or returned; false when not seen in time or not checked. */
  known: boolean;
}

/** What a payment's ledger entry, kept records and claim say, read from the service's tables. */
interface PaymentOutcome {
  entry?: { amount: number; merchant_id: string; balance_after: number; entry_id: string };
  kept?: { reason: string; count: number };
  /** Returned to its payer by an operator: never credited. */
  returned?: true;
  /** Why the tables could not be read. */
  unreadable?: string;
}

/**
 * What the service made of the payment, once the consumer has taken it off the queue (read from
 * its tables in DynamoDB Local), so that what runs next (a `GET /balance`) sees it. A redelivery
 * of a credited or returned payment changes nothing: said at once.
 */
async function settledLine(sessionId: string, before: PaymentOutcome | undefined): Promise<Settled> {
  const known = (line: string): Settled => ({ line, known: true });
  const credited = (entry: NonNullable<PaymentOutcome['entry']>) =>
    `credited:    ${entry.amount} kobo to ${entry.merchant_id}, balance after ${entry.balance_after} (ledger entry ${entry.entry_id})`;
  if (before?.entry) {
    return known(
      `${credited(before.entry)} by its first delivery: the redelivery credits nothing again (one with other details is kept for operators: npm run ops -- unmatched list)`,
    );
  }
  if (before?.returned)
    return known('not credited: returned to its payer by an operator; the redelivery credits nothing');
  const waitMs = before?.kept ? KEPT_REDELIVERY_WAIT_MS : CREDIT_WAIT_MS;
  const until = Date.now() + waitMs;
  for (;;) {
    const now = await paymentOutcome(sessionId);
    if (now.unreadable) return { line: now.unreadable, known: false };
    if (now.entry) return known(credited(now.entry));
    if (now.returned) return known('not credited: returned to its payer by an operator');
    // Kept now, or kept beside what was kept before (other details under the same id).
    if (now.kept && now.kept.count > (before?.kept?.count ?? 0)) {
      return known(`not credited: kept for operators (${now.kept.reason}): npm run ops -- unmatched list`);
    }
    if (Date.now() >= until) {
      // A redelivery of a kept payment that is still kept is an answer; silence from a first one is not.
      return before?.kept
        ? known(
            `not credited: still kept for operators (${before.kept.reason}): npm run ops -- unmatched list`,
          )
        : {
            line: `not credited within ${waitMs / 1000} s: it is credited when the consumer takes it off the queue (npm start's log says why not yet)`,
            known: false,
          };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let tables: ReturnType<typeof loadServiceTables> | undefined;
/** The service's own readers of its tables, pointed at `npm start`'s DynamoDB Local: loaded once. */
const serviceTables = () => {
  tables ??= loadServiceTables();
  return tables;
};
function loadServiceTables() {
  useLocalEnvironment(['dynamodb']);
  return Promise.all([
    import('#shared/ledger/ledger.ts'),
    import('#shared/payments/credit.ts'),
    import('#shared/payments/unmatched.ts'),
  ]);
}

/** The payment's ledger entry, kept records or return, as they stand (or why they could not be read). */
async function paymentOutcome(sessionId: string): Promise<PaymentOutcome> {
  try {
    const [{ EntryClaimed, getEntry }, { paymentEntryId }, { unmatchedOf }] = await serviceTables();
    const entryId = paymentEntryId({ partner: 'sandbox', payment_id: sessionId });
    const [entry, kept] = await Promise.all([
      getEntry(entryId).catch((error: unknown) => {
        // An operator returned the payment: its entry id is claimed, never to be posted.
        if (error instanceof EntryClaimed) return 'returned' as const;
        throw error;
      }),
      unmatchedOf('sandbox', sessionId),
    ]);
    if (entry === 'returned') return { returned: true };
    const first = kept[0];
    return {
      ...(entry ? { entry } : {}),
      ...(first ? { kept: { reason: first.reason, count: kept.length } } : {}),
    };
  } catch (error) {
    return {
      unreadable: `not checked: the service's tables in DynamoDB Local at ${process.env.DYNAMODB_ENDPOINT} could not be read (${(error as Error).message}): give npm run sandbox the DYNAMODB_PORT and TABLE_PREFIX npm start was given`,
    };
  }
}

// listen

interface ListenOptions {
  port?: string;
  key?: string;
  secret?: string;
  events?: string;
  'base-url'?: string;
}

/** Whose endpoint the receiver is: the key pair, and how to name the merchant in the output. */
interface Credentials {
  apiKey: string;
  apiSecret: string;
  label: string;
}

/** The endpoint as `POST /webhook-endpoints` answers it (the only time it shows the secret). */
interface RegisteredEndpoint {
  id: string;
  events: string[] | null;
  secret: string;
}

/** An event as delivered (API.md §8). */
interface DeliveredEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

async function listenCommand(values: ListenOptions): Promise<void> {
  const port = portFrom(values.port);
  const credentials = credentialsFrom(values);
  const baseUrl = baseUrlFrom(values['base-url']);
  const events = values.events
    ?.split(',')
    .map((type) => type.trim())
    .filter(Boolean);
  // Said before anything starts, as for every other option, rather than by the API's refusal later.
  const unknown = events?.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type)) ?? [];
  if (unknown.length > 0 || (values.events !== undefined && events?.length === 0)) {
    usageError(
      `--events takes event types separated by commas (${EVENT_TYPES.join(', ')}); unknown: ${unknown.join(', ') || '(none given)'}`,
    );
  }

  // The secret arrives with the registration, which needs the receiver's URL first: until then
  // there is nothing to verify against, and a delivery is asked to come back later.
  let keys: Buffer[] | undefined;
  const server = await startReceiver(port, (headers, body) =>
    keys ? verifiedDelivery(headers, body, keys) : { status: 503, line: undefined },
  );
  const url = receiverUrl(server);
  console.log(`Receiver listening on ${url}`);

  const endpoint = await registerEndpoint(baseUrl, credentials, url, events).catch(async (error: unknown) => {
    await closeServer(server);
    return failure(`Could not register the receiver: ${(error as Error).message}`);
  });
  keys = [Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64')];
  console.log(`Webhook endpoint ${endpoint.id} (events: ${endpoint.events?.join(', ') ?? 'all'})`);
  console.log(`Ready: forwarding events for ${credentials.label} to ${url}`);

  stopOnSignal(async () => {
    console.log(`Stopping: deleting webhook endpoint ${endpoint.id}`);
    await deleteEndpoint(baseUrl, credentials, endpoint.id).catch((error: unknown) =>
      console.error(
        `Could not delete webhook endpoint ${endpoint.id}: ${(error as Error).message}; ` +
          `delete it with DELETE ${baseUrl}/webhook-endpoints/${endpoint.id}`,
      ),
    );
    await closeServer(server);
  });
}

/** `--port`: 0 (the default) lets the system pick a free port. */
function portFrom(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const port = Number(raw);
  if (!/^\d{1,5}$/.test(raw) || port > 65535)
    usageError('--port must be a port number (0 for any free port)');
  return port;
}

/** `--base-url`, else the local gateway `npm start` runs on `PORT`. */
function baseUrlFrom(raw: string | undefined): string {
  const base = raw ?? `http://127.0.0.1:${process.env.PORT ?? DEFAULT_PORTS.PORT}`;
  if (!URL.canParse(base)) usageError(`--base-url must be a URL, such as http://127.0.0.1:3000`);
  return base.replace(/\/+$/, '');
}

/** `--key`/`--secret`, else the demo merchant `npm start` keeps in its data folder. */
function credentialsFrom(values: ListenOptions): Credentials {
  if (values.key !== undefined || values.secret !== undefined) {
    if (!values.key || !values.secret) usageError('--key and --secret go together');
    return { apiKey: values.key, apiSecret: values.secret, label: values.key };
  }
  // The same file start.ts writes: one demo merchant per partner.
  const partner = process.env.PARTNER ?? 'sandbox';
  const file = path.join(
    path.resolve(PROJECT_ROOT, process.env.DATA_DIR || '.data'),
    partner === 'sandbox' ? 'demo-merchant.json' : `demo-merchant-${partner}.json`,
  );
  if (!existsSync(file)) {
    usageError(
      `No credentials: pass --key and --secret, or run \`npm start\` once so it creates the demo merchant (${file})`,
    );
  }
  const demo = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (typeof demo.api_key !== 'string' || typeof demo.api_secret !== 'string') {
    usageError(`${file} has no api_key/api_secret: pass --key and --secret, or run \`npm start --fresh\``);
  }
  return {
    apiKey: demo.api_key,
    apiSecret: demo.api_secret,
    label: `${demo.name ?? 'the demo merchant'} (${demo.merchant_id ?? demo.api_key})`,
  };
}

/**
 * A call to the payments API as the merchant: the parsed answer, or an error carrying the API's own
 * message (or, when nothing answers, which URL was tried).
 */
async function api(
  baseUrl: string,
  credentials: Credentials,
  method: string,
  route: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: {
      'X-API-Key': credentials.apiKey,
      'X-API-Secret': credentials.apiSecret,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  }).catch((error: unknown) => {
    const reason = (error as Error)?.cause ?? error;
    throw new Error(
      `could not reach the API at ${baseUrl} (${String((reason as Error)?.message ?? reason)}): ` +
        'is `npm start` running? (--base-url sets another URL)',
    );
  });
  const text = await response.text();
  const answer = parseJson(text);
  if (!response.ok) {
    const code = typeof answer?.code === 'string' ? `, ${answer.code}` : '';
    throw new Error(
      `${String(answer?.message ?? (text || response.statusText))} (HTTP ${response.status}${code})`,
    );
  }
  return answer ?? {};
}

/** Registers the receiver's URL as one of the merchant's webhook endpoints. */
async function registerEndpoint(
  baseUrl: string,
  credentials: Credentials,
  url: string,
  events: string[] | undefined,
): Promise<RegisteredEndpoint> {
  const answer = await api(baseUrl, credentials, 'POST', '/webhook-endpoints', {
    url,
    description: 'npm run sandbox -- listen',
    ...(events?.length ? { events } : {}),
  });
  return answer.data as RegisteredEndpoint;
}

/** Deletes the endpoint, so stopped listeners do not count towards the 5-endpoint limit. */
async function deleteEndpoint(baseUrl: string, credentials: Credentials, id: string): Promise<void> {
  await api(baseUrl, credentials, 'DELETE', `/webhook-endpoints/${encodeURIComponent(id)}`);
}

/** What to answer a delivery, and the line to print for it (none when it is not printed). */
interface Outcome {
  status: number;
  line: string | undefined;
}

/** An HTTP server on 127.0.0.1 that hands every request's headers and raw body to `handle`. */
async function startReceiver(
  port: number,
  handle: (headers: IncomingHttpHeaders, body: string) => Outcome,
): Promise<Server> {
  const server = createServer((request, response) => {
    readBody(request).then(
      (body) => {
        const { status, line } = handle(request.headers, body);
        if (line) console.log(line);
        response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'rejected');
      },
      () => response.writeHead(413, { 'content-type': 'text/plain' }).end('too large'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') failure(`Port ${port} is in use: pick another --port, or leave it out`);
    throw error;
  });
  return server;
}

/** A request's raw body: the signature covers the exact bytes, so it is never re-serialised. */
function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit the rest is drained unread, so the sender still gets an answer.
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () =>
      size > MAX_BODY_BYTES
        ? reject(new Error('body too large'))
        : resolve(Buffer.concat(chunks).toString('utf8')),
    );
    request.on('error', reject);
  });
}

/** The receiver's URL, with the port the system picked. */
function receiverUrl(server: Server): string {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return `http://127.0.0.1:${port}/webhooks`;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * A delivery checked as a merchant's server should check it: 200 and the event's line when the
 * Standard Webhooks signature verifies and the body is an event, otherwise 400 and why.
 */
function verifiedDelivery(headers: IncomingHttpHeaders, body: string, keys: readonly Buffer[]): Outcome {
  const time = new Date().toISOString();
  const id = header(headers, 'webhook-id');
  const problem = signatureProblem(
    {
      id,
      timestamp: header(headers, 'webhook-timestamp'),
      signature: header(headers, 'webhook-signature'),
      body,
    },
    keys,
  );
  if (problem) return { status: 400, line: `${time}  rejected: ${problem}` };
  const event = parseJson(body);
  if (typeof event?.type !== 'string' || !isRecord(event.data)) {
    return { status: 400, line: `${time}  rejected: the body is not an event` };
  }
  const line = [time, id, event.type, summary(event as unknown as DeliveredEvent)].filter(Boolean).join('  ');
  return { status: 200, line };
}

/**
 * The part of an event worth a glance: a transaction's reference, amount and status (and why it
 * failed, and which virtual account it paid), or a virtual account's reference and status.
 */
function summary(event: DeliveredEvent): string {
  const { transaction, virtual_account: account } = event.data;
  if (isRecord(transaction)) {
    return [
      transaction.reference,
      `${transaction.amount} kobo`,
      transaction.status,
      transaction.reason ? `reason: ${transaction.reason}` : undefined,
      transaction.virtual_account_reference
        ? `virtual account ${transaction.virtual_account_reference}`
        : undefined,
    ]
      .filter(Boolean)
      .join('  ');
  }
  if (isRecord(account)) return `${account.reference}  ${account.status}`;
  return '';
}

/** One header's value; a repeated header is not a valid delivery, so it counts as missing. */
function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Runs `stop` once on the first Ctrl-C or SIGTERM, then exits 0. */
function stopOnSignal(stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = () => {
    // A second Ctrl-C while deleting the endpoint must not skip the deletion.
    if (stopping) return;
    stopping = true;
    void stop().finally(() => process.exit(0));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`Failed: ${String((error as Error)?.message ?? error)}`);
  process.exit(1);
});
