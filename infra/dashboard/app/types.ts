/** The shapes the dashboard's API answers with (docs/dashboard-api.md; API.md §4, §8). */

export interface Transaction {
  reference: string;
  type: 'credit' | 'debit';
  category: string;
  amount: number;
  fee: number;
  currency: string;
  status: string;
  narration: string;
  counterparty: { account_name: string; account_number: string; bank_code: string };
  balance_after: number;
  reason: string | null;
  virtual_account_reference: string | null;
  created_at: string;
  updated_at: string;
}

export interface Overview {
  merchant_id: string;
  name: string;
  account_number: string;
  account_name: string;
  balance: number;
  currency: string;
  email: string | null;
  recent_transactions: Transaction[];
}

export interface ApiKey {
  api_key: string;
  status: 'active' | 'expired' | 'revoked';
  allowed_ips: string[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  api_secret?: string;
  rolled_key?: ApiKey;
}

export interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: string;
  created_at: string;
  secret?: string;
}

export interface Attempt {
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface MerchantEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  deliveries?: { endpoint_id: string; status: string; attempts: Attempt[] }[];
}

export interface VirtualAccount {
  reference: string;
  status: string;
  amount: number;
  amount_received: number;
  account_number: string;
  bank: { code: string; name: string };
  expires_at: string;
  paid_at: string | null;
  created_at: string;
  payments?: {
    session_id: string;
    amount: number;
    sender_name: string | null;
    sender_account_number: string | null;
    received_at: string;
  }[];
}
