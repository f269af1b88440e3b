import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type BuildOptions, build, buildSync, type Metafile } from 'esbuild';

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
    // The licences of what the bundle holds go to their own file (`LICENSES_FILE`), named by one line.
    legalComments: 'none',
    banner: { js: `/*! Third-party licences: ${LICENSES_FILE} */` },
    metafile: true,
  };
}

/** The notices of the packages bundled into app.js (their MIT licences ask that they go with it). */
export const LICENSES_FILE = 'licenses.txt';

const STATIC_FILES = ['index.html', 'app.css'];

/** The package folder (`node_modules/<name>` or `node_modules/@scope/name`) an input came from. */
function packageOf(input: string): string | undefined {
  return /^(.*?node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
}

/**
 * Writes `LICENSES_FILE`: each bundled package's name, version, licence and its LICENSE text. A
 * package bundled without a licence text fails the build, rather than ship without its notice.
 */
function writeLicenses(outDir: string, metafile: Metafile | undefined): void {
  const folders = [
    ...new Set(Object.keys(metafile?.inputs ?? {}).flatMap((input) => packageOf(input) ?? [])),
  ];
  const notices = folders.sort().map((folder) => {
    const manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      license?: string;
    };
    const text = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license']
      .map((name) => path.join(folder, name))
      .find((file) => existsSync(file));
    if (!text) throw new Error(`the dashboard bundles ${manifest.name}, which has no LICENSE file`);
    const title = `${manifest.name} ${manifest.version} (${manifest.license ?? 'see below'})`;
    return `${title}\n${'='.repeat(title.length)}\n\n${readFileSync(text, 'utf8').trim()}\n`;
  });
  writeFileSync(
    path.join(outDir, LICENSES_FILE),
    `The dashboard's app.js bundles these packages, under these licences.\n\n${notices.join('\n')}`,
  );
}

function copyStatic(outDir: string, metafile: Metafile | undefined): string[] {
  for (const name of STATIC_FILES) copyFileSync(path.join(SOURCE_DIR, name), path.join(outDir, name));
  writeLicenses(outDir, metafile);
  return ['app.js', ...STATIC_FILES, LICENSES_FILE];
}

/** Builds the app into `outDir` (index.html, app.js, app.css, the licences); returns the files written. */
export async function buildDashboard(outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  return copyStatic(outDir, (await build(bundleOptions(outDir))).metafile);
}

/** The same build, synchronously: the CDK stack is built synchronously at synth. */
export function buildDashboardSync(outDir: string): string[] {
  mkdirSync(outDir, { recursive: true });
  return copyStatic(outDir, buildSync(bundleOptions(outDir)).metafile);
}
