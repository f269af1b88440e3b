import { createHash, randomBytes, randomInt } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import { findBank } from '#shared/banks/index.ts';
import { isValidNuban, toNuban } from '#shared/banks/nuban.ts';
import { sign } from '#shared/crypto/standard-webhooks.ts';
import { cutText } from '#shared/text.ts';

/**
 * The sandbox banking partner (API.md §5): a separate HTTP server that behaves like a bank's API,
 * with deterministic test accounts. Serial prefixes trigger the partner's failure modes.
 */
export const SANDBOX_TRIGGERS = {
  accountNotFound: '99999',
  timeout: '88888',
  rejectTransfers: '77777',
  /**
   * Extensions of API.md §5. `66666`: the transfer is left pending, and the sandbox settles it
   * (success) by webhook a little later. `55555`: pending, completed later, but the webhook is never
   * sent (only a requery of its status finds out). `44444`: pending, failed later, and no webhook.
   * `11111`: the transfer is made (success), but its answer is lost on the way: a 503, no webhook
   * (the service cannot know whether it was taken; a requery or a resend finds it made).
   */
  pendingTransfers: '66666',
  pendingSilentSuccess: '55555',
  pendingSilentFailure: '44444',
  answerLost: '11111',
} as const;

const FIRST_NAMES = [
  'Adaeze',
  'Babatunde',
  'Chiamaka',
  'Chinedu',
  'Damilola',
  'Emeka',
  'Fatima',
  'Folake',
  'Ibrahim',
  'Ifeoma',
  'Kehinde',
  'Ngozi',
  'Nnamdi',
  'Olumide',
  'Oluwaseun',
  'Segun',
  'Tobechukwu',
  'Uche',
  'Yetunde',
  'Zainab',
];
const SURNAMES = [
  'Abubakar',
  'Adebayo',
  'Adeyemi',
  'Afolabi',
  'Balogun',
  'Bello',
  'Eze',
  'Igwe',
  'Nwachukwu',
  'Obi',
  'Okafor',
  'Okonkwo',
  'Okoro',
  'Olawale',
  'Onyeka',
  'Suleiman',
  'Uchenna',
  'Usman',
  'Yusuf',
  'Nwosu',
];

/** The account holder's name the sandbox gives an account number: the same number, the same name. */
export function sandboxAccountName(accountNumber: string): string {
  const digest = createHash('sha256').update(accountNumber).digest();
  const pick = (list: string[], byte: number) => list[(digest[byte] ?? 0) % list.length] ?? '';
  return `${pick(SURNAMES, 0)} ${pick(FIRST_NAMES, 1)} ${pick(FIRST_NAMES, 2)}`.toUpperCase();
}

export interface SandboxPartnerOptions {
  port: number;
  host?: string;
  /** How long a "timeout" account keeps the caller waiting before the sandbox answers 504. */
  hangMs?: number;
  /** The sandbox bank's own CBN code: the bank of the accounts it issues. */
  bankCode?: string;
  /** Where the sandbox delivers its signed webhooks, and the `whsec_` secret it signs them with. */
  webhookUrl?: string;
  webhookSecret?: string;
  /** How long a transfer it leaves pending waits before the sandbox sends `transfer.success`. */
  settleAfterMs?: number;
  /**
   * Where it keeps its book (`book.jsonl`), so that a restart forgets no transfer and no issued
   * account, as no bank would; in memory without it.
   */
  dataDir?: string;
}

