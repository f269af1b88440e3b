import type { QueueKey } from '#shared/definitions/queues.ts';
import type { TableName } from '#shared/definitions/tables.ts';

/**
 * The route table: the one list of the service's HTTP endpoints. The CDK stack and the local
 * gateway both read it; adding an endpoint is one entry here plus its handler file.
 */

/** Every route is served under this prefix and at its bare path (API.md §1). */
export const API_PREFIX = '/api/v1/developer';

/** Where the OpenAPI document is served, keyless: by API Gateway itself on AWS, by the gateway locally. */
export const OPENAPI_PATHS: readonly string[] = ['/openapi.json', `${API_PREFIX}/openapi.json`];

/**
 * The dashboard's own API (API.md §10): served under this prefix only, on AWS also through the
 * dashboard's CloudFront distribution, so the web app calls its own origin.
 */
export const DASHBOARD_PREFIX = '/api/v1/dashboard';

/** Per-key limit of API.md §2, shared by the local limiter and the API Gateway usage plan. */
export const RATE_LIMIT = { requests: 100, windowSeconds: 60 } as const;

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/**
 * What a function may touch, for least-privilege grants on AWS: tables it reads (GetItem, Query),
 * tables it writes (read included, plus PutItem and UpdateItem: no function deletes, scans or
 * batch-writes), and the queues it sends to. Routes with `auth: 'api_key'` get nothing of the key
 * table or the pepper: only the authorizer verifies credentials. The webhook gets its signing secret.
 */
export interface Access {
  readonly read?: readonly TableName[];
  readonly write?: readonly TableName[];
  /** Tables it reads several items of in one call (BatchGetItem), besides `read` or `write`. */
  readonly batchRead?: readonly TableName[];
  /** Queues it sends to (it gets each one's URL). */
  readonly sendsTo?: readonly QueueKey[];
  /** Calls the banking partner (and so needs its credentials). */
  readonly callsPartner?: boolean;
  /** Derives merchant webhook secrets (and so needs the master key). */
  readonly signsWebhooks?: boolean;
  /**
   * Makes, rolls or revokes API keys for the dashboard: registers or deletes keys in the usage plan
   * (`USAGE_PLAN_NAME`, API Gateway's key calls).
   */
  readonly managesKeys?: boolean;
  /** Makes API key secrets (create and roll), and so hashes them with the pepper; a revoke makes none. */
  readonly issuesSecrets?: boolean;
  /** Signs dashboard users in at Cognito (`USER_POOL_ID`, `USER_POOL_CLIENT_ID`; public calls, no IAM). */
  readonly signsIn?: boolean;
  /**
   * A public route that counts each request against the per-client-IP limit which failed attempts
   * share (API.md §11; `clientIpLimits`), in its handler on AWS and locally alike.
   */
  readonly limitsClientIp?: boolean;
}

/** Tables whose writers move money: only money-moving functions may write them. */
export const LEDGER_TABLES: readonly TableName[] = ['merchants', 'ledgerEntries', 'transactions'];

/** The requery function's timeout, on AWS and in the local runtime (its partner calls' deadline). */
export const REQUERY_TIMEOUT_SECONDS = 50;

/**
 * The scheduled requery (API.md §7): reads pending transfers, asks the partner, settles them, and
 * sends again those the partner does not know (`partnerMemos`: Paystack's recipient codes).
 */
export const REQUERY_ACCESS: Access = {
  write: ['merchants', 'ledgerEntries', 'transactions', 'events', 'partnerMemos'],
  callsPartner: true,
};

/**
 * The REQUEST authorizer in front of every `api_key` route (DESIGN.md "Who is calling"): verifies key
 * and secret once, counts failed attempts per client IP, and hands the usage plan the key. It alone
 * reads the API key table and the pepper.
 */
export const API_KEY_AUTHORIZER = {
  name: 'authorize-api-key',
  /** API Gateway caches a verdict this long per key, secret and client IP (revocation: ≤ 60 s in all). */
  resultCacheSeconds: 30,
} as const;

/**
 * `api_key`: both credential headers; `session`: a dashboard user's Cognito ID token
 * (`Authorization: Bearer …`), the merchant from its `custom:merchant_id` claim; `none`: public;
 * `webhook`: the partner's signature, no limit.
 */
export type RouteAuth = 'api_key' | 'session' | 'none' | 'webhook';

