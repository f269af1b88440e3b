import { CREDENTIAL_HEADERS } from '#shared/api-keys/credential-headers.ts';
import { DASHBOARD_PREFIX, MERCHANT_ROUTES, ROUTES, servedPaths } from '#shared/definitions/routes.ts';

/**
 * Which requests the per-IP limit of requests without a key counts (API.md §2, §11), in one place:
 * on AWS the stack's WAF rule is built from these lists (infra/constructs/public-limit.ts, and the
 * infra test evaluates the synthesized rule against `countsWithoutKey`); locally the gateway applies
 * `countsWithoutKey` where no route answers, the authorizer and `GET /banks` counting the rest.
 */

/** The paths of the merchant API that take no credentials (`GET /banks` and its aliases). */
export const PUBLIC_PATHS: readonly string[] = MERCHANT_ROUTES.filter((route) => route.auth === 'none')
  .flatMap((route) => servedPaths(route))
  .sort();

/** The partner webhook's paths: never limited (API.md §2), whatever headers a delivery carries. */
export const WEBHOOK_PATHS: readonly string[] = ROUTES.filter((route) => route.auth === 'webhook')
  .flatMap((route) => servedPaths(route))
  .sort();

/** What the rule inspects of a request: its method, its path, and its headers (names lower case). */
export interface InspectedRequest {
  method: string;
  path: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * Whether the limit counts a request: a public path (by its end: WAF sees the stage in front), or
 * any request lacking a credential header (absent or empty), except the partner webhook (a path
 * containing its path, so a trailing slash is still the webhook), the dashboard's API and a CORS
 * preflight.
 */
export function countsWithoutKey({ method, path, headers }: InspectedRequest): boolean {
  if (PUBLIC_PATHS.some((publicPath) => path.endsWith(publicPath))) return true;
  const exempt =
    method === 'OPTIONS' ||
    WEBHOOK_PATHS.some((webhookPath) => path.includes(webhookPath)) ||
    path.includes(`${DASHBOARD_PREFIX}/`);
  return !exempt && CREDENTIAL_HEADERS.some((name) => !headers[name]);
}
