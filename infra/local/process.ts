import '#shared/aws/node-version.ts';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { FETCH_BLOCKED_PORTS } from '#infra/local/ports.ts';

/** Credentials for the local stand-ins, which accept any. */
export const localCredentials = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** Whether `port` can be listened on at 127.0.0.1 right now. */
function bindable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : undefined));
    });
  });
}

/** The lowest port the OS hands out for outgoing connections (Linux; elsewhere a safe guess). */
export function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const value = Number(low);
    return Number.isInteger(value) && value > 12_000 ? value : 32_768;
  } catch {
    return 32_768;
  }
}

const handedOut = new Set<number>();

/**
 * A TCP port that was free a moment ago on 127.0.0.1, picked below the OS's ephemeral range: a port
 * from that range can be taken by any outgoing connection (a client's local port) between this
 * check and the listen, which made services fail with EADDRINUSE now and then.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  for (let attempt = 0; attempt < 50; attempt++) {
    const candidate = 10_000 + Math.floor(Math.random() * (high - 10_000));
    // Never the same port twice in one process (a port handed out may not be listened on yet), and
    // never one Node's fetch refuses to call (10080): npm start refuses those.
    if (handedOut.has(candidate) || FETCH_BLOCKED_PORTS.has(candidate)) continue;
    const port = await bindable(candidate);
    if (port !== undefined) {
      handedOut.add(port);
      return port;
    }
  }
  const any = await bindable(0);
  if (any === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return any;
}

/** Retries `probe` until it resolves or `timeoutMs` passes. */
export async function waitFor<T>(probe: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      return await probe();
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`, { cause: lastError });
}
