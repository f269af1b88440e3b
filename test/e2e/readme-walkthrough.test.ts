import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/process.ts';
import { DEFAULT_TABLE_PREFIX } from '#shared/definitions/tables.ts';
import { type RunningService, startNpmStart } from '#test/support/npm-start.ts';

/**
 * The README's walkthrough as a script: every ```sh block marked `<!-- walkthrough -->` runs, in
 * the README's order, in one bash shell (as pasted into one terminal), against a real `npm start`
 * on free ports. The block marked `<!-- walkthrough: second terminal -->` runs beside it, as in a
 * second terminal. Placeholders are filled the way a reader fills them: `pk_…`-style ids with the
 * latest such value `npm start` or an answer printed, `<your wallet number>` with the wallet
 * `npm start` printed. Every curl must answer 2xx with `"status":"success"` unless the block's
 * `→` line says otherwise, and each `→` line's concrete `"field":value` pairs must be in the answer.
 */

const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');
const README = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
/** The README's own default address, replaced by the test's `npm start`'s. */
const DOCUMENTED_URL = 'http://127.0.0.1:3000';
const DONE = '__WALKTHROUGH_BLOCK_DONE__';
const FAILED = '__WALKTHROUGH_COMMAND_FAILED__';

interface Block {
  terminal: 'first' | 'second';
  code: string;
  /** 1-based line of the block's opening fence, for messages. */
  line: number;
}

function walkthroughBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  for (const match of markdown.matchAll(/<!-- walkthrough(: second terminal)? -->\n```sh\n([\s\S]*?)```/g)) {
    const line = markdown.slice(0, match.index).split('\n').length + 1;
    blocks.push({ terminal: match[1] ? 'second' : 'first', code: match[2] ?? '', line });
  }
  return blocks;
}

const BLOCKS = walkthroughBlocks(README);

/** What a `#    → 201 {…}` line promises about the answer of the curl before it. */
interface Expectation {
  status: number | undefined;
  pairs: Array<[string, unknown]>;
}

interface Command {
  /** The curl's position among the block's curls. */
  curl: number;
  expectation: Expectation | undefined;
}

/** The block's curls in order, each with the `→` line that follows it (if any). */
function curlsOf(code: string): Command[] {
  const commands: Command[] = [];
  for (const line of code.split('\n')) {
    const trimmed = line.trim();
    const arrow = /^#\s*→\s*(\d{3})?\s*(.*)$/.exec(trimmed);
    if (arrow) {
      const last = commands.at(-1);
      if (!last) throw new Error(`a → line before any curl: ${line}`);
      last.expectation = { status: arrow[1] ? Number(arrow[1]) : undefined, pairs: pairsOf(arrow[2] ?? '') };
      continue;
    }
    if (trimmed.startsWith('#')) continue;
    for (const _ of line.replace(/#.*$/, '').matchAll(/(?:^|[\s($|;])curl\s/g)) {
      commands.push({ curl: commands.length, expectation: undefined });
    }
  }
  return commands;
}

/** The `"field":value` pairs of a documented answer whose value is concrete (no `…`). */
function pairsOf(documented: string): Array<[string, unknown]> {
  const pairs: Array<[string, unknown]> = [];
  for (const match of documented.matchAll(/"(\w+)":("[^"…]*"|-?\d+|true|false|null)(?=[,}\]])/g)) {
    pairs.push([match[1] as string, JSON.parse(match[2] as string)]);
  }
  return pairs;
}

/** Whether any object inside `value` has `field` equal to `expected`. */
function containsPair(value: unknown, field: string, expected: unknown): boolean {
  if (Array.isArray(value)) return value.some((item) => containsPair(item, field, expected));
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  if (record[field] === expected) return true;
  return Object.values(record).some((item) => containsPair(item, field, expected));
}

/**
 * The shell's helper: `curl` records each answer's status and body (and still prints the body, so
 * `$(curl … | node …)` works as pasted). Nothing waits between commands: `npm run sandbox -- pay`
 * itself returns once the payment is credited, so the blocks work pasted in one go.
 */
const PRELUDE = String.raw`
set -E -o pipefail
trap 'echo "${FAILED} (exit $?): $BASH_COMMAND" >&2' ERR
curl() {
  local body code
  body=$(mktemp "$WALK_LOG/body.XXXXXX")
  code=$(command curl "$@" -o "$body" -w '%{http_code}') || return
  printf '%s\t%s\n' "$code" "$body" >> "$WALK_LOG/curls"
  cat "$body"
}
`;

let service: RunningService | undefined;
let shell: ChildProcess | undefined;
let listen: ChildProcess | undefined;
let shellOutput = '';
let dataDir = '';
let logDir = '';
let env: Record<string, string> = {};
let curlsSeen = 0;
/** Every answer so far: where later placeholders (`ben_…`) take their values from. */
const answers: string[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'naira-walkthrough-data-'));
  logDir = mkdtempSync(path.join(tmpdir(), 'naira-walkthrough-log-'));
  const sandboxPort = String(await freePort());
  // The reader's npm start has the default table prefix (not the test run's), as their terminals do.
  service = await startNpmStart({
    DATA_DIR: dataDir,
    SANDBOX_PORT: sandboxPort,
    TABLE_PREFIX: DEFAULT_TABLE_PREFIX,
  });
  // What the reader's terminals have: their usual environment and the ports npm start was given.
  env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    LANG: 'C.UTF-8',
    PORT: String(service.ports.gateway),
    SANDBOX_PORT: sandboxPort,
    DYNAMODB_PORT: String(service.ports.dynamodb),
    DATA_DIR: dataDir,
    WALK_LOG: logDir,
  };
  shell = spawn('bash', ['--noprofile', '--norc'], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  shell.stdout?.on('data', (chunk) => {
    shellOutput += chunk;
  });
  shell.stderr?.on('data', (chunk) => {
    shellOutput += chunk;
  });
  shell.stdin?.write(PRELUDE);
}, 90_000);

