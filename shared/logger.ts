import { AsyncLocalStorage } from 'node:async_hooks';
import { config } from '#shared/config.ts';

/**
 * The one structured JSON logger: one line per entry with `level`, `message`, `timestamp`,
 * `service`, the keys appended for the current request (`request_id`, `merchant_id`, …) and the
 * entry's own fields; an `Error` becomes `{name, message, stack}`. Request handlers add
 * `request_id` per request; nothing logs headers, bodies or secrets. INFO and DEBUG go to stdout,
 * WARN and ERROR to stderr, as Lambda expects.
 *
 * Written here rather than taken from Powertools' Logger: these are the only features the service
 * uses, and the library cost every function about 22 KB of bundle and 6 ms of cold start.
 */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';

const RANK: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40, SILENT: 100 };

type Fields = Record<string, unknown>;

/** An error as a log field: what it is and where it came from, never more (no request data). */
function errorField(error: Error): Fields {
  return { name: error.name, message: error.message, stack: error.stack };
}

function fieldsOf(extra: Fields | Error | undefined): Fields {
  if (extra === undefined) return {};
  if (extra instanceof Error) return { error: errorField(extra) };
  const fields: Fields = {};
  for (const [name, value] of Object.entries(extra)) {
    fields[name] = value instanceof Error ? errorField(value) : value;
  }
  return fields;
}

export class JsonLogger {
  #level: LogLevel;
  /**
   * The keys of the invocation in progress, one set per invocation's chain of async work: on Lambda
   * a container runs one invocation at a time, but the local runtime runs the gateway's requests,
   * the pollers' batches and the requery together in one process, where one set of keys would
   * let one request clear or overwrite another's `request_id`. (`node:async_hooks` is loaded by
   * Node's own start-up: importing it costs a cold start nothing.)
   */
  readonly #invocation = new AsyncLocalStorage<Fields>();
  /** Keys appended outside any invocation (a CLI, a test). */
  readonly #outside: Fields = {};

  constructor(
    private readonly service: string,
    level: LogLevel,
  ) {
    this.#level = level;
  }

  getLevelName(): LogLevel {
    return this.#level;
  }

  setLogLevel(level: LogLevel): void {
    this.#level = level;
  }

  #keys(): Fields {
    return this.#invocation.getStore() ?? this.#outside;
  }

  /** Keys every following entry of this invocation carries (until `resetKeys`). */
  appendKeys(keys: Fields): void {
    Object.assign(this.#keys(), keys);
  }

  /**
   * Runs `work` with keys of its own (`keys`, then what it appends), whatever invocation starts it:
   * for work that outlives that invocation and serves others (a shared load).
   */
  withOwnKeys<T>(keys: Fields, work: () => T): T {
    return this.#invocation.run({ ...keys }, work);
  }

  /**
   * Runs `work` with the invocation's keys and `keys` besides, for its lines only: one of several
   * pieces of work an invocation runs side by side (a batch's messages), each with its own keys.
   */
  withKeys<T>(keys: Fields, work: () => T): T {
    return this.#invocation.run({ ...this.#keys(), ...keys }, work);
  }

  /** Starts an invocation's keys afresh: empty, and its own from here on, whatever runs beside it. */
  resetKeys(): void {
    this.#invocation.enterWith({});
  }

  debug(message: string, extra?: Fields | Error): void {
    this.#write('DEBUG', message, extra);
  }

  info(message: string, extra?: Fields | Error): void {
    this.#write('INFO', message, extra);
  }

  warn(message: string, extra?: Fields | Error): void {
    this.#write('WARN', message, extra);
  }

  error(message: string, extra?: Fields | Error): void {
    this.#write('ERROR', message, extra);
  }

  #write(level: Exclude<LogLevel, 'SILENT'>, message: string, extra: Fields | Error | undefined): void {
    if (RANK[level] < RANK[this.#level]) return;
    const entry = {
      level,
      message,
      timestamp: new Date().toISOString(),
      service: this.service,
      ...this.#keys(),
      ...fieldsOf(extra),
    };
    let line: string;
    try {
      line = JSON.stringify(entry, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
    } catch {
      // A field that cannot be serialised (a cycle): the entry without its fields, never a throw.
      line = JSON.stringify({
        level,
        message,
        timestamp: entry.timestamp,
        service: this.service,
        ...this.#keys(),
      });
    }
    (RANK[level] >= RANK.WARN ? process.stderr : process.stdout).write(`${line}\n`);
  }
}

export const logger = new JsonLogger('naira-pay', config.logLevel);
