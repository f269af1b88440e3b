/**
 * The banking partner port: what the service needs from a bank, in its own words. Each partner
 * (the sandbox, Paystack, ...) has one adapter implementing it; an adapter is the only code that
 * knows that partner's URLs, payloads, status words, signature scheme and ids. Everything behind
 * the queue (the consumer, the ledger, the stores) sees only the domain events defined here.
 */

/** The partners a deployment can be configured with (`PARTNER`). */
export const PARTNER_NAMES = ['sandbox', 'paystack'] as const;
export type PartnerName = (typeof PARTNER_NAMES)[number];

/**
 * How long after a transfer's last hand-over the partner's word that it has no transfer under the
 * reference is taken as final for the sends before (`TransferOrder.lastHandOverAt`): far beyond the
 * minute within which a send must start (`SEND_START_WITHIN_MS`), its partner timeout, and any lag
 * of the partner's own records (an assumption: Paystack does not publish how soon verify shows a
 * transfer it took).
 */
export const EARLIER_SENDS_OVER_MS = 15 * 60_000;

/** How long after its count a hand-over's request may still be started (`TransferOrder.countedAt`). */
export const SEND_START_WITHIN_MS = 60_000;

/**
 * Whether it is too late to start the request carrying this hand-over (`SEND_START_WITHIN_MS` past
 * its count): stalled since (a slow read, no function's time to end it), it is not sent at all.
 */
export function tooLateToSend(order: Pick<TransferOrder, 'countedAt'>, now = Date.now()): boolean {
  return now - order.countedAt > SEND_START_WITHIN_MS;
}

/** Seconds a client should wait before retrying after the partner failed (503 `Retry-After`). */
export const PARTNER_RETRY_AFTER_SECONDS = 30;

/** An account number the partner issued to the service (a merchant wallet or a virtual account). */
export interface IssuedAccount {
  account_number: string;
  account_name: string;
  /** Our (CBN) code of the bank that holds the account. */
  bank_code: string;
  /**
   * The partner's own stable ids of this account, as its payment events will name it: the account
   * number where the partner never reuses numbers, a charge reference or customer code where it
   * does. Each is claimed for the owner, so one id never belongs to two owners.
   */
  account_ids: string[];
  /**
   * Ids that name this account but may name others too (a customer's email): not claimed, every
   * account that carries one is found again (`ownersOfAlias`). Used to match events that carry
   * nothing better.
   */
  alias_ids?: string[];
  /** When the partner closes the account, if it does (Paystack's Pay with Transfer). */
  expires_at?: string;
}

export interface WalletOrder {
  merchant_id: string;
  /** The merchant's name, as the account name should read. */
  name: string;
  /** The merchant's contact email, where the partner needs one (operator-given or synthetic). */
  email?: string;
  /**
   * The merchant's contact phone (operator-given), for a partner that asks for it: Paystack's
   * documentation wants a dedicated account's customer to have one.
   */
  phone?: string;
}

export interface VirtualAccountOrder {
  merchant_id: string;
  /** The merchant's reference of the virtual account. */
  reference: string;
  /** The name the account should carry (the customer's, else the merchant's). */
  name: string;
  amount: number;
  expires_at: string;
  customer?: { name: string; email: string };
}

export interface TransferOrder {
  /** Our permanent reference of the transfer at the partner: a resend can never pay twice. */
  reference: string;
  amount: number;
  bank_code: string;
  account_number: string;
  account_name: string;
  narration: string | null;
  /**
   * Handed over before, by a send that may have reached the partner (not one marked as never
   * sent, `TransferNotSent`): an earlier send's answer may have been lost
   * while the partner was still making the transfer, so a refusal of this one is not final while
   * the partner does not show the transfer: it stays pending for the requery, never a refund that
   * the earlier send could still turn into a double payment. Until `lastHandOverAt` is
   * `EARLIER_SENDS_OVER_MS` old.
   */
  resend?: boolean;
  /**
   * For a resend: epoch ms when the last hand-over before it was counted. Every earlier send began
   * by then, and ended within its function's time; once this is `EARLIER_SENDS_OVER_MS` old, a
   * partner that shows no transfer under the reference has made none, and a refusal of the resend
   * is final, as a first send's is (a transfer the partner keeps refusing is failed and refunded,
   * not held for an operator).
   */
  lastHandOverAt?: number;
  /**
   * Epoch ms when this hand-over was counted. The request carrying the transfer is not started
   * more than `SEND_START_WITHIN_MS` after it (`TransferNotSent` instead): every send that may reach
   * the partner begins within a minute of its count, which `EARLIER_SENDS_OVER_MS` relies on, also
   * where no function's time bounds the send (the local runtime, a stalled read before it).
   */
  countedAt: number;
  /**
   * The partner account the hand-over was counted under (`accountTag`): the adapter sends it
   * through exactly that account, with one key for all its calls, or throws `TransferNotSent`.
   */
  account?: string;
}

