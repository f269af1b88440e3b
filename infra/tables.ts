/**
 * Table definitions: keys, indexes and TTL attribute of every DynamoDB table. The CDK stack and the
 * local bootstrap both create tables from this list. Physical name = TABLE_PREFIX + `name`.
 */

export type AttributeType = 'S' | 'N';

export interface KeySchema {
  readonly partitionKey: { readonly name: string; readonly type: AttributeType };
  readonly sortKey?: { readonly name: string; readonly type: AttributeType };
}

export interface TableDefinition extends KeySchema {
  readonly name: string;
  readonly indexes?: readonly (KeySchema & { readonly name: string })[];
  readonly ttlAttribute?: string;
  /** Holds money or the records money depends on: retained and deletion-protected in prod. */
  readonly money: boolean;
}

export const TABLES = {
  /** A merchant and its wallet: the balance item the ledger updates. */
  merchants: {
    name: 'merchants',
    partitionKey: { name: 'merchant_id', type: 'S' },
    money: true,
  },
} as const satisfies Record<string, TableDefinition>;

export type TableName = keyof typeof TABLES;

export const TABLE_LIST: readonly TableDefinition[] = Object.values(TABLES);