export interface Route {
  /** Function name, kebab-case verb-noun, also the handler's file name under `functions/`. */
  readonly name: string;
  readonly method: HttpMethod;
  /** Bare paths; API Gateway style `{param}` segments. The first is the canonical one. */
  readonly paths: readonly string[];
  readonly auth: RouteAuth;
  readonly summary: string;
  readonly access: Access;
  /** Part of the dashboard's API: served under `DASHBOARD_PREFIX` only, not in the merchant API's document. */
  readonly dashboard?: boolean;
  /**
   * The route whose function serves this one too: a dashboard route that is a merchant route's very
   * operation runs in that route's Lambda, which tells the two gates apart by the resource path
   * API Gateway hands it (and a CloudFormation stack stays within its 500 resources).
   */
  readonly servedBy?: string;
}

export const ROUTES = [
  {
    name: 'list-banks',
    method: 'GET',
    paths: ['/banks', '/banks/list'],
    auth: 'none',
    summary: 'List supported banks',
    access: { limitsClientIp: true },
  },
  {
    name: 'validate-account',
    method: 'POST',
    paths: ['/validate-account'],
    auth: 'api_key',
    summary: 'Validate a bank account (name enquiry)',
    access: { write: ['nameEnquiries', 'accountSessions'], callsPartner: true },
  },
  {
    name: 'get-balance',
    method: 'GET',
    paths: ['/balance'],
    auth: 'api_key',
    summary: 'Read the wallet balance',
    access: { read: ['merchants'] },
  },
  {
    name: 'create-beneficiary',
    method: 'POST',
    paths: ['/beneficiaries'],
    auth: 'api_key',
    summary: 'Save a beneficiary',
    access: { read: ['accountSessions'], write: ['nameEnquiries', 'beneficiaries'], callsPartner: true },
  },
  {
    name: 'list-beneficiaries',
    method: 'GET',
    paths: ['/beneficiaries'],
    auth: 'api_key',
    summary: 'List beneficiaries',
    access: { read: ['beneficiaries'] },
  },
  {
    name: 'create-transfer',
    method: 'POST',
    paths: ['/transfers'],
    auth: 'api_key',
    summary: 'Send a transfer',
    access: {
      read: ['beneficiaries', 'accountSessions'],
      // `events`: a transfer settled by the partner's first answer writes its event in the same
      // transaction as its status.
      write: [
        'nameEnquiries',
        'merchants',
        'ledgerEntries',
        'transactions',
        'events',
        'transferReferences',
        'partnerMemos',
      ],
      callsPartner: true,
    },
  },
  {
    name: 'list-transactions',
    method: 'GET',
    paths: ['/transactions'],
    auth: 'api_key',
    summary: 'List transactions',
    access: { read: ['transactions'] },
  },
  {
    name: 'get-transaction',
    method: 'GET',
    paths: ['/transactions/{reference}'],
    auth: 'api_key',
    summary: 'Get one transaction',
    access: { read: ['transactions'] },
  },
  {
    name: 'create-virtual-account',
    method: 'POST',
    paths: ['/virtual-accounts'],
    auth: 'api_key',
    summary: 'Create a temporary virtual account',
    access: { read: ['merchants'], write: ['accountOwners', 'virtualAccounts'], callsPartner: true },
  },
  {
    name: 'get-payment',
    method: 'GET',
    paths: ['/payments/{reference}'],
    auth: 'api_key',
    summary: 'Get a payment status',
    access: { read: ['virtualAccounts', 'payments'] },
  },
  {
    name: 'list-virtual-accounts',
    method: 'GET',
    paths: ['/virtual-accounts'],
    auth: 'api_key',
    summary: 'List virtual accounts',
    access: { read: ['virtualAccounts', 'payments'] },
  },
  {
    name: 'list-events',
    method: 'GET',
    paths: ['/events'],
    auth: 'api_key',
    summary: 'List events',
    access: { read: ['events'] },
  },
  {
    name: 'get-event',
    method: 'GET',
    paths: ['/events/{id}'],
    auth: 'api_key',
    summary: 'Get an event and its deliveries',
    access: { read: ['events', 'webhookDeliveries'] },
  },
  {
    name: 'redeliver-event',
    method: 'POST',
    paths: ['/events/{id}/redeliver'],
    auth: 'api_key',
    summary: 'Redeliver an event',
    access: {
      read: ['events', 'webhookEndpoints'],
      write: ['webhookDeliveries'],
      sendsTo: ['webhookDeliveries'],
    },
  },
  {
    name: 'create-webhook-endpoint',
    method: 'POST',
    paths: ['/webhook-endpoints'],
    auth: 'api_key',
    summary: 'Register a webhook endpoint',
    access: { write: ['webhookEndpoints'], signsWebhooks: true },
  },
  {
    name: 'list-webhook-endpoints',
    method: 'GET',
    paths: ['/webhook-endpoints'],
    auth: 'api_key',
    summary: 'List webhook endpoints',
    access: { read: ['webhookEndpoints'] },
  },
  {
    name: 'delete-webhook-endpoint',
    method: 'DELETE',
    paths: ['/webhook-endpoints/{id}'],
    auth: 'api_key',
    summary: 'Delete a webhook endpoint',
    access: { write: ['webhookEndpoints'] },
  },
  {
    name: 'rotate-webhook-secret',
    method: 'POST',
    paths: ['/webhook-endpoints/{id}/rotate-secret'],
    auth: 'api_key',
    summary: "Rotate a webhook endpoint's secret",
    access: { write: ['webhookEndpoints'], signsWebhooks: true },
  },
  {
    name: 'receive-partner-webhook',
    method: 'POST',
    paths: ['/webhooks/payments', '/webhooks/paystack'],
    auth: 'webhook',
    summary: 'Partner webhook (signed)',
    access: { sendsTo: ['paymentEvents'], callsPartner: true },
  },
  {
    name: 'get-dashboard-overview',
    method: 'GET',
    paths: ['/overview'],
    auth: 'session',
    summary: 'Dashboard: balance, wallet and recent transactions',
    access: { read: ['merchants', 'transactions'] },
    dashboard: true,
  },
  {
    name: 'list-api-keys',
    method: 'GET',
    paths: ['/keys'],
    auth: 'session',
    summary: "Dashboard: list the merchant's API keys",
    access: { read: ['apiKeys'] },
    dashboard: true,
  },
  {
    name: 'create-api-key',
    method: 'POST',
    paths: ['/keys'],
    auth: 'session',
    summary: 'Dashboard: create an API key',
    access: { write: ['apiKeys'], managesKeys: true, issuesSecrets: true },
    dashboard: true,
  },
  {
    name: 'roll-api-key',
    method: 'POST',
    paths: ['/keys/{api_key}/roll'],
    auth: 'session',
    summary: 'Dashboard: roll an API key',
    access: { write: ['apiKeys'], managesKeys: true, issuesSecrets: true },
    dashboard: true,
  },
  {
    name: 'revoke-api-key',
    method: 'POST',
    paths: ['/keys/{api_key}/revoke'],
    auth: 'session',
    summary: 'Dashboard: revoke an API key',
    access: { write: ['apiKeys'], managesKeys: true },
    dashboard: true,
  },
  {
    name: 'set-api-key-ips',
    method: 'POST',
    paths: ['/keys/{api_key}/allowed-ips'],
    auth: 'session',
    summary: "Dashboard: replace an API key's IP allowlist",
    access: { write: ['apiKeys'] },
    dashboard: true,
  },
  {
    name: 'dashboard-list-transactions',
    servedBy: 'list-transactions',
    method: 'GET',
    paths: ['/transactions'],
    auth: 'session',
    summary: 'Dashboard: list transactions',
    access: { read: ['transactions'] },
    dashboard: true,
  },
  {
    name: 'dashboard-list-virtual-accounts',
    servedBy: 'list-virtual-accounts',
    method: 'GET',
    paths: ['/virtual-accounts'],
    auth: 'session',
    summary: 'Dashboard: list virtual accounts',
    access: { read: ['virtualAccounts', 'payments'] },
    dashboard: true,
  },
  {
    name: 'dashboard-get-payment',
    servedBy: 'get-payment',
    method: 'GET',
    paths: ['/payments/{reference}'],
    auth: 'session',
    summary: 'Dashboard: get a payment status',
    access: { read: ['virtualAccounts', 'payments'] },
    dashboard: true,
  },
  {
    name: 'dashboard-list-webhook-endpoints',
    servedBy: 'list-webhook-endpoints',
    method: 'GET',
    paths: ['/webhook-endpoints'],
    auth: 'session',
    summary: 'Dashboard: list webhook endpoints',
    access: { read: ['webhookEndpoints'] },
    dashboard: true,
  },
  {
    name: 'dashboard-create-webhook-endpoint',
    servedBy: 'create-webhook-endpoint',
    method: 'POST',
    paths: ['/webhook-endpoints'],
    auth: 'session',
    summary: 'Dashboard: register a webhook endpoint',
    access: { write: ['webhookEndpoints'], signsWebhooks: true },
    dashboard: true,
  },
  {
    name: 'dashboard-delete-webhook-endpoint',
    servedBy: 'delete-webhook-endpoint',
    method: 'DELETE',
    paths: ['/webhook-endpoints/{id}'],
    auth: 'session',
    summary: 'Dashboard: delete a webhook endpoint',
    access: { write: ['webhookEndpoints'] },
    dashboard: true,
  },
  {
    name: 'dashboard-rotate-webhook-secret',
    servedBy: 'rotate-webhook-secret',
    method: 'POST',
    paths: ['/webhook-endpoints/{id}/rotate-secret'],
    auth: 'session',
    summary: "Dashboard: rotate a webhook endpoint's secret",
    access: { write: ['webhookEndpoints'], signsWebhooks: true },
    dashboard: true,
  },
  {
    name: 'dashboard-list-events',
    servedBy: 'list-events',
    method: 'GET',
    paths: ['/events'],
    auth: 'session',
    summary: 'Dashboard: list events',
    access: { read: ['events'] },
    dashboard: true,
  },
  {
    name: 'dashboard-get-event',
    servedBy: 'get-event',
    method: 'GET',
    paths: ['/events/{id}'],
    auth: 'session',
    summary: 'Dashboard: get an event and its deliveries',
    access: { read: ['events', 'webhookDeliveries'] },
    dashboard: true,
  },
  {
    name: 'dashboard-redeliver-event',
    servedBy: 'redeliver-event',
    method: 'POST',
    paths: ['/events/{id}/redeliver'],
    auth: 'session',
    summary: 'Dashboard: redeliver an event',
    access: {
      read: ['events', 'webhookEndpoints'],
      write: ['webhookDeliveries'],
      sendsTo: ['webhookDeliveries'],
    },
    dashboard: true,
  },
  {
    name: 'create-dashboard-session',
    method: 'POST',
    paths: ['/sessions'],
    auth: 'none',
    summary: 'Sign in to the dashboard',
    access: { signsIn: true, limitsClientIp: true },
    dashboard: true,
  },
  {
    name: 'answer-dashboard-challenge',
    method: 'POST',
    paths: ['/sessions/challenge'],
    auth: 'none',
    summary: 'Answer a dashboard sign-in challenge',
    access: { signsIn: true, limitsClientIp: true },
    dashboard: true,
  },
  {
    name: 'start-totp-enrolment',
    method: 'POST',
    paths: ['/mfa/totp'],
    auth: 'session',
    summary: 'Start TOTP enrolment',
    access: { signsIn: true },
    dashboard: true,
  },
  {
    name: 'confirm-totp-enrolment',
    method: 'POST',
    paths: ['/mfa/totp/verify'],
    auth: 'session',
    summary: 'Confirm TOTP enrolment',
    access: { signsIn: true },
    dashboard: true,
  },
] as const satisfies readonly Route[];