/**
 * What the partner says about a transfer; with the amount (kobo) it says the transfer is for, where
 * it says so: a verdict for another amount settles nothing (`settleTransfer`).
 */
export type TransferOutcome =
  | { status: 'success'; amount?: number }
  | { status: 'failed'; reason: string; amount?: number }
  | { status: 'reversed'; reason: string; amount?: number }
  | { status: 'pending' };

/** A webhook delivery exactly as it arrived. */
export interface WebhookDelivery {
  /** Header names lower-cased. */
  headers: Record<string, string | undefined>;
  /** The body exactly as sent (signatures are over these bytes). */
  rawBody: string;
  /** The connection's address (never X-Forwarded-For). */
  sourceIp: string | undefined;
}

/** A customer's payment into an account the service was issued. */
export interface PaymentReceived {
  type: 'PaymentReceived';
  partner: PartnerName;
  /**
   * The partner's permanent id of this payment: the ledger entry id derives from it. Never one
   * beginning `transfer:` or `rejected:`: a kept payment shares its key space with kept verdicts and
   * refused attempts (`unmatchedKey`), so the adapter refuses such an id as it reads the delivery
   * (the sandbox's `VERDICT_ID`; Paystack's ids are numbers).
   */
  payment_id: string;
  /** The receiving account's partner ids (see `IssuedAccount.account_ids`), best match first. */
  account_ids: string[];
  /** The receiving account number, for people and logs. */
  account_number: string | null;
  amount: number;
  sender: { account_name: string | null; account_number: string | null; bank_code: string | null };
  narration: string | null;
  /** When the partner says the customer paid (ISO 8601), if it says so. */
  paid_at: string | null;
}

/** A payment the partner refused and returned to the payer (e.g. a wrong amount): nothing to credit. */
export interface PaymentRejected {
  type: 'PaymentRejected';
  partner: PartnerName;
  /** The partner's permanent id of this attempt. */
  attempt_id: string;
  /** The refused account's partner ids, when the partner names them (see `PaymentReceived`). */
  account_ids: string[];
  /**
   * Ids that name the account without being its own (`IssuedAccount.alias_ids`: the customer's
   * email): matched among the accounts that carried one when the payment may have been refused
   * (`receiveRejectedPayment`).
   */
  alias_ids?: string[];
  amount: number;
  reason: string;
  /** When the partner refused it (ISO 8601), if it says so. */
  rejected_at: string | null;
}

/** The partner's final word on one of our transfers (success, failed, or returned after success). */
export interface TransferSettled {
  type: 'TransferSettled';
  partner: PartnerName;
  /** Our reference at the partner (`TransferOrder.reference`). */
  reference: string;
  outcome: Exclude<TransferOutcome, { status: 'pending' }>;
}

/**
 * A signed delivery the service cannot act on: a payment whose amount or receiving account cannot
 * be read, a verdict without a reference, a body with a key given twice, JSON that is not an event.
 * Never credited and never dropped: kept for operators with the reason (API.md §11).
 */
export interface DeliveryUnusable {
  type: 'DeliveryUnusable';
  partner: PartnerName;
  /** The partner's word for the event (`payment.received`, `charge.success`), if it gave one. */
  partner_event: string | null;
  /**
   * The partner's id of what the delivery is about, where it could be read (a payment id, or
   * `transfer:<reference>`, `rejected:<attempt id>`): operators find it kept under that id.
   */
  partner_id: string | null;
  reason: string;
  /** The body as delivered, cut to its first 64 KiB; with the whole body's size and SHA-256. */
  body: string;
  body_bytes: number;
  body_sha256: string;
}

export type DomainEvent = PaymentReceived | PaymentRejected | TransferSettled | DeliveryUnusable;

