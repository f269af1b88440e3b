import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/**
 * The dashboard's web app (API.md §10): one esbuild bundle plus its page and styles, no CDN at run
 * time. Served locally at `/dashboard` by the local gateway, and on AWS from S3 behind CloudFront.
 */
const SOURCE_DIR = import.meta.dirname;

/**
 * The Content-Security-Policy of every dashboard response: scripts, styles and API calls from its
 * own origin only (on AWS the distribution forwards `/api/v1/dashboard/*` to the API).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The other security headers of every dashboard response (locally and on CloudFront alike). */
export const DASHBOARD_SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
} as const;

/** Builds the app into `outDir` (index.html, app.js, app.css); returns the files written. */
export async function buildDashboard(outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [path.join(SOURCE_DIR, 'app.tsx')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outfile: path.join(outDir, 'app.js'),
    logLevel: 'silent',
    legalComments: 'none',
  });
  copyFileSync(path.join(SOURCE_DIR, 'index.html'), path.join(outDir, 'index.html'));
  copyFileSync(path.join(SOURCE_DIR, 'app.css'), path.join(outDir, 'app.css'));
  return ['index.html', 'app.js', 'app.css'];
}
