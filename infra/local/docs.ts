import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { OPENAPI_PATHS } from '#shared/definitions/routes.ts';
import { JSON_CONTENT_TYPE } from '#shared/http/envelope.ts';

const require = createRequire(import.meta.url);

const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const BLANK_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

/**
 * The page may load nothing from anywhere but this server: Redoc's bundle draws a logo from its
 * CDN, which this policy stops before any request is made (the docs work fully offline).
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Naira Pay API reference</title>
  <style>
    body { margin: 0; }
    /* Long lines wrap inside their column instead of hiding behind a sideways scroll bar. */
    redoc pre, redoc pre code, redoc .redoc-json { white-space: pre-wrap !important; overflow-wrap: anywhere; }
  </style>
</head>
<body>
  <redoc spec-url="/openapi.json" hide-hostname="false" expand-responses="200,201"></redoc>
  <script src="/docs/redoc.standalone.js"></script>
</body>
</html>
`;

/**
 * The docs a developer reads: the generated OpenAPI document and a Redoc page that renders it with
 * Redoc's bundle from npm (no CDN: works offline). The document's modules are imported on first
 * use: they read the service configuration at load, which the local runtime sets only once its
 * stand-ins are up.
 */
export function docsResponder(baseUrl: string) {
  let document: string | undefined;
  let redoc: string | undefined;
  return async (path: string, requestId: string): Promise<APIGatewayProxyResult | undefined> => {
    const common = { 'X-Request-Id': requestId, 'Cache-Control': 'no-cache' };
    if (OPENAPI_PATHS.includes(path)) {
      const { buildOpenApiDocument } = await import('#infra/openapi/document.ts');
      document ??= JSON.stringify(buildOpenApiDocument(baseUrl));
      return { statusCode: 200, headers: { ...common, 'Content-Type': JSON_CONTENT_TYPE }, body: document };
    }
    if (path === '/docs' || path === '/docs/') {
      return {
        statusCode: 200,
        headers: { ...common, 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': CSP },
        body: PAGE,
      };
    }
    // Browsers ask for it by themselves: answered, so the docs page logs no failed request.
    if (path === '/favicon.ico') return { statusCode: 204, headers: common, body: '' };
    if (path === '/docs/redoc.standalone.js') {
      // Redoc 2's sidebar draws its logo from cdn.redoc.ly unconditionally (no option turns it off);
      // served with an inline blank image instead, the page asks no other host for anything.
      redoc ??= readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8').replace(
        REDOC_CDN_LOGO,
        BLANK_IMAGE,
      );
      return {
        statusCode: 200,
        headers: { ...common, 'Content-Type': 'text/javascript; charset=utf-8' },
        body: redoc,
      };
    }
    return undefined;
  };
}