/**
 * A domain event as queued: with the delivery that carried it, when that arrived, and the
 * `X-Request-Id` of the webhook request that queued it (absent on messages queued before it was
 * carried), so the consumer's log lines lead back to that request.
 */
export type QueuedEvent = DomainEvent & {
  delivery_id: string;
  /**
   * The partner's own id of the delivery that carried this event alone (`partnersId`), qualified by
   * the partner: a payment credited takes it for good, so no other payment is credited under it.
   */
  delivery_claim?: string;
  received_at: string;
  webhook_request_id?: string;
};

/**
 * What the service asks of a banking partner. Every method that calls the partner throws
 * `PartnerUnavailable` when it fails or times out (5xx, network); other answers are mapped to the
 * domain's words or errors (`AccountNotFound`, `BankNotSupported`).
 */
export interface BankingPartner {
  readonly name: PartnerName;
  /**
   * Our permanent reference of a merchant's transfer at this partner, in the partner's alphabet:
   * deterministic, so a resend carries the same reference and can never pay twice.
   */
  transferReference(merchantId: string, reference: string): string;
  /**
   * Which of the partner's accounts this deployment sends through, where the partner keeps
   * references per account (Paystack: a tag of the secret key, as test and live keys, or two
   * businesses' keys, see different transfers). Recorded at a transfer's first hand-over: a transfer
   * handed over under another tag is never sent through this one, as verify here cannot see it and
   * a resend could pay it twice. Absent where one deployment has one account (the sandbox).
   */
  accountTag?(): Promise<string>;
  /** Throws `BankNotSupported` if the partner cannot pay accounts at this bank (our CBN code). */
  checkBank(bankCode: string): Promise<void>;
  /** The holder's name of an account, as the bank reports it; `AccountNotFound` if none. */
  nameEnquiry(bankCode: string, accountNumber: string): Promise<string>;
  /** A permanent account number for a merchant's wallet. */
  issueWallet(order: WalletOrder): Promise<IssuedAccount>;
  /** A temporary account number for one expected payment. */
  openVirtualAccount(order: VirtualAccountOrder): Promise<IssuedAccount>;
  /**
   * The least amount (kobo) the partner opens a virtual account for, where it is above the API's
   * own: a smaller one is the caller's 400, never a call the partner refuses.
   */
  readonly virtualAccountMinimum?: number;
  /**
   * Sends a transfer under our permanent reference. `pending` when the partner has it but has not
   * finished; `failed` when it refused it outright. A resend of the same reference never pays twice.
   * Throws `TransferNotSent` when no request carrying the transfer was made.
   */
  sendTransfer(order: TransferOrder): Promise<TransferOutcome>;
  /** Asks about a transfer sent before; undefined when the partner does not know the reference. */
  queryTransfer(reference: string): Promise<TransferOutcome | undefined>;
  /** Why a webhook delivery is not authentic, or undefined when it is. No partner call. */
  verifyDelivery(delivery: WebhookDelivery): Promise<string | undefined>;
  /**
   * The domain events an authentic delivery carries (none for events the service ignores), and the
   * delivery's id for logs and dedupe. A cosmetic field never stops a payment; a delivery whose
   * money fields cannot be read, or with a key given twice, is one `DeliveryUnusable`. Throws
   * `ValidationError` only when the body is not JSON. `partnersId`: the id is the partner's own for
   * this delivery, the same on every retry (a Standard Webhooks `webhook-id`), so a second delivery
   * under it is a redelivery whatever its body says (API.md §4); otherwise it is derived from the body.
   */
  eventsOf(delivery: WebhookDelivery): { deliveryId: string; events: DomainEvent[]; partnersId?: boolean };
}

/**
 * A payment id, as a NIP session id's digits or Paystack's ids are: it becomes the merchant's
 * transaction reference `payment:<id>`, listed, shown in the dashboard and the CLIs, and fetched as
 * `GET /transactions/payment:<id>` (references of at most 100 characters): no control or bidi
 * character to garble them, no `/`, `?` or `#` to break the path. A delivery whose id is not one is
 * kept for operators, never credited under a mangled id.
 */
export const PAYMENT_ID = /^[A-Za-z0-9_.=-]+$/;
export const PAYMENT_ID_MAX = 92;
export const PAYMENT_ID_RULE = 'Must be letters, digits, _ . = or - (a NIP session id is 30 digits)';
