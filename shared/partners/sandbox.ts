import { signatureProblem } from '#shared/crypto/standard-webhooks.ts';
import { callTimeout } from '#shared/deadline.ts';
import { UNREADABLE_TRANSFER_ANSWER } from '#shared/definitions/alerts.ts';
import {
  AccountNotFound,
  PartnerAnswerUnreadable,
  PartnerNotCalled,
  PartnerUnavailable,
  TransferNotSent,
} from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import {
  type BankingPartner,
  type DomainEvent,
  type IssuedAccount,
  PARTNER_RETRY_AFTER_SECONDS,
  type TransferOrder,
  type TransferOutcome,
  tooLateToSend,
  type WebhookDelivery,
} from '#shared/partners/partner.ts';
import { unusableDelivery } from '#shared/partners/payloads.ts';
import { readSandboxDelivery, type SandboxEvent } from '#shared/partners/sandbox-payloads.ts';

export interface SandboxOptions {
  baseUrl: string;
  timeoutMs: number;
  /** The `whsec_` keys its webhooks are signed with (several while rotating). */
  webhookKeys: () => Promise<Buffer[]>;
}

/** What the sandbox says when a transfer fails and does not say why. */
const DEFAULT_FAILURE = 'The receiving bank did not complete the transfer';

/**
 * The sandbox banking partner of API.md §5 (the local default): our own protocol, Standard Webhooks
 * signatures, and references we choose (`<merchant id>.<reference>`), idempotent at the partner.
 */