afterAll(async () => {
  // Ctrl-C in the second terminal, then the first terminal closes, then npm start stops.
  await stopGroup(listen, 'SIGINT');
  shell?.stdin?.end();
  await stopGroup(shell, 'SIGTERM');
  await service?.stop();
  if (service?.child.exitCode === null) service.child.kill('SIGKILL');
  for (const dir of [dataDir, logDir]) if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Signals the child's process group, and kills it outright if it is not gone within 10 s. */
async function stopGroup(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  signalGroup(child.pid, signal);
  const killer = setTimeout(() => signalGroup(child.pid as number, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(killer);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** The block as the reader pastes it: the placeholders filled with what was printed. */
function filled(code: string): string {
  const printed = [service?.output() ?? '', ...answers].join('\n');
  return code
    .split('\n')
    .map((line) => {
      if (line.trim().startsWith('#')) return line;
      const done = line
        .replaceAll(DOCUMENTED_URL, service?.url ?? DOCUMENTED_URL)
        .replaceAll('<your wallet number>', () => {
          const wallet = /\(wallet (\d{10})\)/.exec(service?.output() ?? '')?.[1];
          if (!wallet) throw new Error('npm start printed no wallet number');
          return wallet;
        })
        .replace(/\b([a-z]+_)…/g, (placeholder, prefix: string) => {
          const values = printed.match(new RegExp(`\\b${prefix}[A-Za-z0-9_-]{6,}`, 'g'));
          if (!values) throw new Error(`nothing printed so far gives a value for ${placeholder}`);
          return values.at(-1) as string;
        });
      const command = done.replace(/\s#.*$/, '');
      if (/…|<[a-z][a-z ]*>/.test(command))
        throw new Error(`a placeholder the walkthrough cannot fill: ${line}`);
      return done;
    })
    .join('\n');
}

/** Waits until `done` holds (the condition a reader watches for), failing with `what` after 30 s. */
async function until(done: () => boolean, what: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(what());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function listenOutput(): string {
  const file = path.join(logDir, 'listen.out');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

async function runInSecondTerminal(code: string): Promise<void> {
  const out = openSync(path.join(logDir, 'listen.out'), 'a');
  listen = spawn('bash', ['--noprofile', '--norc', '-c', code], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', out, out],
    detached: true,
  });
  closeSync(out);
  const child = listen;
  await until(
    () => listenOutput().includes('Ready:') || child.exitCode !== null,
    () => `the second terminal did not get ready:\n${listenOutput()}`,
  );
  expect(child.exitCode, listenOutput()).toBeNull();
}

async function runInFirstTerminal(block: Block, code: string): Promise<void> {
  const start = shellOutput.length;
  const marker = `${DONE}${block.line}`;
  shell?.stdin?.write(`${code}\necho ${marker}\n`);
  await until(
    () => shellOutput.includes(marker, start) || shell?.exitCode !== null,
    () => `the block did not finish:\n${shellOutput.slice(start)}`,
  );
  const output = shellOutput.slice(start);
  expect(output, `a command of the block failed:\n${output}`).not.toContain(FAILED);
  expect(output, output).toContain(marker);

  const recorded = readFileSync(path.join(logDir, 'curls'), 'utf8').trim().split('\n').slice(curlsSeen);
  curlsSeen += recorded.length;
  const commands = curlsOf(block.code);
  expect(recorded.length, `curls run by the block:\n${output}`).toBe(commands.length);
  for (const command of commands) {
    const [status, bodyFile] = (recorded[command.curl] as string).split('\t') as [string, string];
    const body = readFileSync(bodyFile, 'utf8');
    answers.push(body);
    const context = `curl ${command.curl + 1} of the block at README.md:${block.line} answered ${status} ${body}`;
    const answer = JSON.parse(body) as Record<string, unknown>;
    const documented = command.expectation?.status;
    if (documented === undefined || documented < 400) {
      expect(answer.status, context).toBe('success');
    }
    if (documented !== undefined) expect(Number(status), context).toBe(documented);
    else expect(Number(status), context).toBeLessThan(300);
    for (const [field, value] of command.expectation?.pairs ?? []) {
      expect(
        containsPair(answer, field, value),
        `${context}\nexpected "${field}":${JSON.stringify(value)}`,
      ).toBe(true);
    }
  }
}

describe('the README walkthrough, run as written against a real npm start', () => {
  it('has the blocks it promises: a second terminal before any payment, a funded wallet before a transfer', () => {
    const terminals = BLOCKS.map((block) => block.terminal);
    expect(terminals.filter((terminal) => terminal === 'second')).toHaveLength(1);
    const firstPay = BLOCKS.findIndex((block) => block.code.includes('sandbox -- pay'));
    const firstTransfer = BLOCKS.findIndex((block) => block.code.includes('/transfers'));
    expect(terminals.indexOf('second')).toBeLessThan(firstPay);
    expect(firstPay).toBeGreaterThanOrEqual(0);
    expect(firstPay).toBeLessThan(firstTransfer);
  });

  for (const block of BLOCKS) {
    it(`runs the ${block.terminal === 'second' ? 'second terminal' : 'block'} at README.md:${block.line}`, async () => {
      const code = filled(block.code);
      if (block.terminal === 'second') await runInSecondTerminal(code);
      else await runInFirstTerminal(block, code);
    }, 60_000);
  }

  it('had every payment of the walkthrough credited by the time its pay command returned', () => {
    const pays = BLOCKS.reduce(
      (count, block) => count + (block.code.match(/sandbox -- pay/g)?.length ?? 0),
      0,
    );
    expect(pays).toBeGreaterThanOrEqual(3);
    expect(shellOutput.match(/^ {2}credited: {4}\d+ kobo to mer_/gm) ?? []).toHaveLength(pays);
  });

  it('showed in the listen terminal every event the walkthrough says it prints', async () => {
    const promised = new Set(
      [...README.matchAll(/The listen terminal prints ([^\n]*)/g)].flatMap((match) =>
        [...(match[1] ?? '').matchAll(/\b[a-z_]+\.[a-z_]+\b/g)].map((event) => event[0]),
      ),
    );
    expect([...promised]).toContain('virtual_account.paid');
    for (const event of promised) {
      await until(
        () => listenOutput().includes(` ${event} `) || listenOutput().includes(` ${event}\n`),
        () => `the listen terminal never showed ${event}:\n${listenOutput()}`,
      );
    }
  }, 60_000);
});
