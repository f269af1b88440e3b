import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { type BuildOptions, build, buildSync } from 'esbuild';

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

/** esbuild's options for the app's one bundle. */
function bundleOptions(outDir: string): BuildOptions {
  return {
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
  };
}

const STATIC_FILES = ['index.html', 'app.css'];

function copyStatic(outDir: string): string[] {
  for (const name of STATIC_FILES) copyFileSync(path.join(SOURCE_DIR, name), path.join(outDir, name));
  return ['app.js', ...STATIC_FILES];
}

/** Builds the app into `outDir` (index.html, app.js, app.css); returns the files written. */
export async function buildDashboard(outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  await build(bundleOptions(outDir));
  return copyStatic(outDir);
}

/** The same build, synchronously: the CDK stack is built synchronously at synth. */
export function buildDashboardSync(outDir: string): string[] {
  mkdirSync(outDir, { recursive: true });
  buildSync(bundleOptions(outDir));
  return copyStatic(outDir);
}