export function createSandboxPartner(options: SandboxOptions): BankingPartner {
  /**
   * One call to the sandbox's HTTP API. Timeouts, network errors and 5xx answers become
   * `PartnerUnavailable`; the caller decides what other statuses mean.
   */
  const call = async (
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }> => {
    const started = Date.now();
    const timeoutMs = callTimeout(options.timeoutMs);
    if (timeoutMs === undefined) {
      logger.warn('partner not called: the invocation has no time left for it', { path });
      throw new PartnerNotCalled(PARTNER_RETRY_AFTER_SECONDS, 'no time left for a partner call');
    }
    try {
      const response = await fetch(new URL(path, options.baseUrl), {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
      logger.debug('partner call', { path, status: response.status, duration_ms: Date.now() - started });
      if (response.status >= 500)
        throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `partner ${response.status}`);
      return { status: response.status, json };
    } catch (error) {
      if (error instanceof PartnerUnavailable) throw error;
      logger.warn('partner unavailable', { path, duration_ms: Date.now() - started, error: String(error) });
      throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, error);
    }
  };

  const issue = async (kind: 'wallet' | 'virtual_account', name: string): Promise<IssuedAccount> => {
    const { status, json } = await call('POST', '/v1/accounts', { kind, name });
    const { account_number: number, account_name: accountName, bank_code: bankCode } = json;
    // A NUBAN-length number at a bank with a CBN code, and a name: what a merchant is shown and pays in.
    if (
      status !== 201 ||
      typeof number !== 'string' ||
      !/^\d{10}$/.test(number) ||
      typeof accountName !== 'string' ||
      accountName.trim() === '' ||
      typeof bankCode !== 'string' ||
      !/^\d{3}$|^\d{6}$/.test(bankCode)
    ) {
      throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `unexpected account issue answer ${status}`);
    }
    return { account_number: number, account_name: accountName, bank_code: bankCode, account_ids: [number] };
  };

  /**
   * The sandbox's word on a transfer, from its answer to a send or a status query: none from an
   * answer about another transfer (`reference`) or in another currency than naira (it throws).
   */
  const outcomeOf = (json: Record<string, unknown>, reference: string): TransferOutcome | undefined => {
    const problem =
      (json.reference ?? reference) !== reference
        ? 'it names another reference'
        : (json.currency ?? 'NGN') !== 'NGN'
          ? 'its currency is not NGN'
          : undefined;
    if (problem) {
      logger.error(UNREADABLE_TRANSFER_ANSWER, { partner: 'sandbox', reference, problem });
      throw new PartnerAnswerUnreadable(
        PARTNER_RETRY_AFTER_SECONDS,
        `the sandbox's transfer answer: ${problem}`,
      );
    }
    const reason = typeof json.reason === 'string' ? json.reason : DEFAULT_FAILURE;
    if (json.status === 'success') return { status: 'success' };
    if (json.status === 'pending') return { status: 'pending' };
    if (json.status === 'failed') return { status: 'failed', reason };
    if (json.status === 'reversed') return { status: 'reversed', reason };
    return undefined;
  };

  return {
    name: 'sandbox',
    transferReference: (merchantId, reference) => `${merchantId}.${reference}`,
    // The sandbox pays every listed bank.
    checkBank: async () => undefined,

    async nameEnquiry(bankCode, accountNumber) {
      const { status, json } = await call('POST', '/v1/name-enquiry', {
        bank_code: bankCode,
        account_number: accountNumber,
      });
      if (status === 404) throw new AccountNotFound();
      // The name of this account: an answer about another names nobody.
      const about =
        (json.account_number ?? accountNumber) === accountNumber && (json.bank_code ?? bankCode) === bankCode;
      if (
        status !== 200 ||
        typeof json.account_name !== 'string' ||
        json.account_name.trim() === '' ||
        !about
      ) {
        throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `unexpected name enquiry answer ${status}`);
      }
      return json.account_name;
    },

    issueWallet: (order) => issue('wallet', order.name),
    openVirtualAccount: (order) => issue('virtual_account', order.name),

    async sendTransfer(order: TransferOrder) {
      // The sandbox answers a resend with the transfer it has, or makes it, at once: what the order
      // says of earlier hand-overs is not for it, and it has one account. Its start bound is: an
      // operator's `transfers fail` of a transfer it does not have relies on it, as with Paystack.
      const { reference, amount, bank_code, account_number, account_name, narration } = order;
      if (tooLateToSend(order)) {
        logger.warn('sandbox transfer not sent: its hand-over was counted too long ago', { reference });
        throw new TransferNotSent(PARTNER_RETRY_AFTER_SECONDS, 'the hand-over was counted too long ago');
      }
      const body = { reference, amount, bank_code, account_number, account_name, narration };
      const { status, json } = await call('POST', '/v1/transfers', body).catch((error: unknown) => {
        throw error instanceof PartnerNotCalled
          ? new TransferNotSent(PARTNER_RETRY_AFTER_SECONDS, error)
          : error;
      });
      const outcome = outcomeOf(json, reference);
      // 200 its word, 202 pending, 422 a refusal (`failed`): any other pairing is no verdict.
      const fits =
        status === 200 ||
        (status === 202 && outcome?.status === 'pending') ||
        (status === 422 && outcome?.status === 'failed');
      if (fits && outcome) return outcome;
      throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `unexpected transfer answer ${status}`);
    },

    async queryTransfer(reference) {
      const { status, json } = await call('GET', `/v1/transfers/${encodeURIComponent(reference)}`);
      if (status === 404) return undefined;
      const outcome = outcomeOf(json, reference);
      if (status === 200 && outcome) return outcome;
      throw new PartnerUnavailable(
        PARTNER_RETRY_AFTER_SECONDS,
        `unexpected transfer status answer ${status}`,
      );
    },

    async verifyDelivery({ headers, rawBody }: WebhookDelivery) {
      return signatureProblem(
        {
          id: headers['webhook-id'],
          timestamp: headers['webhook-timestamp'],
          signature: headers['webhook-signature'],
          body: rawBody,
        },
        await options.webhookKeys(),
      );
    },

    eventsOf({ headers, rawBody }: WebhookDelivery) {
      const reading = readSandboxDelivery(rawBody);
      // Its Standard Webhooks `webhook-id`: one per message, the same on every retry.
      const deliveryId = headers['webhook-id'] ?? '';
      const partnersId = deliveryId !== '';
      if (reading.kind === 'ignored') return { deliveryId, events: [], partnersId };
      if (reading.kind === 'event') return { deliveryId, events: [toDomainEvent(reading.event)], partnersId };
      const ids = { partnerEvent: reading.type, partnerId: reading.id };
      return { deliveryId, events: [unusableDelivery('sandbox', rawBody, reading.reason, ids)], partnersId };
    },
  };
}

/** A sandbox payload in the domain's words. */
function toDomainEvent(event: SandboxEvent): DomainEvent {
  if (event.type === 'payment.received') {
    const { data } = event;
    return {
      type: 'PaymentReceived',
      partner: 'sandbox',
      payment_id: data.session_id,
      account_ids: [data.account_number],
      account_number: data.account_number,
      amount: data.amount,
      sender: {
        account_name: data.sender?.account_name ?? null,
        account_number: data.sender?.account_number ?? null,
        bank_code: data.sender?.bank_code ?? null,
      },
      // Absent, they are null already (the schema's fallback); `?? null` says so to the types.
      narration: data.narration ?? null,
      paid_at: data.paid_at ?? null,
    };
  }
  const reason = event.data.reason ?? DEFAULT_FAILURE;
  return {
    type: 'TransferSettled',
    partner: 'sandbox',
    reference: event.data.reference,
    outcome:
      event.type === 'transfer.success'
        ? { status: 'success' }
        : { status: event.type === 'transfer.failed' ? 'failed' : 'reversed', reason },
  };
}
