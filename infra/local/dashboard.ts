import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { buildDashboard, DASHBOARD_CSP, DASHBOARD_SECURITY_HEADERS } from '#infra/dashboard/build.ts';
import { ApiError } from '#shared/errors.ts';
import { errorResult } from '#shared/http/errors.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The headers CloudFront's response-headers policy adds on AWS to every answer of the dashboard's
 * site: its files and, under `/api/v1/dashboard/`, its API's answers.
 */
export const DASHBOARD_SITE_HEADERS = {
  'Content-Security-Policy': DASHBOARD_CSP,
  ...DASHBOARD_SECURITY_HEADERS,
};

/**
 * The dashboard's web app under `/dashboard/`, as CloudFront serves it on AWS: the same build, the
 * same Content-Security-Policy and security headers. Built once, on the first request, into memory.
 */
export function dashboardResponder() {
  let files: Promise<Map<string, string>> | undefined;
  const load = async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'naira-dashboard-'));
    try {
      const names = await buildDashboard(dir);
      return new Map(names.map((name) => [name, readFileSync(path.join(dir, name), 'utf8')]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  /** Every answer of the site carries its CSP and security headers, as CloudFront's policy adds them. */
  const secured = (result: APIGatewayProxyResult): APIGatewayProxyResult => ({
    ...result,
    headers: { ...result.headers, ...DASHBOARD_SITE_HEADERS },
  });
  return async (urlPath: string, requestId: string): Promise<APIGatewayProxyResult | undefined> => {
    if (urlPath === '/dashboard') {
      // Relative asset URLs resolve under the folder only.
      return secured({
        statusCode: 301,
        headers: { Location: '/dashboard/', 'X-Request-Id': requestId },
        body: '',
      });
    }
    if (!urlPath.startsWith('/dashboard/')) return undefined;
    const name = urlPath === '/dashboard/' ? 'index.html' : urlPath.slice('/dashboard/'.length);
    files ??= load().catch((error: unknown) => {
      files = undefined;
      throw error;
    });
    const body = (await files).get(name);
    // Answered here, before the route table, so never counted per IP: on AWS the site is not behind
    // the API's WAF. (There CloudFront answers S3's 403 for a file it lacks; here the usual 404.)
    if (body === undefined) {
      return secured(errorResult(new ApiError('route_not_found', 'Route not found'), requestId));
    }
    return secured({
      statusCode: 200,
      headers: {
        'Content-Type': TYPES[path.extname(name)] ?? 'application/octet-stream',
        'Cache-Control': name === 'index.html' ? 'no-cache' : 'max-age=300',
        'X-Request-Id': requestId,
      },
      body,
    });
  };
}