/** The name of a route of the table. */
export type RouteName = (typeof ROUTES)[number]['name'];

type MerchantRoute = Exclude<(typeof ROUTES)[number], { dashboard: true }>;

/** The name of a route of the merchant API (not the dashboard's). */
export type MerchantRouteName = MerchantRoute['name'];

/** The routes of the merchant API (API.md §4–§8), the ones its OpenAPI document describes. */
export const MERCHANT_ROUTES: readonly MerchantRoute[] = ROUTES.filter((route): route is MerchantRoute =>
  isMerchantApi(route),
);

/** Every path a route answers on: each bare path and the same under `API_PREFIX`. */
export function servedPaths(route: Route): string[] {
  if (route.dashboard) return route.paths.map((path) => `${DASHBOARD_PREFIX}${path}`);
  return route.paths.flatMap((path) => [`${API_PREFIX}${path}`, path]);
}

/** The routes of the merchant API (API.md §4–§8), documented in its OpenAPI document. */
export function isMerchantApi(route: Route): boolean {
  return !route.dashboard;
}

/**
 * The methods served at one resource path (as `servedPaths` gives it, e.g. `/transactions/{reference}`),
 * sorted: the `Allow` of a 405 there.
 */
export function allowedMethods(resource: string): HttpMethod[] {
  const methods = ROUTES.filter((route) => servedPaths(route).includes(resource)).map((r) => r.method);
  return [...new Set<HttpMethod>(methods)].sort();
}

/** The function that answers any other method on a served path with 405 (API Gateway's `ANY`). */
export const METHOD_NOT_ALLOWED_FUNCTION = 'refuse-method';

/** The function (Lambda) that serves a route: its own, or the route's it is served by. */
export function functionOf(route: Route): string {
  return route.servedBy ?? route.name;
}

/** The handler file of a route, relative to the project root. */
export function handlerFile(route: Route): string {
  return `functions/${functionOf(route)}.ts`;
}

/** The routes one function serves: its own, and any served by it. */
export function routesServedBy(functionName: string): Route[] {
  return (ROUTES as readonly Route[]).filter((route) => functionOf(route) === functionName);
}
