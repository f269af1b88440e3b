import { config } from '#shared/config.ts';
import { ApiError, PartnerUnavailable } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';

/** Seconds a client should wait before retrying after the partner failed. */
export const PARTNER_RETRY_AFTER_SECONDS = 30;

export class AccountNotFound extends ApiError {
  constructor() {
    super('account_not_found', 'The bank reports that this account does not exist');
  }
}

export interface IssuedAccount {
  account_number: string;
  account_name: string;
  bank_code: string;
}

/**
 * One call to the banking partner's HTTP API. Timeouts, network errors and 5xx answers become
 * `PartnerUnavailable` (503 with Retry-After); the caller decides what other statuses mean.
 */
async function partnerCall(
  path: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const started = Date.now();
  try {
    const response = await fetch(new URL(path, config.partner.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(config.partner.timeoutMs),
    });
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    logger.debug('partner call', { path, status: response.status, duration_ms: Date.now() - started });
    if (response.status >= 500)
      throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `partner ${response.status}`);
    return { status: response.status, json };
  } catch (error) {
    if (error instanceof ApiError) throw error;
    logger.warn('partner unavailable', { path, duration_ms: Date.now() - started, error: String(error) });
    throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, error);
  }
}

/** Name enquiry: the holder's name of an account, as the partner bank reports it. */
export async function nameEnquiry(bankCode: string, accountNumber: string): Promise<string> {
  const { status, json } = await partnerCall('/v1/name-enquiry', {
    bank_code: bankCode,
    account_number: accountNumber,
  });
  if (status === 404) throw new AccountNotFound();
  if (status !== 200 || typeof json.account_name !== 'string') {
    throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `unexpected name enquiry answer ${status}`);
  }
  return json.account_name;
}

/** Asks the partner bank for a new account number of its own (a merchant wallet or virtual account). */
export async function issueAccount(kind: 'wallet' | 'virtual_account', name: string): Promise<IssuedAccount> {
  const { status, json } = await partnerCall('/v1/accounts', { kind, name });
  if (status !== 201 || typeof json.account_number !== 'string' || typeof json.account_name !== 'string') {
    throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `unexpected account issue answer ${status}`);
  }
  return {
    account_number: json.account_number,
    account_name: json.account_name,
    bank_code: String(json.bank_code),
  };
}

export interface TransferOrder {
  /** Our permanent reference: the partner is idempotent on it, so a resend can never pay twice. */
  reference: string;
  amount: number;
  bank_code: string;
  account_number: string;
  account_name: string;
  narration: string | null;
}

/** What the partner said about a transfer: done, refused (with a reason), or still processing. */
export type TransferOutcome =
  | { status: 'success' }
  | { status: 'failed'; reason: string }
  | { status: 'pending' };

/**
 * Sends a transfer. A timeout or 5xx throws `PartnerUnavailable`: the transfer's fate is then
 * unknown, and it stays pending until the partner's webhook settles it.
 */
export async function sendTransfer(order: TransferOrder): Promise<TransferOutcome> {
  const { status, json } = await partnerCall('/v1/transfers', order);
  if (status === 200 && json.status === 'success') return { status: 'success' };
  if (status === 202) return { status: 'pending' };
  if (status === 422 && json.status === 'failed') {
    return {
      status: 'failed',
      reason: typeof json.reason === 'string' ? json.reason : 'Rejected by the bank',
    };
  }
  throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `unexpected transfer answer ${status}`);
}
