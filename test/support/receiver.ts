import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

/** One request a test receiver got. */
export interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A merchant's webhook endpoint on loopback for tests: records every request and answers with
 * whatever `answer` says for the n-th request (a status, or 'hang' to never answer).
 */
export async function startReceiver(answer: (n: number) => number | 'hang' = () => 200) {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        at: Date.now(),
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const reply = answer(received.length);
      if (reply === 'hang') return;
      response.writeHead(reply, { 'content-type': 'text/plain' });
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
