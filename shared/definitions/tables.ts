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
  /** A DynamoDB stream of new items (what the table's stream consumer reads). */
  readonly stream?: 'NEW_IMAGE';
  /** Holds money or the records money depends on: retained and deletion-protected in prod. */
  readonly money: boolean;
}

/** The prefix of every local table and queue name unless `TABLE_PREFIX` says otherwise. */
export const DEFAULT_TABLE_PREFIX = 'naira-local-';

export const TABLES = {
  /** A merchant and its wallet: the balance item the ledger updates. */
  merchants: {
    name: 'merchants',
    partitionKey: { name: 'merchant_id', type: 'S' },
    money: true,
  },
  /**
   * Immutable ledger entries, keyed by the permanent business id they apply (`transfer:…`,
   * `reversal:…`, `payment:…`), so an id can be applied once only. `seq` numbers a merchant's entries.
   */
  ledgerEntries: {
    name: 'ledger-entries',
    partitionKey: { name: 'entry_id', type: 'S' },
    indexes: [
      {
        name: 'by-merchant',
        partitionKey: { name: 'merchant_id', type: 'S' },
        sortKey: { name: 'seq', type: 'N' },
      },
    ],
    money: true,
  },
  /**
   * Transactions as the API shows them (status changes), one per merchant and reference. A pending
   * transfer carries `pending_partner` (removed when it settles): the sparse index the requery reads.
   */
  transactions: {
    name: 'transactions',
    partitionKey: { name: 'merchant_id', type: 'S' },
    sortKey: { name: 'reference', type: 'S' },
    indexes: [
      {
        name: 'by-created',
        partitionKey: { name: 'merchant_id', type: 'S' },
        sortKey: { name: 'created_at', type: 'S' },
      },
      {
        name: 'pending-transfers',
        partitionKey: { name: 'pending_partner', type: 'S' },
        sortKey: { name: 'created_at', type: 'S' },
      },
    ],
    money: true,
  },
  /** Which merchant's transfer a partner's transfer reference is (`<partner>:<reference>`). */
  transferReferences: {
    name: 'transfer-references',
    partitionKey: { name: 'partner_reference', type: 'S' },
    money: true,
  },
  /** A merchant's beneficiaries (`ben#<id>`, time-ordered ids) and one guard per bank account. */
  beneficiaries: {
    name: 'beneficiaries',
    partitionKey: { name: 'merchant_id', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    money: false,
  },
  /** Temporary virtual accounts, one per merchant and reference; totals move with each payment. */
  virtualAccounts: {
    name: 'virtual-accounts',
    partitionKey: { name: 'merchant_id', type: 'S' },
    sortKey: { name: 'reference', type: 'S' },
    indexes: [
      {
        name: 'by-created',
        partitionKey: { name: 'merchant_id', type: 'S' },
        sortKey: { name: 'created_at', type: 'S' },
      },
    ],
    money: true,
  },
  /**
   * Events for merchants (API.md §8), one per state change, written in the change's own transaction
   * (an outbox): `evt_` ids sort by time. Kept 30 days. Its stream drives the fan-out to endpoints.
   */
  events: {
    name: 'events',
    partitionKey: { name: 'merchant_id', type: 'S' },
    sortKey: { name: 'event_id', type: 'S' },
    ttlAttribute: 'ttl',
    stream: 'NEW_IMAGE',
    money: false,
  },
  /**
   * Merchants' webhook endpoints (`we_…`); secrets are derived, never stored. Beside them, each
   * merchant's count of enabled endpoints, and what each request sent with an `Idempotency-Key`
   * answered (kept 24 hours).
   */
  webhookEndpoints: {
    name: 'webhook-endpoints',
    partitionKey: { name: 'merchant_id', type: 'S' },
    sortKey: { name: 'endpoint_id', type: 'S' },
    ttlAttribute: 'ttl',
    money: false,
  },
  /** Deliveries of an event (`<merchant_id>#<event_id>`) to endpoints, with every attempt. */
  webhookDeliveries: {
    name: 'webhook-deliveries',
    partitionKey: { name: 'event_key', type: 'S' },
    sortKey: { name: 'delivery_id', type: 'S' },
    ttlAttribute: 'ttl',
    money: false,
  },
  /**
   * What arrived for a virtual account (`<merchant_id>#<reference>`): its payments (`payment#<id>`,
   * one per partner payment id) and the attempts the partner refused (`rejected#<id>`); and where
   * each refused attempt named only by a customer's email went (`refused:<partner>:<attempt id>`).
   */
  payments: {
    name: 'payments',
    partitionKey: { name: 'virtual_account', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    money: true,
  },
  /**
   * Payments and refused attempts nobody could be (or may be) credited for, kept for operators:
   * by the partner's id (`<partner>:<id>`) and a fingerprint of what the delivery said, so two
   * different payments that share a partner id are both kept, and a redelivery is kept once.
   */
  unmatchedPayments: {
    name: 'unmatched-payments',
    partitionKey: { name: 'payment_key', type: 'S' },
    sortKey: { name: 'variant', type: 'S' },
    money: true,
  },
  /**
   * Who owns each account id a partner issued (`<partner>:<account id>`: a wallet or a virtual
   * account): claimed once, so no id is ever used twice. An id that is not exclusive (a customer's
   * email, which several virtual accounts may carry) has one alias item per account that carries it
   * (`alias: true`, `alias_key` the id): the sparse index finds the accounts of an alias that were
   * open at a given time.
   */
  accountOwners: {
    name: 'account-owners',
    partitionKey: { name: 'account_key', type: 'S' },
    indexes: [
      {
        name: 'by-alias',
        partitionKey: { name: 'alias_key', type: 'S' },
        sortKey: { name: 'expires_at', type: 'S' },
      },
    ],
    money: true,
  },
  /** What an adapter remembers of its partner (e.g. Paystack recipient codes per bank account). */
  partnerMemos: {
    name: 'partner-memos',
    partitionKey: { name: 'memo_key', type: 'S' },
    money: false,
  },
  /** API keys: only an HMAC of the secret is stored. */
  apiKeys: {
    name: 'api-keys',
    partitionKey: { name: 'api_key', type: 'S' },
    indexes: [
      {
        name: 'by-merchant',
        partitionKey: { name: 'merchant_id', type: 'S' },
        sortKey: { name: 'created_at', type: 'S' },
      },
    ],
    money: false,
  },
  /**
   * Requests counted against each API's per-client-IP limit (API.md §2, §11), which failed
   * authentication attempts and requests without a key share: one item per client and second, the
   * rolling 60 seconds being the sum of the last 60. Items expire two minutes after their second.
   */
  clientIpLimits: {
    name: 'client-ip-limits',
    partitionKey: { name: 'client_key', type: 'S' },
    sortKey: { name: 'second', type: 'N' },
    ttlAttribute: 'ttl',
    money: false,
  },
  /** Account validation sessions (`session_id`), bound to a merchant, 30 minutes. */
  accountSessions: {
    name: 'account-sessions',
    partitionKey: { name: 'session_id', type: 'S' },
    ttlAttribute: 'ttl',
    money: false,
  },
  /** Name enquiry results per bank account, so repeated lookups cost no partner call. */
  nameEnquiries: {
    name: 'name-enquiries',
    partitionKey: { name: 'account_key', type: 'S' },
    ttlAttribute: 'ttl',
    money: false,
  },
} as const satisfies Record<string, TableDefinition>;

export type TableName = keyof typeof TABLES;

export const TABLE_LIST: readonly TableDefinition[] = Object.values(TABLES);