export interface SandboxPartner {
  url: string;
  server: Server;
  close(): Promise<void>;
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(body));
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Waits `ms`, or less if the caller hangs up. */
function hang(request: IncomingMessage, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    request.socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

async function nameEnquiry(
  request: IncomingMessage,
  response: ServerResponse,
  hangMs: number,
  calls: Map<string, number>,
  issued: ReadonlyMap<string, string>,
) {
  const { bank_code: bankCode, account_number: accountNumber } = await readJson(request);
  if (typeof accountNumber === 'string') calls.set(accountNumber, (calls.get(accountNumber) ?? 0) + 1);
  if (typeof bankCode !== 'string' || typeof accountNumber !== 'string' || !/^\d{10}$/.test(accountNumber)) {
    return reply(response, 400, { error: 'invalid_request' });
  }
  const bank = findBank(bankCode);
  if (!bank) return reply(response, 400, { error: 'unknown_bank' });
  if (bank.nuban && !isValidNuban(bank.code, accountNumber))
    return reply(response, 400, { error: 'invalid_account' });
  if (accountNumber.startsWith(SANDBOX_TRIGGERS.timeout)) {
    await hang(request, hangMs);
    return response.destroyed ? undefined : reply(response, 504, { error: 'timeout' });
  }
  if (accountNumber.startsWith(SANDBOX_TRIGGERS.accountNotFound)) {
    return reply(response, 404, { error: 'account_not_found' });
  }
  return reply(response, 200, {
    // An account it issued is named as issued (kept across restarts with a data folder).
    account_name: issued.get(`${bank.code}:${accountNumber}`) ?? sandboxAccountName(accountNumber),
    account_number: accountNumber,
    bank_code: bank.code,
  });
}

/** The first digits of every account the sandbox issues: never a trigger prefix (five equal digits). */
const ISSUED_PREFIX = '50';

/**
 * Issues an account number of the sandbox bank. Serials start with 50, so an issued account never
 * carries a trigger prefix (`55555` was possible with a plain 5); the service itself guarantees that
 * no number is used twice.
 */
async function issueAccount(
  request: IncomingMessage,
  response: ServerResponse,
  bankCode: string,
  book: Book,
) {
  const { kind, name } = await readJson(request);
  if ((kind !== 'wallet' && kind !== 'virtual_account') || typeof name !== 'string' || name.length === 0) {
    return reply(response, 400, { error: 'invalid_request' });
  }
  const serial = `${ISSUED_PREFIX}${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
  const account = {
    account_number: toNuban(bankCode, serial),
    account_name: cutText(`NAIRAPAY/${name.trim().toUpperCase()}`, 60).trimEnd(),
    bank_code: bankCode,
  };
  book.setIssued(`${bankCode}:${account.account_number}`, account.account_name);
  return reply(response, 201, account);
}

type TransferAnswer = { status: number; body: Record<string, unknown> };

/** Tries of an on-us credit's delivery: 1 s, 2 s, 4 s and 8 s apart. */
const ON_US_TRIES = 5;

/** A transfer the sandbox completed, as its own accounts would receive it. */
type OnUsTransfer = {
  reference: string;
  bank_code: string;
  account_number: string;
  amount: number;
  narration: unknown;
};

/** How a transfer the sandbox left pending ends, and whether it tells the service by webhook. */
type PendingEnd = { status: 'success' | 'failed'; reason?: string; webhook: boolean };

function pendingEndOf(accountNumber: string): PendingEnd | undefined {
  if (accountNumber.startsWith(SANDBOX_TRIGGERS.pendingTransfers))
    return { status: 'success', webhook: true };
  if (accountNumber.startsWith(SANDBOX_TRIGGERS.pendingSilentSuccess))
    return { status: 'success', webhook: false };
  if (accountNumber.startsWith(SANDBOX_TRIGGERS.pendingSilentFailure)) {
    return { status: 'failed', reason: 'Beneficiary account could not be credited', webhook: false };
  }
  return undefined;
}

/**
 * Executes a transfer, idempotent on the caller's reference: a repeated reference gets the first
 * answer again, never a second payment.
 */
async function transfer(
  request: IncomingMessage,
  response: ServerResponse,
  hangMs: number,
  book: Book,
  onPending: (reference: string, end: PendingEnd) => void,
  onUs: (order: OnUsTransfer) => void,
) {
  const order = await readJson(request);
  const { reference, amount, bank_code: bankCode, account_number: accountNumber } = order;
  if (
    typeof reference !== 'string' ||
    !Number.isSafeInteger(amount) ||
    typeof bankCode !== 'string' ||
    typeof accountNumber !== 'string'
  ) {
    return reply(response, 400, { error: 'invalid_request' });
  }
  const previous = book.transfers.get(reference);
  if (previous) return reply(response, previous.status, previous.body);
  if (accountNumber.startsWith(SANDBOX_TRIGGERS.timeout)) {
    await hang(request, hangMs);
    return response.destroyed ? undefined : reply(response, 504, { error: 'timeout' });
  }
  const pendingEnd = pendingEndOf(accountNumber);
  const answer: TransferAnswer = accountNumber.startsWith(SANDBOX_TRIGGERS.rejectTransfers)
    ? { status: 422, body: { status: 'failed', reference, reason: 'Beneficiary bank rejected the transfer' } }
    : pendingEnd
      ? { status: 202, body: { status: 'pending', reference } }
      : { status: 200, body: { status: 'success', reference, session_id: nipSessionId() } };
  // What the answer commits the bank to is booked before the answer itself: a crash between the
  // two leaves a transfer it never answered (the resend is a new one), never an answer whose end
  // or whose credit was forgotten.
  if (pendingEnd) onPending(reference, pendingEnd);
  if (answer.status === 200) {
    onUs({
      reference,
      bank_code: bankCode,
      account_number: accountNumber,
      amount: amount as number,
      narration: order.narration,
    });
  }
  book.setTransfer(reference, answer);
  // Made and booked; the answer alone is lost (a resend of the reference gets it, as any repeat).
  if (accountNumber.startsWith(SANDBOX_TRIGGERS.answerLost)) {
    return reply(response, 503, { error: 'service_unavailable' });
  }
  reply(response, answer.status, answer.body);
}

/** `GET /v1/transfers/{reference}`: where a transfer stands now (404 if the sandbox never got it). */
function transferStatus(
  response: ServerResponse,
  reference: string,
  done: ReadonlyMap<string, TransferAnswer>,
) {
  const known = done.get(reference);
  if (!known) return reply(response, 404, { error: 'not_found' });
  return reply(response, 200, known.body);
}

/** A NIBSS-style 30-digit session id. */
export function nipSessionId(): string {
  return Array.from({ length: 30 }, () => randomInt(0, 10)).join('');
}

/** A signed Standard Webhooks delivery of a partner event to the service. */
export async function deliverWebhook(
  url: string,
  secret: string,
  event: { type: string; data: Record<string, unknown> },
  webhookId = `msg_${randomBytes(12).toString('hex')}`,
): Promise<{ status: number; body: string; webhookId: string }> {
  const body = JSON.stringify(event);
  const timestamp = Math.floor(Date.now() / 1000);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': webhookId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': sign(key, webhookId, timestamp, body),
    },
    body,
  });
  return { status: response.status, body: await response.text(), webhookId };
}

/** A customer's payment into an account, as the partner reports it. */
export function paymentEvent(input: {
  account_number: string;
  amount: number;
  session_id?: string;
  sender?: { account_name: string; account_number: string; bank_code: string };
  narration?: string;
}) {
  return {
    type: 'payment.received',
    data: {
      session_id: input.session_id ?? nipSessionId(),
      account_number: input.account_number,
      amount: input.amount,
      sender: input.sender ?? {
        account_name: 'ADEBAYO CHIOMA',
        account_number: '0123456789',
        bank_code: '058',
      },
      narration: input.narration ?? 'Transfer from customer',
      paid_at: new Date().toISOString(),
    },
  };
}

/**
 * `POST /v1/_simulate/payment`: the sandbox's tool for a customer paying into an account. It signs
 * and delivers `payment.received` to the service and reports what the service answered.
 */
async function simulatePayment(
  request: IncomingMessage,
  response: ServerResponse,
  webhook: Webhook | undefined,
) {
  const input = await readJson(request);
  const url = typeof input.webhook_url === 'string' ? input.webhook_url : webhook?.url;
  if (!url || !webhook?.secret) return reply(response, 400, { error: 'no webhook url or secret configured' });
  if (typeof input.account_number !== 'string' || !Number.isSafeInteger(input.amount)) {
    return reply(response, 400, { error: 'account_number and amount (kobo) are required' });
  }
  const event = paymentEvent({
    account_number: input.account_number,
    amount: input.amount as number,
    session_id: typeof input.session_id === 'string' ? input.session_id : undefined,
  });
  const delivered = await deliverWebhook(url, webhook.secret, event);
  return reply(response, 200, {
    session_id: event.data.session_id,
    webhook_id: delivered.webhookId,
    webhook_status: delivered.status,
    webhook_response: delivered.body,
  });
}

function pathOf(request: IncomingMessage): string {
  return new URL(request.url ?? '/', 'http://localhost').pathname;
}

interface Webhook {
  url: string | undefined;
  secret: string | undefined;
}

/** A transfer the sandbox left pending: how it ends, and when (epoch ms). */
type Pending = { end: PendingEnd; settleAt: number };

/** One line of the sandbox's book. */
type BookLine =
  | { t: 'transfer'; key: string; value: TransferAnswer }
  | { t: 'pending'; key: string; value: Pending }
  | { t: 'owed'; key: string; value: OnUsTransfer | null }
  | { t: 'issued'; key: string; value: string };

/**
 * The sandbox bank's book: the answer it gave each transfer (replaced when a pending one ends),
 * how and when each pending one ends, the `payment.received` it owes one of its own accounts for a
 * transfer it completed (until the service took it), and the names of the accounts it issued. With
 * a folder, each entry is a JSON line appended and flushed to disk before the sandbox answers (what
 * it owes before the answer that owes it), and the book is read back at start: a restart of
 * `npm start` then forgets nothing a real bank would remember (its pending transfers still end, what
 * it owes is still delivered, and a requery finds every transfer).
 */
function openBook(dataDir: string | undefined) {
  const transfers = new Map<string, TransferAnswer>();
  const pending = new Map<string, Pending>();
  const owed = new Map<string, OnUsTransfer | null>();
  const issued = new Map<string, string>();
  const maps = { transfer: transfers, pending, owed, issued } as const;
  let fd: number | undefined;
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    const file = path.join(dataDir, 'book.jsonl');
    let lines = 0;
    const { cut } = existsSync(file)
      ? readBookLines(file, (text) => {
          lines += 1;
          let line: BookLine | null;
          try {
            line = JSON.parse(text) as BookLine | null;
          } catch {
            return; // An empty line, or the last one cut by a crash while it was written.
          }
          if (line && typeof line === 'object' && Object.hasOwn(maps, line.t) && typeof line.key === 'string')
            (maps[line.t] as Map<string, unknown>).set(line.key, line.value);
        })
      : { cut: false };
    // What is over is forgotten: a pending transfer's end once it has ended, a credit owed once taken.
    for (const [reference] of pending)
      if (transfers.get(reference)?.status !== 202) pending.delete(reference);
    for (const [reference, order] of owed) if (order === null) owed.delete(reference);
    const kept = transfers.size + pending.size + owed.size + issued.size;
    // Written again, one line per entry, once its superseded lines are at least a quarter of the
    // entries kept (a pending transfer took three lines): the book grows with what the bank holds,
    // not with every line it wrote.
    const compact = lines - kept >= Math.max(COMPACT_AFTER_LINES, kept / 4);
    if (compact) rewriteBook(file, maps);
    fd = openSync(file, 'a');
    // A last line cut by a crash is ended here (a compacted book has none), so the next entry
    // starts a line of its own.
    if (cut && !compact) writeAll(fd, '\n');
  }
  const write = (line: BookLine) => {
    (maps[line.t] as Map<string, unknown>).set(line.key, line.value);
    if (fd === undefined) return;
    writeAll(fd, `${JSON.stringify(line)}\n`);
    fsyncSync(fd);
  };
  return {
    transfers: transfers as ReadonlyMap<string, TransferAnswer>,
    issued: issued as ReadonlyMap<string, string>,
    /** The pending transfers that have not ended yet (read back at start). */
    unsettled: () => [...pending].filter(([reference]) => transfers.get(reference)?.status === 202),
    /** The credits of its own accounts the service has not taken yet (read back at start). */
    owed: () => [...owed.values()].filter((order): order is OnUsTransfer => order !== null),
    setTransfer: (key: string, value: TransferAnswer) => write({ t: 'transfer', key, value }),
    setPending: (key: string, value: Pending) => write({ t: 'pending', key, value }),
    setOwed: (key: string, value: OnUsTransfer | null) => write({ t: 'owed', key, value }),
    setIssued: (key: string, value: string) => write({ t: 'issued', key, value }),
    close: () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

type Book = ReturnType<typeof openBook>;

/**
 * Writes all of `text`: a write may take only part of it (a disk filling up takes what fits and
 * says so by its count; only the next write fails), and a book must never be left with part of a
 * line taken for the whole.
 */
function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
}

/** Fewer superseded lines than this are never worth writing the book again for. */
const COMPACT_AFTER_LINES = 1_000;

/**
 * Calls `onLine` with each line of `file` (without its newline), read a chunk at a time: a book
 * past 512 MB is read too (one string of it all cannot be). `cut` when its last line has no newline.
 */
export function readBookLines(
  file: string,
  onLine: (text: string) => void,
  chunkBytes = 1 << 20,
): { cut: boolean } {
  const fd = openSync(file, 'r');
  try {
    const chunk = Buffer.alloc(chunkBytes);
    let rest = Buffer.alloc(0);
    for (let read = readSync(fd, chunk); read > 0; read = readSync(fd, chunk)) {
      const data = rest.length > 0 ? Buffer.concat([rest, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      let start = 0;
      for (let end = data.indexOf(10, start); end !== -1; end = data.indexOf(10, start)) {
        onLine(data.toString('utf8', start, end));
        start = end + 1;
      }
      // Copied: `chunk` is read into again.
      rest = Buffer.from(data.subarray(start));
    }
    if (rest.length > 0) onLine(rest.toString('utf8'));
    return { cut: rest.length > 0 };
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the book again from its entries, one line each, then puts it in place of the old one by a
 * rename: a crash before the rename leaves the old book whole (and a stray `.compacting` file that
 * the next compaction overwrites).
 */
function rewriteBook(
  file: string,
  maps: Readonly<Record<BookLine['t'], ReadonlyMap<string, unknown>>>,
): void {
  const next = `${file}.compacting`;
  const fd = openSync(next, 'w');
  try {
    for (const [t, entries] of Object.entries(maps)) {
      let batch = '';
      for (const [key, value] of entries) {
        batch += `${JSON.stringify({ t, key, value })}\n`;
        if (batch.length >= 1 << 20) {
          writeAll(fd, batch);
          batch = '';
        }
      }
      if (batch) writeAll(fd, batch);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(next, file);
  const folder = openSync(path.dirname(file), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}

/** Starts the sandbox partner's HTTP server. */
export async function startSandboxPartner(options: SandboxPartnerOptions): Promise<SandboxPartner> {
  const hangMs = options.hangMs ?? 60_000;
  const bankCode = options.bankCode ?? '101';
  // Name enquiries received per account number: the sandbox's request log, for tests and debugging.
  const nameEnquiries = new Map<string, number>();
  // Its transfers, their pending ends, and the names of the accounts it issued (by
  // `<bank code>:<account number>`), kept across restarts with a data folder.
  const book = openBook(options.dataDir);
  const settleAfterMs = options.settleAfterMs ?? 5000;
  const webhook: Webhook = { url: options.webhookUrl, secret: options.webhookSecret };
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  /** Runs `work` after `afterMs`, unless the sandbox closes first (a try under way then schedules nothing more). */
  const later = (work: () => void, afterMs: number) => {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      work();
    }, afterMs);
    timers.add(timer);
  };
  // The bank completes what it left processing; it tells the service with a signed webhook unless
  // the trigger says it stays silent (then only a status query finds out).
  const settleAt = (reference: string, { end, settleAt: at }: Pending) =>
    later(
      () => {
        const body = {
          status: end.status,
          reference,
          reason: end.reason ?? null,
          session_id: nipSessionId(),
        };
        book.setTransfer(reference, { status: 200, body });
        if (!end.webhook || !webhook.url || !webhook.secret) return;
        const event = {
          type: `transfer.${end.status}`,
          data: { reference, session_id: body.session_id, reason: body.reason },
        };
        // Not retried (as a real bank might not): the service's requery settles the transfer. One
        // line, not a stack: a gateway that is stopping (npm start's own shutdown) refuses it too.
        deliverWebhook(webhook.url, webhook.secret, event).catch((error: unknown) =>
          console.error(
            `sandbox partner: transfer.${end.status} for ${reference} not delivered (${
              (error as Error).message
            }); the service's requery settles it`,
          ),
        );
      },
      Math.max(0, at - Date.now()),
    );
  const settleLater = (reference: string, end: PendingEnd) => {
    const pending = { end, settleAt: Date.now() + settleAfterMs };
    book.setPending(reference, pending);
    settleAt(reference, pending);
  };

  // A transfer to an account the sandbox issued (a merchant's wallet or virtual account: its bank,
  // serial 5…) lands there, as at any bank: the receiving account is credited and the service is
  // told by `payment.received`, so money moved between two merchants never leaves the system.
  // Its session id and webhook id derive from the transfer's reference: a transfer made again under
  // the same reference (by a sandbox without a data folder, which forgot it) is the same payment,
  // which the service credits once. Booked as owed until the service takes it: a few tries now,
  // and again after a restart.
  const deliverOwed = (order: OnUsTransfer, firstAfterMs = 0) => {
    const { url, secret } = webhook;
    if (!url || !secret) return;
    const digest = createHash('sha256').update(`on-us:${order.reference}`).digest();
    const event = paymentEvent({
      account_number: order.account_number,
      amount: order.amount,
      session_id: Array.from(digest.subarray(0, 30), (byte) => byte % 10).join(''),
      sender: { account_name: 'NAIRAPAY TRANSFER', account_number: '', bank_code: bankCode },
      narration: typeof order.narration === 'string' ? order.narration : 'Transfer',
    });
    const webhookId = `msg_${digest.toString('hex').slice(0, 24)}`;
    const attempt = async (tries: number): Promise<void> => {
      const delivered = await deliverWebhook(url, secret, event, webhookId).catch(() => undefined);
      if (delivered && delivered.status < 300) {
        book.setOwed(order.reference, null);
        return;
      }
      if (tries >= ON_US_TRIES) {
        console.error(
          `sandbox partner: payment.received for ${order.account_number} not taken after ${tries} tries (tried again at the next start)`,
        );
        return;
      }
      later(() => void attempt(tries + 1), 500 * 2 ** tries);
    };
    if (firstAfterMs > 0) later(() => void attempt(1), firstAfterMs);
    else void attempt(1);
  };
  const onUs = (order: OnUsTransfer) => {
    const issuedHere = order.bank_code === bankCode && order.account_number.startsWith('5');
    if (!issuedHere || !webhook.url || !webhook.secret) return;
    book.setOwed(order.reference, order);
    deliverOwed(order);
  };
  type Route = (request: IncomingMessage, response: ServerResponse) => Promise<void> | void;
  const routes: Record<string, Route> = {
    'POST /v1/name-enquiry': (request, response) =>
      nameEnquiry(request, response, hangMs, nameEnquiries, book.issued),
    'POST /v1/transfers': (request, response) => transfer(request, response, hangMs, book, settleLater, onUs),
    'POST /v1/_simulate/payment': (request, response) => simulatePayment(request, response, webhook),
    'POST /v1/accounts': (request, response) => issueAccount(request, response, bankCode, book),
    'GET /v1/transfers/*': (request, response) =>
      transferStatus(
        response,
        decodeURIComponent(pathOf(request).slice('/v1/transfers/'.length)),
        book.transfers,
      ),
    'GET /v1/_calls': (_request, response) =>
      reply(response, 200, { name_enquiries: Object.fromEntries(nameEnquiries) }),
  };
  const notFound: Route = (_request, response) => reply(response, 404, { error: 'not_found' });
  const server = createServer((request, response) => {
    const path = pathOf(request);
    const route = `${request.method} ${path}`;
    const wildcard = `${request.method} ${path.slice(0, path.lastIndexOf('/') + 1)}*`;
    const work = Promise.resolve().then(() =>
      (routes[route] ?? routes[wildcard] ?? notFound)(request, response),
    );
    work.catch((error: unknown) => {
      console.error('sandbox partner failed', error);
      if (!response.headersSent) reply(response, 500, { error: 'internal' });
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  }).catch((error: unknown) => {
    book.close();
    throw error;
  });
  // What it left pending or owed before a restart: a pending transfer ends when it would have, and
  // an owed credit is delivered again, neither before the service has had a moment to come back up
  // to hear it (a requery finds a transfer's end either way; an owed credit is tried again at the
  // next start until taken).
  for (const [reference, pending] of book.unsettled()) {
    settleAt(reference, { ...pending, settleAt: Math.max(pending.settleAt, Date.now() + settleAfterMs) });
  }
  for (const order of book.owed()) deliverOwed(order, settleAfterMs);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise((resolve) => {
        closed = true;
        for (const timer of timers) clearTimeout(timer);
        book.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
