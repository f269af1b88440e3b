import path from 'node:path';
import { type LocalGateway, startGateway } from '#infra/local/gateway.ts';
import type { Route } from '#shared/definitions/routes.ts';
import { assertMatchesContract } from '#test/support/contract.ts';

export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** A local gateway on a free port, serving the project's handlers (or fixture routes). */
export function startTestGateway(
  options: { rootDir?: string; routes?: readonly Route[] } = {},
): Promise<LocalGateway> {
  return startGateway({ port: 0, rootDir: options.rootDir ?? PROJECT_ROOT, routes: options.routes });
}

/** A JSON request to the gateway; returns status, headers and the parsed body. */
export async function call(
  gateway: LocalGateway,
  method: string,
  pathAndQuery: string,
  options: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.rawBody;
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
