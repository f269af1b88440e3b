import type { Access, RouteAuth } from '#shared/definitions/routes.ts';
import type { TableName } from '#shared/definitions/tables.ts';
import type { SecretName } from '#shared/secrets.ts';

/**
 * The DynamoDB actions the code calls (`shared/`, `functions/`), and no others: the infra tests
 * check that every command the sources send is in these lists, so a new kind of call (a delete, a
 * scan, a batch) fails there until it is granted here on purpose.
 */
export const ITEM_READ_ACTIONS = ['dynamodb:GetItem'] as const;
export const READ_ACTIONS = [...ITEM_READ_ACTIONS, 'dynamodb:Query'] as const;
export const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem'] as const;
/** Reading several items by key in one call: granted per table, only where the code does it. */
export const BATCH_READ_ACTIONS = ['dynamodb:BatchGetItem'] as const;
/** Counting a request against its client IP's limit (API.md §11): one update, one query. */
export const CLIENT_IP_LIMIT_ACTIONS = ['dynamodb:UpdateItem', 'dynamodb:Query'] as const;

export type TableGrants = ReadonlyMap<TableName, readonly string[]>;

/**
 * Every table a function with `access` may touch, and the DynamoDB actions it may call on it (its
 * indexes included): exactly what the stack grants its role on AWS, and what the local runtime
 * allows it (`infra/local/table-grants.ts`), so a missing grant fails locally too.
 * - `read`: GetItem and Query, never Scan, nor BatchGetItem unless asked;
 * - `write`: reads, plus PutItem and UpdateItem (also what a transaction's Put and Update items
 *   need); never DeleteItem or BatchWriteItem: no function deletes an item (an immutable ledger
 *   entry least of all);
 * - `batchRead`: BatchGetItem;
 * - `limitsClientIp`: the per-IP count's update and query.
 */
export function tableGrants(access: Access): TableGrants {
  const grants = new Map<TableName, Set<string>>();
  const allow = (table: TableName, actions: readonly string[]) => {
    const granted = grants.get(table) ?? new Set<string>();
    for (const action of actions) granted.add(action);
    grants.set(table, granted);
  };
  if (access.limitsClientIp) allow('clientIpLimits', CLIENT_IP_LIMIT_ACTIONS);
  for (const table of access.read ?? []) allow(table, READ_ACTIONS);
  for (const table of access.write ?? []) allow(table, [...READ_ACTIONS, ...WRITE_ACTIONS]);
  for (const table of access.batchRead ?? []) allow(table, BATCH_READ_ACTIONS);
  return new Map([...grants].map(([table, actions]) => [table, [...actions]]));
}

/**
 * The API key authorizer's tables (DESIGN.md "Who is calling"): it alone reads the key table, by
 * key, and records a key's last use; and it counts failed attempts per client IP.
 */
export const AUTHORIZER_TABLE_GRANTS: TableGrants = new Map<TableName, readonly string[]>([
  ['apiKeys', ['dynamodb:GetItem', 'dynamodb:UpdateItem']],
  ['clientIpLimits', CLIENT_IP_LIMIT_ACTIONS],
]);

/**
 * The secrets a function with `access` may read (`auth` of its route: the partner webhook reads the
 * partner's signing keys): what the stack grants its role (Paystack's key where the stage has
 * one) and what the local runtime lets it read.
 */
export function secretGrants(access: Access, auth?: RouteAuth): SecretName[] {
  const secrets: SecretName[] = [];
  if (access.issuesSecrets) secrets.push('apiKeyPepper');
  if (access.callsPartner) secrets.push('paystackSecretKey');
  if (access.signsWebhooks) secrets.push('merchantWebhookKey');
  if (auth === 'webhook') secrets.push('partnerWebhookKeys');
  return secrets;
}

/** The authorizer's one secret: the pepper of the secrets it verifies. */
export const AUTHORIZER_SECRET_GRANTS: readonly SecretName[] = ['apiKeyPepper'];
