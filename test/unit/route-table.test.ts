import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  API_PREFIX,
  DASHBOARD_PREFIX,
  MERCHANT_ROUTES,
  METHOD_NOT_ALLOWED_FUNCTION,
  ROUTES,
  servedPaths,
} from '#shared/definitions/routes.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';

describe('the route table', () => {
  it('declares the nineteen endpoints of the merchant API, each once, and the dashboard routes apart', () => {
    expect(MERCHANT_ROUTES).toHaveLength(19);
    const keys = ROUTES.flatMap((route) => servedPaths(route).map((p) => `${route.method} ${p}`));
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(ROUTES.map((route) => route.name)).size).toBe(ROUTES.length);
    for (const route of ROUTES.filter((r) => !MERCHANT_ROUTES.includes(r as never))) {
      expect(
        servedPaths(route).every((p) => p.startsWith(`${DASHBOARD_PREFIX}/`)),
        route.name,
      ).toBe(true);
    }
  });

  it('serves every route at the bare path and under the version prefix, with the /banks/list alias', () => {
    const banks = ROUTES.find((route) => route.name === 'list-banks');
    expect(banks && servedPaths(banks).sort()).toEqual(
      ['/banks', '/banks/list', `${API_PREFIX}/banks`, `${API_PREFIX}/banks/list`].sort(),
    );
  });

  it('needs credentials everywhere except the bank list and the partner webhook', () => {
    const auth = Object.fromEntries(MERCHANT_ROUTES.map((route) => [route.name, route.auth]));
    expect(auth['list-banks']).toBe('none');
    expect(auth['receive-partner-webhook']).toBe('webhook');
    expect(Object.values(auth).filter((a) => a === 'api_key')).toHaveLength(17);
  });

  it('has a route for every handler file, and every handler agrees with its route on auth', async () => {
    const files = readdirSync(path.join(PROJECT_ROOT, 'functions')).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(0);
    const consumers = [
      'process-payment-events.ts',
      'requery-transfers.ts',
      'deliver-webhooks.ts',
      'fan-out-events.ts',
      'authorize-api-key.ts',
      `${METHOD_NOT_ALLOWED_FUNCTION}.ts`,
    ];
    for (const file of files.filter((f) => !consumers.includes(f))) {
      expect(ROUTES.map((route) => `${route.name}.ts`)).toContain(file);
      // Building the handler checks the route's auth against the builder used.
      const module = (await import(path.join(PROJECT_ROOT, 'functions', file))) as { handler: unknown };
      expect(typeof module.handler).toBe('function');
    }
  });
});
