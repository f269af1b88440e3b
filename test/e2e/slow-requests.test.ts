import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalGateway, startGateway } from '#infra/local/gateway.ts';
import { assertMatchesContract } from '#test/support/contract.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';

/**
 * API.md §11: the local gateway answers 408 with the envelope (or closes) when a request's headers
 * or body are not complete in time. 30 s by default; a short limit here keeps the test quick.
 */
let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startGateway({ port: 0, rootDir: PROJECT_ROOT, requestTimeoutMs: 1500 });
});
afterAll(() => gateway.close());

/**
 * Writes `raw` on a new connection and nothing more (a stalled request, unless `raw` is complete);
 * resolves with everything the server sent before it closed.
 */
function sendRaw(raw: string): Promise<{ text: string; elapsedMs: number }> {
  const { port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(raw));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () =>
      resolve({ text: Buffer.concat(chunks).toString('utf8'), elapsedMs: Date.now() - started }),
    );
    socket.on('error', reject);
    // The test's own bound: far beyond the gateway's limit, far below the 75 s the finding saw.
    socket.setTimeout(15_000, () => {
      socket.destroy();
      reject(new Error('the gateway kept a stalled request open'));
    });
  });
}

function envelopeOf(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { statusLine: head.split('\r\n')[0], head: head.toLowerCase(), body: JSON.parse(body) as unknown };
}

describe('a stalled request', () => {
  it('with incomplete headers is answered 408 with the envelope, then closed', async () => {
    const { text, elapsedMs } = await sendRaw('GET /api/v1/developer/banks HTTP/1.1\r\nHost: localhost\r\n');
    const answer = envelopeOf(text);
    expect(answer.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(answer.body).toStrictEqual({
      status: 'error',
      message: 'The request was not complete within 30 seconds',
      code: 'request_timeout',
    });
    expect(answer.head).toContain('content-type: application/json; charset=utf-8');
    expect(answer.head).toContain('x-request-id:');
    expect(elapsedMs).toBeGreaterThanOrEqual(1000);
    // A status /openapi.json lists for the route, with its envelope.
    assertMatchesContract('GET', '/api/v1/developer/banks', 408, answer.body);
  });

  it('with an incomplete body is answered 408 with the envelope, then closed', async () => {
    const body = '{"amount":';
    const { text } = await sendRaw(
      [
        'POST /api/v1/developer/virtual-accounts HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        'Content-Length: 100',
        '',
        body,
      ].join('\r\n'),
    );
    const answer = envelopeOf(text);
    expect(answer.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(answer.body).toMatchObject({ status: 'error', code: 'request_timeout' });
    assertMatchesContract('POST', '/api/v1/developer/virtual-accounts', 408, answer.body);
  });

  it('is bounded at 30 seconds by default', async () => {
    const standard = await startGateway({ port: 0, rootDir: PROJECT_ROOT });
    try {
      expect(standard.server.requestTimeout).toBe(30_000);
      expect(standard.server.headersTimeout).toBe(30_000);
    } finally {
      await standard.close();
    }
  });
});

describe('a request without exactly one Host header', () => {
  it.each([
    ['none', '', 'Missing Host header (HTTP/1.1 requires it)'],
    // RFC 9112 §3.2: one Host, else 400 (Node would join the two).
    ['two', 'Host: a.example\r\nHost: b.example\r\n', 'Host header sent more than once'],
  ])(
    '(%s) is answered 400 with the envelope and a request id, as every refusal is',
    async (_label, hosts, message) => {
      const { text } = await sendRaw(
        `GET /api/v1/developer/banks HTTP/1.1\r\n${hosts}Connection: close\r\n\r\n`,
      );
      const answer = envelopeOf(text);
      expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
      expect(answer.body).toStrictEqual({ status: 'error', message, code: 'validation_error' });
      expect(answer.head).toContain('x-request-id:');
    },
  );
});
