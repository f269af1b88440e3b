import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { type LocalGateway, startGateway } from '#infra/local/gateway.ts';
import { sessionVerifierFrom } from '#infra/local/session-verifier.ts';
import type { Route } from '#shared/definitions/routes.ts';
import { assertMatchesContract } from '#test/support/contract.ts';

export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** A local gateway on a free port, serving the project's handlers (or fixture routes). */
export function startTestGateway(
  options: { rootDir?: string; routes?: readonly Route[] } = {},
): Promise<LocalGateway> {
  return startGateway({
    port: 0,
    rootDir: options.rootDir ?? PROJECT_ROOT,
    routes: options.routes,
    // Dashboard sessions are checked against the test run's local Cognito, as under npm start.
    verifySession: sessionVerifierFrom(process.env),
  });
}

/** A JSON request to the gateway; returns status, headers and the parsed body. */
export async function call(
  gateway: LocalGateway,
  method: string,
  pathAndQuery: string,
  /** `rawBody` as bytes is sent as it is (a body in another encoding than UTF-8). */
  options: { body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${gateway.url}${pathAndQuery}`, { method, headers, body });
  const text = await response.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  // Every response an e2e test sees must match the OpenAPI document.
  assertMatchesContract(method, pathAndQuery, response.status, json);
  return { status: response.status, headers: response.headers, body: json };
}

/** The `data` of a response's envelope, typed as the test expects it. */
export function data<T = Record<string, unknown>>(response: { body: Record<string, unknown> | null }): T {
  return response.body?.data as T;
}

/**
 * A request from a chosen loopback address (127.0.0.0/8 all reaches this machine), with headers
 * that may repeat (an array sends one header line per value): what `fetch` cannot do.
 */
export function callFrom(
  gateway: LocalGateway,
  localAddress: string,
  method: string,
  pathAndQuery: string,
  /** An array is raw `[name, value, name, value, …]`: names that differ only in case stay apart. */
  headers: Record<string, string | string[]> | string[] = {},
  /** Sent as JSON (with its content type, unless `headers` is raw). */
  body?: unknown,
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> | null;
}> {
  return new Promise((resolve, reject) => {
    const target = new URL(`${gateway.url}${pathAndQuery}`);
    // Raw headers are sent as given: the Host header too.
    const sent = Array.isArray(headers)
      ? ['Host', target.host, ...headers]
      : body === undefined
        ? headers
        : { 'Content-Type': 'application/json', ...headers };
    const request = httpRequest(target, { method, headers: sent, localAddress }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        try {
          const text = Buffer.concat(chunks).toString('utf8');
          const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
          assertMatchesContract(method, pathAndQuery, response.statusCode ?? 0, body);
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
        } catch (error) {
          reject(error);
        }
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
