import '#shared/aws/node-version.ts';
import { createServer } from 'node:net';

/** Credentials for the local stand-ins, which accept any. */
export const localCredentials = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
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
