import { CREDENTIAL_HEADERS } from '#shared/api-keys/credential-headers.ts';
import {
  API_PREFIX,
  DASHBOARD_PREFIX,
  type HttpMethod,
  MERCHANT_ROUTES,
  ROUTES,
  type Route,
  servedPaths,
} from '#shared/definitions/routes.ts';

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

/** The served paths of one method, as regular expressions over the path a request is sent to. */
export interface MethodPaths {
  method: HttpMethod;
  /** One per served path (`servedPathPattern`), in the order of the route table. */
  patterns: string[];
}

/**
 * A regular expression matching exactly the request paths that reach one served path: behind the
 * API's stage when it is given (WAF sees `/dev/balance` on the stage), with each `{param}` one
 * segment and an optional trailing slash (API Gateway's REST APIs route `/balance/` as `/balance`,
 * and so does the local gateway). Written for AWS WAF's PCRE as much as for JavaScript: no
 * capturing group and no alternation (WAF refuses the first, and limits the second). A merchant
 * route's bare path matches behind `API_PREFIX` too.
 */
export function servedPathPattern(route: Route, path: string, stage?: string): string {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, (char) => `\\${char}`);
  const segments = path
    .split('/')
    .slice(1)
    .map((segment) => (/^\{\w+\}$/.test(segment) ? '/[^/]+' : `/${literal(segment)}`))
    .join('');
  const prefix = route.dashboard ? literal(DASHBOARD_PREFIX) : `(?:${literal(API_PREFIX)})?`;
  return `^${stage === undefined ? '' : literal(`/${stage}`)}${prefix}${segments}/?$`;
}

function methodPaths(routes: readonly Route[], stage?: string): MethodPaths[] {
  const byMethod = new Map<HttpMethod, string[]>();
  for (const route of routes) {
    const patterns = byMethod.get(route.method) ?? [];
    patterns.push(...route.paths.map((path) => servedPathPattern(route, path, stage)));
    byMethod.set(route.method, patterns);
  }
  return [...byMethod].map(([method, patterns]) => ({ method, patterns }));
}

/** The merchant API's keyed routes (`X-API-Key` and `X-API-Secret`), by method. */
export const keyedPaths = (stage?: string): MethodPaths[] =>
  methodPaths(
    ROUTES.filter((route) => route.auth === 'api_key'),
    stage,
  );

/** The dashboard's API (signed-in users, limited per user), by method. */
export const dashboardPaths = (stage?: string): MethodPaths[] =>
  methodPaths(
    (ROUTES as readonly Route[]).filter((route) => route.dashboard),
    stage,
  );

/** The partner webhook (never limited: API.md §2), by method. */
export const webhookPaths = (stage?: string): MethodPaths[] =>
  methodPaths(
    ROUTES.filter((route) => route.auth === 'webhook'),
    stage,
  );

const servedBy = (stage?: string) => ({
  keyed: keyedPaths(stage),
  exempt: [...webhookPaths(stage), ...dashboardPaths(stage)],
});
const LOCAL = servedBy();

/** What the rule inspects of a request: its method, its path, and its headers (names lower case). */
export interface InspectedRequest {
  method: string;
  path: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

function answers(served: readonly MethodPaths[], method: string, path: string): boolean {
  return served.some(
    (entry) => entry.method === method && entry.patterns.some((pattern) => regExp(pattern).test(path)),
  );
}

const regExps = new Map<string, RegExp>();
function regExp(pattern: string): RegExp {
  let found = regExps.get(pattern);
  if (!found) {
    found = new RegExp(pattern);
    regExps.set(pattern, found);
  }
  return found;
}

/**
 * Whether the limit counts a request: a public path (by its end: WAF sees the stage in front), and
 * any request no route answers for the credentials it carries. That is a request lacking a
 * credential header (absent or empty), which API Gateway refuses without the authorizer, and one
 * that no route answers at all (404, or 405 for another method: a CORS preflight too, as no route
 * answers OPTIONS), whatever headers it carries: an invented key on an unknown path never escapes
 * the IP's limit (§11). Never a request the partner webhook or a route of the dashboard's API
 * answers (each limited otherwise). `stage`: the stage WAF sees in front of the path (none locally).
 */
export function countsWithoutKey({ method, path, headers }: InspectedRequest, stage?: string): boolean {
  if (PUBLIC_PATHS.some((publicPath) => path.endsWith(publicPath))) return true;
  const served = stage === undefined ? LOCAL : servedBy(stage);
  if (answers(served.exempt, method, path)) return false;
  return CREDENTIAL_HEADERS.some((name) => !headers[name]) || !answers(served.keyed, method, path);
}
