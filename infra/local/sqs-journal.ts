import { mkdirSync, readFileSync } from 'node:fs';
import { type FileHandle, open, rename } from 'node:fs/promises';
import path from 'node:path';

/** A message as the local SQS server keeps it: id, body, system attributes, message attributes. */
export interface StoredMessage {
  MessageId: string;
  attributes: Record<string, string>;
  [field: string]: unknown;
}

/** A message kept in the journal: the queue it is in and when it becomes visible after its send. */
export interface KeptMessage {
  queue: string;
  message: StoredMessage;
  delaySeconds: number;
}

type Entry =
  | ({ op: 'add' } & KeptMessage)
  | { op: 'received'; id: string; count: number }
  | { op: 'delete'; id: string }
  | { op: 'clear'; queue: string };

/** Past this many bytes appended since the last rewrite, the journal is rewritten as a snapshot. */
const REWRITE_AFTER_BYTES = 16 * 1024 * 1024;

export interface QueueJournalOptions {
  /** Rewrite once this much was appended (and twice the last snapshot); default 16 MiB. */
  rewriteAfterBytes?: number;
}

/**
 * The write-ahead journal of the local SQS server (`<dataDir>/sqs/journal.ndjson`): one JSON line
 * per change (a message added to a queue, received, deleted; a queue cleared). Changes are grouped
 * and fsynced together; `flushed()` resolves once every change made so far is on disk, which is
 * what the server waits for before it answers. On open, the journal is read back (a line torn by a
 * crash is skipped) and rewritten as a snapshot of the messages it keeps; it is rewritten the same
 * way while running once it has grown.
 */
export class QueueJournal {
  readonly #file: string;
  readonly #rewriteAfterBytes: number;
  readonly #kept = new Map<string, KeptMessage>();
  #handle: FileHandle | undefined;
  #pending: string[] = [];
  #waiters: { resolve(): void; reject(error: unknown): void }[] = [];
  #draining: Promise<void> | undefined;
  #appendedBytes = 0;
  #snapshotBytes = 0;

  private constructor(file: string, options: QueueJournalOptions) {
    this.#file = file;
    this.#rewriteAfterBytes = options.rewriteAfterBytes ?? REWRITE_AFTER_BYTES;
  }

  /** Opens (or creates) the journal in `<dataDir>/sqs/`, with the messages it keeps. */
  static async open(dataDir: string, options: QueueJournalOptions = {}): Promise<QueueJournal> {
    const dir = path.join(dataDir, 'sqs');
    mkdirSync(dir, { recursive: true });
    const journal = new QueueJournal(path.join(dir, 'journal.ndjson'), options);
    let text = '';
    try {
      text = readFileSync(journal.#file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        journal.#apply(JSON.parse(line) as Entry);
      } catch {
        // A line the crash cut short: its change was never acknowledged.
      }
    }
    await journal.#rewrite();
    return journal;
  }

  /** The messages kept for a queue, in the order they were sent. */
  messagesOf(queue: string): KeptMessage[] {
    return [...this.#kept.values()].filter((kept) => kept.queue === queue);
  }

  /** A message added to a queue (sent, or moved there: a message id is in one queue at a time). */
  added(queue: string, message: StoredMessage, delaySeconds: number) {
    this.#append({ op: 'add', queue, message: structuredClone(message), delaySeconds });
  }

  /** A message handed out again: its receive count counts towards the redrive to the DLQ. */
  received(id: string, count: number) {
    if (this.#kept.has(id)) this.#append({ op: 'received', id, count });
  }

  deleted(id: string) {
    if (this.#kept.has(id)) this.#append({ op: 'delete', id });
  }

  /** Every message of a queue gone (purged, or the queue deleted). */
  cleared(queue: string) {
    this.#append({ op: 'clear', queue });
  }

  /** Resolves once every change made so far is on disk. */
  flushed(): Promise<void> {
    if (this.#pending.length === 0 && !this.#draining) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      this.#drain();
    });
  }

  async close() {
    await this.flushed();
    await this.#handle?.close();
    this.#handle = undefined;
  }

  #apply(entry: Entry) {
    switch (entry.op) {
      case 'add': {
        const { queue, message, delaySeconds } = entry;
        // A move (to the DLQ) keeps the message id: the message leaves its old queue.
        this.#kept.delete(message.MessageId);
        this.#kept.set(message.MessageId, { queue, message, delaySeconds });
        break;
      }
      case 'received': {
        const kept = this.#kept.get(entry.id);
        if (kept) kept.message.attributes.ApproximateReceiveCount = String(entry.count);
        break;
      }
      case 'delete':
        this.#kept.delete(entry.id);
        break;
      case 'clear':
        for (const [id, kept] of this.#kept) if (kept.queue === entry.queue) this.#kept.delete(id);
        break;
    }
  }

  #append(entry: Entry) {
    this.#apply(entry);
    this.#pending.push(`${JSON.stringify(entry)}\n`);
    // Changes made outside a request (a redrive to the DLQ) are written without anyone waiting.
    this.#drain();
  }

  #drain() {
    if (this.#draining) return;
    // One turn of the event loop first, so the changes of requests answered together share a sync.
    this.#draining = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.#writeAll())
      .finally(() => {
        this.#draining = undefined;
        // A waiter that came between the last batch and here.
        if (this.#pending.length > 0 || this.#waiters.length > 0) this.#drain();
      });
  }

  /** Writes and fsyncs what is pending, batch after batch, and answers the waiters of each batch. */
  async #writeAll() {
    while (this.#pending.length > 0 || this.#waiters.length > 0) {
      const batch = this.#pending.splice(0).join('');
      const waiters = this.#waiters.splice(0);
      try {
        if (this.#appendedBytes > Math.max(this.#rewriteAfterBytes, 2 * this.#snapshotBytes)) {
          // The snapshot holds every change so far, this batch's included.
          await this.#rewrite();
        } else if (batch) {
          if (!this.#handle) throw new Error('the queue journal is closed');
          await this.#handle.write(batch);
          await this.#handle.datasync();
          this.#appendedBytes += Buffer.byteLength(batch);
        }
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        for (const waiter of waiters) waiter.reject(error);
      }
    }
  }

  /** Replaces the journal with one `add` line per kept message, atomically (temp file, rename). */
  async #rewrite() {
    const snapshot = [...this.#kept.values()]
      .map((kept) => `${JSON.stringify({ op: 'add', ...kept } satisfies Entry)}\n`)
      .join('');
    const temporary = `${this.#file}.tmp`;
    const out = await open(temporary, 'w');
    try {
      await out.write(snapshot);
      await out.sync();
    } finally {
      await out.close();
    }
    await rename(temporary, this.#file);
    const dir = await open(path.dirname(this.#file), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    const previous = this.#handle;
    this.#handle = await open(this.#file, 'a');
    await previous?.close();
    this.#snapshotBytes = Buffer.byteLength(snapshot);
    this.#appendedBytes = 0;
  }
}
