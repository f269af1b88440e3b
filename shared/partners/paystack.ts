import { AsyncLocalStorage } from 'node:async_hooks';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { BANKS, type BankRecord } from '#shared/banks/data.ts';
import { findBank } from '#shared/banks/index.ts';
import { sha256Hex } from '#shared/crypto/digest.ts';
import {
  ANSWER_RESERVE_MS,
  CONFIRM_GRACE_MS,
  callTimeout,
  partnerTimeLeft,
  withInvocationDeadline,
} from '#shared/deadline.ts';
import { RECIPIENT_NOT_CONFIRMED, UNREADABLE_TRANSFER_ANSWER } from '#shared/definitions/alerts.ts';
import {
  AccountNotFound,
  BankNotSupported,
  PartnerAnswerUnreadable,
  PartnerNotCalled,
  PartnerUnavailable,
  TransferNotSent,
  UnknownBank,
} from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import type { PartnerMemo } from '#shared/partners/memo.ts';
import {
  type BankingPartner,
  type DomainEvent,
  EARLIER_SENDS_OVER_MS,
  type IssuedAccount,
  PARTNER_RETRY_AFTER_SECONDS,
  PAYMENT_ID,
  PAYMENT_ID_MAX,
  type PaymentRejected,
  type TransferOrder,
  type TransferOutcome,
  type TransferSettled,
  tooLateToSend,
  type WebhookDelivery,
} from '#shared/partners/partner.ts';

import {
  bankCodeOrNull,
  isoOrNull,
  type Json,
  personText,
  readDeliveryJson,
  record,
  text,
  unusableDelivery,
} from '#shared/partners/payloads.ts';
import { cutText } from '#shared/text.ts';
import { within } from '#shared/time-limit.ts';

export type { PartnerMemo } from '#shared/partners/memo.ts';

/** How the Paystack adapter is wired (API.md §9); the registry fills it from `PAYSTACK_*`. */
export interface PaystackOptions {
  /** Without a trailing slash needed; the default `https://api.paystack.co` is applied by the caller. */
  baseUrl: string;
  /** Secrets Manager on AWS, the environment locally. Never logged. */
  secretKey: () => Promise<string>;
  timeoutMs: number;
  /** Addresses Paystack's webhooks come from; empty: the source address is not checked. */
  webhookIps: readonly string[];
  /** The domain of the synthetic emails Paystack's charges and customers require. */
  emailDomain: string;
  /** `preferred_bank` slug of merchants' dedicated virtual accounts, e.g. `wema-bank`. */
  dvaBank: string;
  /** Durable store of recipient codes, so one bank account gets one Paystack recipient. */
  memo: PartnerMemo;
  now?: () => number;
}

/** A Paystack answer: its HTTP status and its JSON body (`{}` when it sent none). */
interface Answer {
  status: number;
  body: Json;
}

/** A bank of Paystack's `GET /bank` list, as the adapter needs it. */
interface PaystackBank {
  id: number | undefined;
  name: string;
  slug: string;
  code: string;
  nip: string | undefined;
  supportsTransfer: boolean;
}

/** Paystack's bank list with our banks matched to it, refreshed at most hourly. */
interface BankDirectory {
  fetchedAt: number;
  banks: PaystackBank[];
  /** Our CBN code → Paystack's bank. */
  forward: Map<string, PaystackBank>;
  /** Paystack's bank → our CBN code (the first of ours that matched it). */
  reverse: Map<PaystackBank, string>;
}

const BANK_LIST_MAX_AGE_MS = 60 * 60 * 1000;
/** After a failed refresh the stale list is used, and the refresh is tried again this much later. */
const BANK_LIST_RETRY_MS = 5 * 60 * 1000;
/** A cursor loop guard: Paystack lists about 200 Nigerian banks. */
const BANK_LIST_MAX_PAGES = 20;
/** A bank list load's time, in partner calls at the partner timeout (NGN's list is 2-3 pages). */
const BANK_LIST_LOAD_CALLS = 3;
const BANK_LIST_PAGE_SIZE = 100;
/** The reference of a Pay with Transfer charge the service makes: `va-` and 12 random bytes in hex. */
const CHARGE_REFERENCE_BYTES = 12;
const CHARGE_REFERENCE = new RegExp(`^va-[0-9a-f]{${CHARGE_REFERENCE_BYTES * 2}}$`);

/** What a failed or reversed transfer says when Paystack does not say why (API.md §9). */
const DEFAULT_FAILURE = 'The receiving bank did not complete the transfer';
/** The reason of a transfer whose recipient Paystack answered for another account (or none shown). */
const RECIPIENT_NOT_SHOWN = 'The banking partner could not confirm the recipient account';
const DEFAULT_REJECTION = 'Paystack refused the payment and returned it to the payer';
const NAME_MAX = 200;
const NARRATION_MAX = 500;

const SUCCESS_WORDS = new Set(['success']);
const FAILED_WORDS = new Set(['failed', 'abandoned', 'rejected', 'blocked']);
const REVERSED_WORDS = new Set(['reversed']);
const PENDING_WORDS = new Set(['pending', 'received', 'queued', 'otp']);

/**
 * The Paystack banking partner of API.md §9: transfers from the Paystack balance, Pay with Transfer
 * charges as virtual accounts, dedicated virtual accounts as merchant wallets, and Paystack's
 * HMAC-SHA512 signed webhooks turned into domain events.
 */
export function createPaystackPartner(options: PaystackOptions): BankingPartner {
  const now = options.now ?? Date.now;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  /**
   * The key one transfer's send uses for all its calls (`sendTransfer`): a key rotated in Secrets
   * Manager meanwhile must not split a send between two Paystack accounts.
   */
  const pinnedKey = new AsyncLocalStorage<string>();

  /**
   * The secret key; one that cannot be read (Secrets Manager throttled) is Paystack unavailable. Its
   * read (Secrets Manager on AWS, once per container every five minutes) is part of the invocation's
   * partner time like any call, bounded by what is left of it (`callTimeout`): with none
   * left, only a key at hand (the environment, the container's cache) is used, never waited for.
   */
  const secretKey = async (): Promise<string> => {
    const pinned = pinnedKey.getStore();
    if (pinned !== undefined) return pinned;
    // With no time left (0 ms), a key already read still wins the race.
    const timeoutMs = callTimeout(options.timeoutMs) ?? 0;
    try {
      return await within(options.secretKey(), timeoutMs, () => new Error(`not read within ${timeoutMs} ms`));
    } catch (error) {
      logger.warn('paystack secret key unavailable', { error: String(error) });
      throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, error);
    }
  };

  /**
   * A tag of the secret key (12 hex characters of its SHA-256, nothing a key can be found from):
   * Paystack keeps transfers and recipients per integration and per mode, so what one key made,
   * another may not see.
   */
  const tagOf = (key: string) => sha256Hex(key).slice(0, 12);
  const keyTag = async () => tagOf(await secretKey());

  /**
   * One call to Paystack. Timeouts, network errors, 5xx answers and 429 (Paystack's rate limit: try
   * again later, never a refusal of the request itself) become `PartnerUnavailable`; the caller
   * decides what the other statuses mean.
   */
  const call = async (
    method: 'GET' | 'POST',
    path: string,
    body?: Json,
    { graceMs = 0 } = {},
  ): Promise<Answer> => {
    // Query strings carry account numbers: logs get the path only.
    const logPath = path.split('?')[0];
    let status: number;
    let raw: string;
    const key = await secretKey();
    const timeoutMs = callTimeout(options.timeoutMs, { graceMs });
    if (timeoutMs === undefined) {
      logger.warn('paystack not called: the invocation has no time left for it', { method, path: logPath });
      throw new PartnerNotCalled(PARTNER_RETRY_AFTER_SECONDS, 'no time left for a partner call');
    }
    const started = now();
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = response.status;
      raw = await response.text();
    } catch (error) {
      logger.warn('paystack unavailable', {
        method,
        path: logPath,
        duration_ms: now() - started,
        error: String(error),
      });
      throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, error);
    }
    logger.debug('paystack call', { method, path: logPath, status, duration_ms: now() - started });
    if (status >= 500 || status === 429) {
      logger.warn('paystack unavailable', { method, path: logPath, status });
      throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `paystack ${status} on ${method} ${logPath}`);
    }
    return { status, body: parseObject(raw) ?? {} };
  };

  /** An answer the adapter cannot use: logged with Paystack's message, then `PartnerUnavailable`. */
  const unexpected = (what: string, answer: Answer): PartnerUnavailable => {
    logger.error('unexpected paystack answer', {
      what,
      status: answer.status,
      paystack_message: messageOf(answer.body),
    });
    return new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, `unexpected ${what} answer ${answer.status}`);
  };

  const banks = createBankDirectory(call, unexpected, now, {
    timeoutMs: options.timeoutMs,
    // The list serves every request that asks while it loads: its log lines are not the starter's.
    // (A transfer's send loads it with the send's pinned key: its codes must be that account's.)
    detached: (work) => logger.withOwnKeys({ task: 'paystack bank list' }, work),
  });

  /** Paystack's bank for one of ours; `BankNotSupported` when Paystack cannot pay it. */
  const paystackBankFor = async (bankCode: string): Promise<PaystackBank> => {
    if (!findBank(bankCode)) throw new UnknownBank();
    const bank = (await banks.get()).forward.get(bankCode);
    if (!bank?.supportsTransfer) throw new BankNotSupported();
    return bank;
  };

  /** Our CBN code of the bank Paystack issued an account at, from the bank object of its answer. */
  const ourBankCodeOf = async (bank: unknown): Promise<string> => {
    const code = mapIssuingBank(await banks.get(), record(bank));
    if (!code) {
      const named = record(bank);
      logger.error('paystack issued an account at a bank missing from our list', {
        slug: named?.slug,
        name: named?.name,
      });
      throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, 'issuing bank not in our bank list');
    }
    return code;
  };

  /**
   * `GET /transfer/verify`; `confirming`: it confirms a refusal Paystack just gave, and may use part
   * of the invocation's reserve (`CONFIRM_GRACE_MS`).
   */
  const queryTransfer = async (
    reference: string,
    { confirming = false } = {},
  ): Promise<TransferOutcome | undefined> => {
    const answer = await call('GET', `/transfer/verify/${encodeURIComponent(reference)}`, undefined, {
      graceMs: confirming ? CONFIRM_GRACE_MS : 0,
    });
    if (answer.status === 404) return undefined;
    const data = record(answer.body.data);
    if (answer.status !== 200 || !data) throw unexpected('transfer verify', answer);
    return transferOutcome(checkedTransfer(data, reference, 'transfer verify', answer), reference);
  };

  /**
   * A transfer Paystack answered about (verify, or `POST /transfer`), if it is this transfer and its
   * money reads exactly: the reference it names is ours, its amount and currency are readable naira
   * where given, and the answer does not say it failed (`"status": false`). Anything else is no
   * verdict (`unexpected`: the transfer stays as it is, asked again later), never settled unchecked.
   */
  const checkedTransfer = (data: Json, reference: string, what: string, answer: Answer): Json => {
    const named = data.reference ?? null;
    const problem =
      answer.body.status === false
        ? 'it says it failed ("status": false)'
        : named !== null && exact(named, 100) !== reference
          ? 'it names another reference'
          : transferMoneyProblem(data);
    if (!problem) return data;
    logger.error(UNREADABLE_TRANSFER_ANSWER, { partner: 'paystack', what, reference, problem });
    throw new PartnerAnswerUnreadable(PARTNER_RETRY_AFTER_SECONDS, `paystack's ${what} answer: ${problem}`);
  };

  /**
   * The recipient code of a bank account: reused across merchants, created once per Paystack
   * integration. The memo key carries a tag of the secret key, because a code made with one key
   * (`sk_test_…`, or another Paystack account) is unknown to another. The memo is an optimisation
   * only (Paystack answers a repeated account with its existing recipient), so a memo failure never
   * stops a transfer. `remembered` says whether the code came from the memo.
   */
  const recipientFor = async (
    bank: PaystackBank,
    order: TransferOrder,
    { fresh = false } = {},
  ): Promise<Answer | { code: string; remembered: boolean } | { notShown: Answer }> => {
    // v2: codes kept since the answer's account and bank are checked (older ones never were).
    const key = `recipient:v2:${await keyTag()}:${bank.code}:${order.account_number}`;
    const known = fresh
      ? undefined
      : await options.memo.get(key).catch((error: unknown) => {
          logger.warn('partner memo read failed', { error: String(error) });
          return undefined;
        });
    if (known) return { code: known, remembered: true };
    const answer = await call('POST', '/transferrecipient', {
      type: 'nuban',
      name: order.account_name,
      account_number: order.account_number,
      bank_code: bank.code,
      currency: 'NGN',
    });
    const data = record(answer.body.data);
    const code = text(data?.recipient_code, 100);
    if (answer.status >= 400) return answer;
    if (!isSuccess(answer.status) || !code) throw unexpected('transfer recipient', answer);
    // "A duplicate account number will lead to the retrieval of the existing record": a recipient
    // handed back for the same number at another bank would pay the wrong account. Never used, nor
    // one whose answer does not say which account it pays (every nuban sample Paystack publishes
    // does, though its description lets `account_number` be null): a code is remembered for good,
    // for every merchant paying that account.
    const details = record(data?.details);
    if (
      exact(details?.account_number, 20) !== order.account_number ||
      exact(details?.bank_code, 20) !== bank.code
    ) {
      logger.error(RECIPIENT_NOT_CONFIRMED, {
        partner: 'paystack',
        reference: order.reference,
        bank_code: bank.code,
        answered_bank_code: shownWord(details?.bank_code ?? null),
        account_number_matches: exact(details?.account_number, 20) === order.account_number,
      });
      return { notShown: answer };
    }
    await options.memo.put(key, code).catch((error: unknown) => {
      logger.warn('partner memo write failed', { error: String(error) });
    });
    return { code, remembered: false };
  };

  /**
   * `POST /transfer` to the account's recipient; the answer of the recipient's creation instead if
   * Paystack refused that (`refusedAt: 'recipient'`).
   */
  const initiateTransfer = async (
    bank: PaystackBank,
    order: TransferOrder,
    sent: { posted: boolean },
    { fresh = false } = {},
  ): Promise<{ answer: Answer; refusedAt?: 'recipient'; notShown?: true; remembered: boolean }> => {
    const recipient = await recipientFor(bank, order, { fresh });
    if ('notShown' in recipient) {
      return { answer: recipient.notShown, refusedAt: 'recipient', notShown: true, remembered: false };
    }
    if (!('code' in recipient)) return { answer: recipient, refusedAt: 'recipient', remembered: false };
    if (tooLateToSend(order, now())) {
      logger.warn('paystack transfer not sent: its hand-over was counted too long ago', {
        reference: order.reference,
      });
      throw new PartnerNotCalled(PARTNER_RETRY_AFTER_SECONDS, 'the hand-over was counted too long ago');
    }
    try {
      const answer = await call('POST', '/transfer', {
        source: 'balance',
        amount: order.amount,
        recipient: recipient.code,
        reference: order.reference,
        ...(order.narration ? { reason: order.narration } : {}),
      });
      sent.posted = true;
      return { answer, remembered: recipient.remembered };
    } catch (error) {
      // Unless it was never made, the request may have reached Paystack, its answer lost.
      if (!(error instanceof PartnerNotCalled)) sent.posted = true;
      throw error;
    }
  };

  /**
   * Whether a refused send under a remembered recipient code may be Paystack no longer knowing the
   * code: it says so (`invalid_transfer_recipient`, the code of its samples), or, as its published
   * description gives an error no other code (`validation_error`, `processor_error`, `api_error`),
   * a first send refused with 400, 404 or 422, not for a used reference, under which Paystack has no
   * transfer. Then nothing was sent under the reference. Otherwise the refusal is handled as any.
   */
  const mayBeStaleRecipient = async (answer: Answer, order: TransferOrder): Promise<boolean> => {
    if (saysInvalidRecipient(answer.body)) return true;
    if (order.resend || ![400, 404, 422].includes(answer.status) || saysDuplicateReference(answer.body))
      return false;
    return (await queryTransfer(order.reference, { confirming: true })) === undefined;
  };

  /**
   * A resend whose earlier sends are recent enough that Paystack may still be making the transfer
   * one of them gave it, and not yet show it: its refusal is not final. Once the last hand-over
   * before it is `EARLIER_SENDS_OVER_MS` old, a Paystack that shows nothing has nothing, and a
   * transfer it keeps refusing (its balance too low, the account closed) ends failed and refunded
   * instead of staying held for an operator.
   */
  const earlierSendMayBeInTheMaking = (order: TransferOrder): boolean =>
    order.resend === true &&
    (order.lastHandOverAt === undefined || now() - order.lastHandOverAt < EARLIER_SENDS_OVER_MS);

  /**
   * Paystack's synchronous refusal of a transfer. A refusal is final only if Paystack has no transfer
   * under the reference and nothing was sent under it before: a resend whose first answer was lost is
   * refused (the reference is used, in words Paystack does not publish, or a 401 on the way)
   * while the transfer it made goes on, and until Paystack has made it, verify answers 404. So the
   * transfer's real state is asked for first, and a resend not found stays pending while an earlier
   * send may still be in the making (`earlierSendMayBeInTheMaking`): it never becomes a refund then.
   */
  const refused = async (answer: Answer, order: TransferOrder): Promise<TransferOutcome> => {
    const { reference } = order;
    const message = messageOf(answer.body);
    const existing = await queryTransfer(reference, { confirming: true });
    if (existing) {
      logger.info('paystack refused a resend of a transfer it has', {
        reference,
        status: answer.status,
        paystack_message: message,
      });
      return existing;
    }
    if (saysDuplicateReference(answer.body) || earlierSendMayBeInTheMaking(order)) {
      // Used, it says, yet not found; or a resend, whose earlier send Paystack may still be making
      // (verify answers 404 until the transfer exists): left pending for the requery and, in the
      // end, an operator. Never failed: the refund could meet the earlier send's payment.
      logger.warn('paystack refused a transfer it does not show, which may have been sent before', {
        reference,
        status: answer.status,
        paystack_message: message,
        resend: order.resend === true,
      });
      return { status: 'pending' };
    }
    // Paystack has no transfer under this reference: nothing was sent, so the transfer ends failed
    // and is refunded. An error: most refusals (a wrong key, an empty Paystack balance) need an operator.
    logger.error('paystack refused a transfer', {
      reference,
      status: answer.status,
      paystack_message: message,
    });
    return { status: 'failed', reason: message ?? DEFAULT_FAILURE };
  };

  /** One send of a transfer, its key pinned (`sendTransfer`); `sent.posted` once a POST /transfer was made. */
  const send = async (order: TransferOrder, sent: { posted: boolean }): Promise<TransferOutcome> => {
    const bank = await paystackBankFor(order.bank_code);
    let attempt = await initiateTransfer(bank, order, sent);
    if (attempt.remembered && (await mayBeStaleRecipient(attempt.answer, order))) {
      // A remembered code Paystack may no longer know (the recipient was deleted on its
      // dashboard): made again, once. Nothing was sent under the reference with the refused code.
      logger.warn('paystack refused a send to a remembered recipient: making it again', {
        reference: order.reference,
        status: attempt.answer.status,
        paystack_message: messageOf(attempt.answer.body),
      });
      attempt = await initiateTransfer(bank, order, sent, { fresh: true });
    }
    const { answer } = attempt;
    if (attempt.refusedAt === 'recipient') {
      // A resend whose recipient was never remembered must still find the transfer it made.
      const existing = await queryTransfer(order.reference, { confirming: true });
      if (existing) return existing;
      logger.warn('paystack refused the transfer recipient', {
        reference: order.reference,
        status: answer.status,
        paystack_message: messageOf(answer.body),
        resend: order.resend === true,
      });
      // A resend's earlier send may still be in the making (see `refused`): pending, not failed.
      if (earlierSendMayBeInTheMaking(order)) return { status: 'pending' };
      // A recipient answered for another account (Paystack hands back its record of the number at
      // another bank, say) ends it like a refused recipient: every send would get it again. Final
      // only as any refusal of a first send is: verify (above) shows no transfer under the
      // reference, and any POST /transfer made under it (a remembered code's, before the recipient
      // was made again) was refused at once.
      return {
        status: 'failed',
        reason: attempt.notShown ? RECIPIENT_NOT_SHOWN : (messageOf(answer.body) ?? DEFAULT_FAILURE),
      };
    }
    if (answer.status >= 400) return refused(answer, order);
    const data = record(answer.body.data);
    if (!isSuccess(answer.status) || !data) throw unexpected('transfer', answer);
    return transferOutcome(checkedTransfer(data, order.reference, 'transfer', answer), order.reference);
  };

  return {
    name: 'paystack',
    // Paystack refuses a smaller charge: "The minimum amount for Pay with Transfer is NGN 100".
    virtualAccountMinimum: 10_000,

    transferReference: (merchantId, reference) =>
      `np_${sha256Hex(`${merchantId}\n${reference}`).slice(0, 40)}`,

    // A rotated key of the same integration sees the same transfers (verify finds them); only a
    // transfer it never received is then left to an operator, never sent through an account that
    // may not be the one that has it.
    accountTag: keyTag,

    async checkBank(bankCode) {
      await paystackBankFor(bankCode);
    },

    async nameEnquiry(bankCode, accountNumber) {
      const bank = await paystackBankFor(bankCode);
      const query = new URLSearchParams({ account_number: accountNumber, bank_code: bank.code });
      const answer = await call('GET', `/bank/resolve?${query}`);
      if (answer.status === 400 || answer.status === 404 || answer.status === 422) {
        throw new AccountNotFound();
      }
      const data = record(answer.body.data);
      const name = personText(data?.account_name, NAME_MAX);
      // The name of this account: an answer about another number, or one that says it failed, names
      // nobody (a name is kept an hour for every merchant, and saved with beneficiaries). Paystack's
      // description types the number asked for as an integer, so one echoed without its leading
      // zeros (or as a number) is the same account.
      const named = data?.account_number ?? null;
      const another = named !== null && significantDigits(named) !== significantDigits(accountNumber);
      if (answer.status === 200 && name && (answer.body.status === false || another)) {
        logger.error('paystack name enquiry answer names nobody', {
          problem: another ? 'it names another account number' : 'it says it failed ("status": false)',
        });
      }
      if (answer.status !== 200 || !name || answer.body.status === false || another) {
        throw unexpected('account resolve', answer);
      }
      return name;
    },

    async issueWallet(order) {
      const email = order.email ?? `${order.merchant_id.toLowerCase()}@${options.emailDomain}`;
      // The phone when the operator gave one: Paystack's documentation asks a dedicated account's
      // customer to have first name, last name and phone.
      const customer = await call('POST', '/customer', {
        email,
        ...splitName(order.name),
        ...(order.phone === undefined ? {} : { phone: order.phone }),
      });
      const customerCode = text(record(customer.body.data)?.customer_code, 100);
      if (!isSuccess(customer.status) || !customerCode) throw unexpected('customer create', customer);

      const answer = await call('POST', '/dedicated_account', {
        customer: customerCode,
        preferred_bank: options.dvaBank,
      });
      const data = record(answer.body.data);
      const account = issuedAccountOf(data);
      if (!isSuccess(answer.status) || !data || !account) throw unexpected('dedicated account', answer);
      return {
        ...account,
        bank_code: await ourBankCodeOf(data.bank),
        account_ids: [`nuban:${account.account_number}`, `customer:${customerCode}`],
      };
    },

    async openVirtualAccount(order) {
      const email =
        order.customer?.email ??
        `va-${sha256Hex(`${order.merchant_id}\n${order.reference}`).slice(0, 20)}@${options.emailDomain}`;
      const chargeReference = `va-${randomBytes(CHARGE_REFERENCE_BYTES).toString('hex')}`;
      const answer = await call('POST', '/charge', {
        email,
        amount: order.amount,
        reference: chargeReference,
        bank_transfer: { account_expires_at: order.expires_at },
        // No `metadata`: the description's versions type it as a string (API.md §9's "JSON string",
        // 01ce756 of PaystackOSS/openapi) and as an object (the newest, 9678dea), so either one is
        // refused by a Paystack that checks the other; it is optional and nothing reads it back.
      });
      const data = record(answer.body.data);
      const account = issuedAccountOf(data);
      const problem = data && account ? chargeProblem(answer.body, data) : undefined;
      if (problem)
        logger.error('paystack answered a pay with transfer charge in a way that opens nothing', { problem });
      if (!isSuccess(answer.status) || !data || !account || problem) {
        throw unexpected('pay with transfer charge', answer);
      }
      // charge.success names the charge by its reference: ours, which the answer echoes (a
      // different one is claimed too, so a payment under either finds the account).
      const echoed = exact(data.reference, 100);
      return {
        ...account,
        bank_code: await ourBankCodeOf(data.bank),
        account_ids: [...new Set([chargeReference, echoed ?? chargeReference])].map((id) => `charge:${id}`),
        alias_ids: [`email:${email.toLowerCase()}`],
        expires_at: isoOrNull(data.account_expires_at) ?? order.expires_at,
      };
    },

    async sendTransfer(order) {
      // One key for every call of the send, and the one the hand-over was counted under.
      const key = await secretKey().catch((error: unknown) => {
        throw new TransferNotSent(PARTNER_RETRY_AFTER_SECONDS, error);
      });
      if (order.account !== undefined && tagOf(key) !== order.account) {
        logger.warn('paystack transfer not sent: the secret key changed since its hand-over was counted', {
          reference: order.reference,
        });
        throw new TransferNotSent(PARTNER_RETRY_AFTER_SECONDS, 'the secret key changed');
      }
      const sent = { posted: false };
      try {
        return await pinnedKey.run(key, () => send(order, sent));
      } catch (error) {
        if (sent.posted || error instanceof TransferNotSent) throw error;
        // Failed before any POST /transfer was made: Paystack was never given it. A bank it no
        // longer pays (its list changed since the debit) ends a first send failed, as a refusal
        // would: nothing can have been sent under the reference.
        if ((error instanceof BankNotSupported || error instanceof UnknownBank) && !order.resend) {
          logger.error('paystack transfer not sent: Paystack does not pay this bank', {
            reference: order.reference,
            bank_code: order.bank_code,
          });
          return { status: 'failed', reason: error.message };
        }
        // No time left, the bank list or the recipient unavailable, or a fault of ours.
        throw new TransferNotSent(PARTNER_RETRY_AFTER_SECONDS, error);
      }
    },

    queryTransfer,

    async verifyDelivery({ headers, rawBody, sourceIp }: WebhookDelivery) {
      if (options.webhookIps.length > 0) {
        const ip = plainIp(sourceIp);
        if (!ip || !options.webhookIps.some((allowed) => plainIp(allowed) === ip)) {
          return `source address ${ip ?? 'unknown'} is not one of Paystack's`;
        }
      }
      const signature = headers['x-paystack-signature'];
      if (signature === undefined) return 'missing x-paystack-signature';
      if (!/^[0-9a-fA-F]{128}$/.test(signature)) return 'x-paystack-signature is not 128 hex characters';
      const expected = createHmac('sha512', await options.secretKey())
        .update(rawBody, 'utf8')
        .digest();
      const given = Buffer.from(signature, 'hex');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'signature mismatch';
      return undefined;
    },

    eventsOf({ rawBody }: WebhookDelivery) {
      return paystackEvents(rawBody);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Banks

/**
 * The cached bank directory. Concurrent callers share one load; a list at hand is served while a
 * refresh runs (banks rarely change), and a failed refresh keeps it and retries a few minutes later.
 */
function createBankDirectory(
  call: (method: 'GET', path: string) => Promise<Answer>,
  unexpected: (what: string, answer: Answer) => PartnerUnavailable,
  now: () => number,
  { timeoutMs, detached }: { timeoutMs: number; detached: <T>(work: () => Promise<T>) => Promise<T> },
) {
  let current: BankDirectory | undefined;
  let loading: { list: Promise<BankDirectory>; startedAt: number } | undefined;
  /** A load's own time: `BANK_LIST_LOAD_CALLS` calls at the partner timeout. */
  const loadBudgetMs = BANK_LIST_LOAD_CALLS * timeoutMs;

  /**
   * Every page of `GET /bank`: by Paystack's cursor (`meta.next`) while its answers give one; by
   * `meta.page` of `meta.pageCount` where they give page numbers instead. An answer with no `meta`
   * at all (Paystack's published description has none, and a page may hold fewer banks than asked
   * for) is followed by pages by number, until one holds no entry not seen before: an empty page, or
   * one asked past the end and answered with a page seen already. A page of inactive banks is no end.
   */
  const load = async (): Promise<BankDirectory> => {
    const banks = new Map<string, PaystackBank>();
    /** Every entry listed so far, usable or not (an inactive bank's too). */
    const entries = new Set<string>();
    const seen = new Set<string>();
    let cursor: string | undefined;
    let pageNumber: number | undefined;
    for (let round = 0; round < BANK_LIST_MAX_PAGES; round++) {
      const query = new URLSearchParams({
        currency: 'NGN',
        include_nip_sort_code: 'true',
        use_cursor: 'true',
        perPage: String(BANK_LIST_PAGE_SIZE),
      });
      if (cursor) query.set('next', cursor);
      if (pageNumber !== undefined) {
        query.delete('use_cursor');
        query.set('page', String(pageNumber));
      }
      const answer = await call('GET', `/bank?${query}`);
      const data = answer.body.data;
      if (answer.status !== 200 || !Array.isArray(data)) throw unexpected('bank list', answer);
      const before = entries.size;
      for (const item of data) entries.add(JSON.stringify(item));
      for (const bank of data.flatMap((item) => paystackBankOf(item) ?? [])) {
        banks.set(`${bank.code}|${bank.slug}|${bank.name}`, bank);
      }
      const meta = record(answer.body.meta);
      const next = text(meta?.next, 500);
      if (next && next !== 'null' && !seen.has(next) && pageNumber === undefined) {
        seen.add(next);
        cursor = next;
        continue;
      }
      // Page numbers, as Paystack's other lists give them (`TransferListResponse`): on to the next
      // page while `page` is below `pageCount`.
      const numbered = pageOf(meta);
      if (cursor === undefined && numbered) {
        // A page of inactive or repeated entries is no end: `pageCount` says where it ends.
        if (numbered.page >= numbered.pageCount) break;
        pageNumber = numbered.page + 1;
        continue;
      }
      if (cursor !== undefined || meta !== undefined || entries.size === before) break;
      pageNumber = (pageNumber ?? 1) + 1;
    }
    return indexBanks([...banks.values()], now());
  };

  /**
   * One refresh, shared by every caller that asks while it runs, in time of its own
   * (`loadBudgetMs`), not the starter's: the local runtime runs many invocations in one process, and
   * a load bounded by the time of the one that started it failed for every other caller waiting on
   * it once that one ran out. Its outcome is kept here, whoever is still waiting.
   */
  const refresh = () => {
    const started = {
      startedAt: now(),
      list: detached(() =>
        withInvocationDeadline(loadBudgetMs + ANSWER_RESERVE_MS, async () => {
          try {
            current = await load();
          } catch (error) {
            if (!current) throw error;
            logger.warn('paystack bank list refresh failed, using the cached list', { error: String(error) });
            current = { ...current, fetchedAt: now() - BANK_LIST_MAX_AGE_MS + BANK_LIST_RETRY_MS };
          }
          return current;
        }),
      ).finally(() => {
        if (loading === started) loading = undefined;
      }),
    };
    return started;
  };

  return {
    /**
     * The list. A caller with a list at hand, however old, has it at once while a refresh runs;
     * without one, it waits for the refresh no longer than its own partner time (then
     * `PartnerUnavailable`). An invocation with no time left for a call starts no load.
     */
    async get(): Promise<BankDirectory> {
      if (current && now() - current.fetchedAt < BANK_LIST_MAX_AGE_MS) return current;
      // Older than its own time: a load frozen with the invocation that started it (a Lambda
      // container between invocations), whose calls are cut at the thaw. A new one is started.
      if (loading && now() - loading.startedAt > loadBudgetMs) loading = undefined;
      if (!loading) {
        if (callTimeout(timeoutMs) === undefined) {
          if (current) return current;
          throw new PartnerNotCalled(PARTNER_RETRY_AFTER_SECONDS, 'no time left for a partner call');
        }
        loading = refresh();
      }
      if (current) return current;
      const waitMs = partnerTimeLeft();
      if (waitMs === undefined) return loading.list;
      try {
        return await within(loading.list, waitMs, () => new BankListLate(`not loaded within ${waitMs} ms`));
      } catch (error) {
        if (!(error instanceof BankListLate)) throw error;
        logger.warn('paystack bank list not loaded within the time the invocation has left');
        throw new PartnerUnavailable(PARTNER_RETRY_AFTER_SECONDS, error);
      }
    },
  };
}

/** A refresh of the bank list still running when the invocation waiting for it runs out of time. */
class BankListLate extends Error {
  override name = 'BankListLate';
}

/** `meta.page` of `meta.pageCount` (whole numbers, or their digits), where a list's `meta` gives them. */
function pageOf(meta: Json | undefined): { page: number; pageCount: number } | undefined {
  const page = Number(meta?.page);
  const pageCount = Number(meta?.pageCount);
  if (!Number.isSafeInteger(page) || !Number.isSafeInteger(pageCount) || page < 1) return undefined;
  return { page, pageCount };
}

/** One entry of `GET /bank`; inactive or deleted banks count as absent. */
function paystackBankOf(item: unknown): PaystackBank | undefined {
  const bank = record(item);
  const name = text(bank?.name, NAME_MAX);
  const code = text(bank?.code, 20);
  if (!bank || !name || !code || bank.active === false || bank.is_deleted === true) return undefined;
  // Asked for with `currency=NGN`; an entry that says it is another currency's (a Ghanaian "Access
  // Bank", say) is never one of ours, whatever its name.
  if (!isNaira(bank.currency ?? 'NGN')) return undefined;
  return {
    id: typeof bank.id === 'number' ? bank.id : undefined,
    name,
    slug: text(bank.slug, 100) ?? '',
    code,
    nip: text(bank.nip_sort_code, 20),
    // Paystack's samples omit the flag; only an explicit false means it cannot pay the bank.
    supportsTransfer: bank.supports_transfer !== false,
  };
}

/**
 * Matches each of our banks to Paystack's: by NIP institution code (which Paystack's description
 * promises with `include_nip_sort_code` but names in no schema), then by name (ours, then those
 * Paystack is known to use), then by the same
 * code (Paystack spells its own bank "Titan Paystack" in its list and "Paystack-Titan" in its
 * answers, and may list it without a NIP code: its code 100039 is ours).
 */
function indexBanks(banks: PaystackBank[], fetchedAt: number): BankDirectory {
  const byNip = new Map<string, PaystackBank>();
  const byName = new NameIndex<PaystackBank>();
  const byCode = new Map<string, PaystackBank>();
  for (const bank of banks) {
    if (bank.nip && !byNip.has(bank.nip)) byNip.set(bank.nip, bank);
    byName.add(bank.name, bank);
    if (!byCode.has(bank.code)) byCode.set(bank.code, bank);
  }
  const forward = new Map<string, PaystackBank>();
  const reverse = new Map<PaystackBank, string>();
  for (const ours of BANKS) {
    const match =
      byNip.get(ours.nip_code) ??
      namesOf(ours)
        .map((name) => byName.find(name))
        .find((bank) => bank !== undefined) ??
      byCode.get(ours.code);
    if (!match) continue;
    forward.set(ours.code, match);
    if (!reverse.has(match)) reverse.set(match, ours.code);
  }
  return { fetchedAt, banks, forward, reverse };
}

/**
 * Our code of the bank in a `/charge` or `/dedicated_account` answer (`{name, slug, id}`): payers
 * are told to send to it, so it is never guessed. By slug in the `/bank` list; by `id` only when no
 * slug is given and a name is, and the names agree (Paystack's samples number banks more than one way: a DVA
 * provider's `id` is not the `/bank` list's, and test mode's "Test Bank" has an id a listed bank
 * has too); otherwise by name in our list; else undefined (the caller answers 503 and logs it).
 */
function mapIssuingBank(directory: BankDirectory, bank: Json | undefined): string | undefined {
  if (!bank) return undefined;
  const slug = text(bank.slug, 100);
  const name = text(bank.name, NAME_MAX);
  const byId =
    slug === undefined && typeof bank.id === 'number'
      ? directory.banks.find((b) => b.id === bank.id)
      : undefined;
  const listed =
    (slug === undefined ? undefined : directory.banks.find((b) => b.slug === slug)) ??
    (byId && name !== undefined && sameBankName(byId.name, name) ? byId : undefined);
  const viaList = listed && directory.reverse.get(listed);
  if (viaList) return viaList;
  const byName = ourBanksByName();
  return byName.find(listed?.name ?? '')?.code ?? byName.find(name ?? '')?.code;
}

/**
 * Bank names as the two lists spell them differently ("Moniepoint MFB" and "Moniepoint
 * Microfinance Bank", "TAJ Bank" and "TAJBank"): an exact key first, then a loose one. Loose keys
 * shared by two different banks are dropped rather than guessed. The kind of bank ("MFB", "PSB")
 * is never dropped: "Nova MFB" is not our Nova Bank; a name that differs more is listed by hand
 * (`PAYSTACK_NAMES`).
 */
class NameIndex<T> {
  private readonly exact = new Map<string, T>();
  private readonly loose = new Map<string, T | null>();

  add(name: string, value: T): void {
    const exact = exactKey(name);
    if (!this.exact.has(exact)) this.exact.set(exact, value);
    const loose = looseKey(name);
    if (!loose) return;
    const existing = this.loose.get(loose);
    this.loose.set(loose, existing === undefined || existing === value ? value : null);
  }

  find(name: string): T | undefined {
    if (!name) return undefined;
    return this.exact.get(exactKey(name)) ?? this.loose.get(looseKey(name)) ?? undefined;
  }

  /** By the exact key only: no words dropped (a loose key drops "(Diamond)", another bank). */
  findExact(name: string): T | undefined {
    return name ? this.exact.get(exactKey(name)) : undefined;
  }
}

/** Whether two spellings name the same bank, by the keys `NameIndex` matches on. */
function sameBankName(a: string, b: string): boolean {
  return exactKey(a) === exactKey(b) || (looseKey(a) !== '' && looseKey(a) === looseKey(b));
}

function exactKey(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

const NAME_NOISE = new Set(['plc', 'ltd', 'limited', 'nigeria', 'ng', 'of', 'the', 'for', 'and', 'bank']);

function looseKey(name: string): string {
  return name
    .toLowerCase()
    .replace(/\([^)]*\)/g, ' ')
    .replace(/micro\s*finance\s+bank|microfinance/g, 'mfb')
    .replace(/payment\s+service\s+bank/g, 'psb')
    .split(/[^a-z0-9]+/)
    .filter((word) => word && !NAME_NOISE.has(word))
    .map((word) => (word.length > 4 && word.endsWith('bank') ? word.slice(0, -4) : word))
    .join('');
}

/**
 * Names Paystack gives some of our banks that no key of `NameIndex` can tell are theirs, by our
 * code, each from Paystack's own samples and list: Kuda Microfinance Bank is "Kuda Bank" (50211,
 * a transfer recipient's `bank_name`), OPay's company is Paycom (999992, the `/bank` sample).
 */
const PAYSTACK_NAMES: Readonly<Record<string, readonly string[]>> = {
  '090267': ['Kuda Bank'],
  '100004': ['Paycom'],
};

/** Our bank's names to look for in Paystack's list: its own, then those Paystack is known to use. */
function namesOf(bank: BankRecord): readonly string[] {
  return [bank.name, ...(PAYSTACK_NAMES[bank.code] ?? [])];
}

let ourBanks: NameIndex<BankRecord> | undefined;

/**
 * Our banks by name, for the banks Paystack issues accounts at: built on the first account issued,
 * not at import (every function carrying this adapter would pay for it, sandbox deployments too).
 */
function ourBanksByName(): NameIndex<BankRecord> {
  if (!ourBanks) {
    ourBanks = new NameIndex<BankRecord>();
    for (const bank of BANKS) for (const name of namesOf(bank)) ourBanks.add(name, bank);
  }
  return ourBanks;
}

// ---------------------------------------------------------------------------------------------
// Transfers and accounts

/** Paystack's transfer status word in the domain's words; unknown words stay pending, never guessed. */
function transferOutcome(data: Json, reference: string): TransferOutcome {
  const status = typeof data.status === 'string' ? data.status.toLowerCase() : '';
  const amount = transferAmount(data);
  if (SUCCESS_WORDS.has(status)) return { status: 'success', ...amount };
  if (FAILED_WORDS.has(status)) return { status: 'failed', reason: failureReason(data), ...amount };
  if (REVERSED_WORDS.has(status)) return { status: 'reversed', reason: failureReason(data), ...amount };
  if (status === 'otp') {
    logger.error('paystack transfer awaits an OTP: disable OTP for API transfers in the Paystack dashboard', {
      reference,
    });
  } else if (!PENDING_WORDS.has(status)) {
    logger.warn('unknown paystack transfer status, kept pending', { reference, status });
  }
  return { status: 'pending' };
}

/**
 * A transfer's `amount` (kobo), where Paystack gives one as a positive whole number, or its digits
 * (as its samples give some amounts); else nothing to check.
 */
function transferAmount(data: Json): { amount?: number } {
  const { amount } = data;
  const kobo = typeof amount === 'string' && /^[1-9]\d{0,15}$/.test(amount) ? Number(amount) : amount;
  return typeof kobo === 'number' && Number.isSafeInteger(kobo) && kobo > 0 ? { amount: kobo } : {};
}

/**
 * What makes a transfer's money unreadable, where Paystack gives it: an amount that is not a positive
 * whole number of kobo (or its digits), a currency other than naira. Nothing given is nothing to check.
 */
function transferMoneyProblem(data: Json): string | undefined {
  if ((data.amount ?? null) !== null && transferAmount(data).amount === undefined) {
    return 'its amount is not a positive whole number of kobo';
  }
  return currencyProblem(data);
}

/** A `currency` given that is not naira, said as a reason; nothing given is nothing to check. */
function currencyProblem(data: Json): string | undefined {
  const currency = data.currency ?? null;
  return currency !== null && !isNaira(currency)
    ? `its currency ${shownWord(currency)} is not NGN`
    : undefined;
}

/**
 * A currency code that names naira: `NGN`, in any case (Paystack's description types `currency` as
 * a free string; its samples all say `NGN`, and `ngn` names no other currency).
 */
function isNaira(currency: unknown): boolean {
  return exact(currency, 10)?.toUpperCase() === 'NGN';
}

/**
 * What makes a Pay with Transfer charge's answer open no account: it says it failed (`"status":
 * false`, or a failed status word), or is in a currency other than naira. Its `amount` is not
 * compared: with fees passed on to payers Paystack may charge more than asked (`requested_amount`),
 * and a payment is credited by what arrives, never by this answer.
 */
function chargeProblem(body: Json, data: Json): string | undefined {
  const status = typeof data.status === 'string' ? data.status.toLowerCase() : '';
  if (body.status === false || FAILED_WORDS.has(status)) return 'it says it failed';
  return currencyProblem(data);
}

/** An account number's digits without leading zeros (a string of digits, or a whole number); else undefined. */
function significantDigits(value: unknown): string | undefined {
  const digits =
    typeof value === 'string' && /^\d{1,20}$/.test(value)
      ? value
      : typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
        ? String(value)
        : undefined;
  return digits?.replace(/^0+(?=\d)/, '');
}

/** A word a partner sent, as a reason may show it: short, and only if it is a plain string. */
function shownWord(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(cutText(value, 20)) : typeof value;
}

/**
 * Paystack's own failure message of a transfer. `reason` is not one: it is the narration we sent.
 */
function failureReason(data: Json): string {
  const failures = Array.isArray(data.failures) ? data.failures[0] : data.failures;
  const failure = record(failures);
  return (
    personText(failures, NARRATION_MAX) ??
    personText(failure?.message, NARRATION_MAX) ??
    personText(failure?.reason, NARRATION_MAX) ??
    personText(data.gateway_response, NARRATION_MAX) ??
    DEFAULT_FAILURE
  );
}

/**
 * Whether a refused `POST /transfer` says the reference was used before. Paystack documents the
 * error ("This reference has already been used on a prior transfer") without a stable code, and
 * its samples word it as "Duplicate reference(s) found: …" (bulk, HTTP 404) and "Duplicate
 * Transaction Reference" (`code: duplicate_reference`, charges), so the words are matched.
 */
function saysDuplicateReference(body: Json): boolean {
  const code = typeof body.code === 'string' ? body.code : '';
  const message = messageOf(body) ?? '';
  return /duplicate/i.test(code) || /duplicate|already (?:been )?used|already exists/i.test(message);
}

/** Whether a refused `POST /transfer` says the recipient code is unknown (`invalid_transfer_recipient`). */
function saysInvalidRecipient(body: Json): boolean {
  return body.code === 'invalid_transfer_recipient';
}

/** The number, name and closing time of an account Paystack issued, if its answer has them. */
function issuedAccountOf(
  data: Json | undefined,
): Omit<IssuedAccount, 'bank_code' | 'account_ids'> | undefined {
  const accountNumber = text(data?.account_number, 20);
  const accountName = personText(data?.account_name, NAME_MAX);
  if (!accountNumber || !/^\d{10}$/.test(accountNumber) || !accountName) return undefined;
  return { account_number: accountNumber, account_name: accountName };
}

/** Paystack's customers need a first and a last name; a one-word name is used for both. */
function splitName(name: string): { first_name: string; last_name: string } {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const first = cutText(words[0] ?? name, 100);
  return { first_name: first, last_name: cutText(words.slice(1).join(' '), 100) || first };
}

// ---------------------------------------------------------------------------------------------
// Webhooks

/**
 * The domain events of a verified Paystack webhook body. Paystack sends no delivery id, so one is
 * made from the event and its entity (stable across redeliveries), else from the body's hash.
 * Only a body that is not JSON throws; JSON the service cannot act on is kept (`DeliveryUnusable`).
 */
function paystackEvents(rawBody: string): { deliveryId: string; events: DomainEvent[] } {
  const { json, ambiguity } = readDeliveryJson(rawBody, PAYSTACK_COSMETIC);
  const payload = record(json);
  const event = exact(payload?.event, 100);
  const data = record(payload?.data) ?? {};
  const entity =
    idOf(data.id) ?? exact(data.reference, 100) ?? idOf(record(data.bank_transfer)?.transaction_id);
  const deliveryId =
    event && entity ? `paystack:${event}:${entity}` : `paystack:sha256:${sha256Hex(rawBody)}`;
  const keep: Keep = (reason) => [
    unusableDelivery('paystack', rawBody, reason, {
      partnerEvent: event,
      partnerId: event && partnerIdOf(event, data),
    }),
  ];
  const events = ambiguity
    ? keep(ambiguity)
    : !payload
      ? keep('not an event: the body is not a JSON object')
      : !event
        ? keep('not an event: no event name')
        : eventsFor(event, data, rawBody, keep);
  if (events.length === 0) logger.info('paystack event ignored', { event, delivery_id: deliveryId });
  return { deliveryId, events };
}

/**
 * The fields of Paystack's events read only for people (`paymentReceived`'s sender, narration and
 * time, a transfer's failure message): a key given twice in them is read with its last value, never
 * a reason to keep a payment (`readDeliveryJson`). Never a field that decides an amount, an
 * account, an id, a channel or an outcome.
 */
const PAYSTACK_COSMETIC = [
  'data.authorization.sender_name',
  'data.authorization.sender_bank_account_number',
  'data.authorization.sender_bank',
  'data.authorization.narration',
  'data.paid_at',
  'data.paidAt',
  'data.gateway_response',
  'data.failures',
] as const;

/** The one event that keeps a delivery for operators, with the reason it cannot be acted on. */
type Keep = (reason: string) => DomainEvent[];

/** The id operators find a kept delivery under, as `DeliveryUnusable.partner_id` describes. */
function partnerIdOf(event: string, data: Json): string | undefined {
  if (event === 'charge.success') return idOf(data.id);
  if (event.startsWith('transfer.')) {
    const reference = exact(data.reference, 100);
    return reference && `transfer:${reference}`;
  }
  if (event === 'bank.transfer.rejected') {
    const attempt = idOf(record(data.bank_transfer)?.transaction_id) ?? idOf(data.id);
    return attempt && `rejected:${attempt}`;
  }
  return undefined;
}

function eventsFor(event: string, data: Json, rawBody: string, keep: Keep): DomainEvent[] {
  switch (event) {
    case 'charge.success':
      return paymentReceived(data, keep);
    case 'transfer.success':
    case 'transfer.failed':
    case 'transfer.reversed':
      return transferSettled(event, data, keep);
    case 'bank.transfer.rejected':
      return paymentRejected(data, rawBody, keep);
    default:
      return [];
  }
}

/**
 * A `charge.success` into a Pay with Transfer account or a dedicated account; other channels are
 * not ours. Strict on what moves money (the transaction id, the receiving account, an integer
 * amount in NGN), loose on what people read: a long or odd sender, narration or time is cut or
 * dropped, never a reason to refuse the payment.
 */
function paymentReceived(data: Json, keep: Keep): DomainEvent[] {
  // The event's own channel; without one, the authorization's (Paystack's dedicated-account sample,
  // event-snippet.js, shows `channel: "dedicated_nuban"` only there).
  // Given there (not null), the event's own channel, exactly: an unreadable one is never replaced
  // by the authorization's.
  const channel = exact(data.channel ?? record(data.authorization)?.channel, 50);
  if (channel !== 'bank_transfer' && channel !== 'dedicated_nuban') {
    // Not a payment into an account the service issued, as it stands. But one that names a charge
    // the service made (`va-…`), or a receiving bank account, or whose channel is missing (no
    // `data` object) or ours spelled otherwise, may be money meant for the service: kept for
    // operators, never dropped. Other channels (a card) are not ours.
    const reference = exact(data.reference, 100);
    const sent = data.channel ?? record(data.authorization)?.channel;
    const why = [
      reference && CHARGE_REFERENCE.test(reference) && `it names a charge the service made (${reference})`,
      // Paystack's card events carry `receiver_bank_account_number: null`: no account named.
      (record(data.authorization)?.receiver_bank_account_number ?? null) !== null &&
        'it names a receiving account',
      channel === undefined && 'its channel cannot be read',
      typeof sent === 'string' &&
        /^\s*(bank_transfer|dedicated_nuban)\s*$/i.test(sent) &&
        'its channel is ours, spelled otherwise',
    ].filter((reason): reason is string => typeof reason === 'string');
    const named = cutText(JSON.stringify(sent) ?? 'none', 60);
    if (why.length > 0) {
      logger.warn("paystack charge.success on another channel may be the service's: kept for operators", {
        channel: named,
        reference,
      });
      return keep(`charge.success on channel ${named}: ${why.join('; ')}`);
    }
    logger.info('paystack charge.success on a channel the service does not issue', { channel });
    return [];
  }
  const authorization = record(data.authorization) ?? {};
  // A receiving account given is 10 digits exactly, or the payment is kept: never matched by the
  // customer code alone as if none were given. Paystack's description gives the field no type: as a
  // JSON number it is those digits, its leading zeros lost (a whole number of at most 10 digits).
  const givenReceiver = authorization.receiver_bank_account_number ?? undefined;
  const receiver =
    typeof givenReceiver === 'number'
      ? Number.isSafeInteger(givenReceiver) &&
        givenReceiver >= 0 &&
        !Object.is(givenReceiver, -0) &&
        givenReceiver < 1e10
        ? String(givenReceiver).padStart(10, '0')
        : null
      : (exact(givenReceiver, 10) ?? null);
  const accountIds = receivingIds(channel, data, receiver);
  const transactionId = idOf(data.id);
  const amount = data.amount;
  // Amounts are kobo only in naira: another currency, or none said (Paystack's description
  // requires it), must never be credited as NGN.
  const currency = exact(data.currency, 10);
  const problems = [
    givenReceiver !== undefined &&
      (receiver === null || !/^\d{10}$/.test(receiver)) &&
      'its receiving account number is not 10 digits',
    !accountIds && 'names no receiving account',
    !transactionId && 'no transaction id',
    !isPositiveKobo(amount) && `amount is not a positive whole number of kobo (${typeof amount})`,
    currency === undefined && 'no currency',
    currency !== undefined && !isNaira(currency) && `currency ${currency} is not NGN`,
  ].filter((problem): problem is string => typeof problem === 'string');
  if (problems.length > 0 || !accountIds || !transactionId || !isPositiveKobo(amount)) {
    logger.error('paystack charge.success cannot be credited: kept for operators', { channel, problems });
    return keep(`charge.success cannot be credited: ${problems.join('; ')}`);
  }
  return [
    {
      type: 'PaymentReceived',
      partner: 'paystack',
      payment_id: transactionId,
      account_ids: accountIds,
      account_number: receiver,
      amount,
      sender: {
        account_name: personText(authorization.sender_name, NAME_MAX),
        account_number: personText(authorization.sender_bank_account_number, 20),
        bank_code: senderBankCode(authorization.sender_bank),
      },
      narration: personText(authorization.narration, NARRATION_MAX),
      paid_at: isoOrNull(data.paid_at ?? data.paidAt),
    },
  ];
}

/**
 * The payer's bank as our code. Paystack's payment events name it (`"sender_bank": "First City
 * Monument Bank"` in its dedicated-account sample): a CBN code as sent, else the bank of our list
 * of exactly that name (case and punctuation aside; no words dropped, since "Access Bank (Diamond)"
 * is another bank than Access Bank), else null. Shown to the merchant only, never used to move money.
 */
function senderBankCode(value: unknown): string | null {
  return bankCodeOrNull(value) ?? ourBanksByName().findExact(text(value, NAME_MAX) ?? '')?.code ?? null;
}

/** The receiving account's ids as `IssuedAccount.account_ids` claimed them, best first. */
function receivingIds(
  channel: 'bank_transfer' | 'dedicated_nuban',
  data: Json,
  receiver: string | null,
): string[] | undefined {
  if (channel === 'bank_transfer') {
    const reference = exact(data.reference, 100);
    return reference ? [`charge:${reference}`] : undefined;
  }
  const customer = exact(record(data.customer)?.customer_code, 100);
  const ids = [receiver && `nuban:${receiver}`, customer && `customer:${customer}`].filter(
    (id): id is string => Boolean(id),
  );
  return ids.length > 0 ? ids : undefined;
}

function transferSettled(event: string, data: Json, keep: Keep): DomainEvent[] {
  const reference = exact(data.reference, 100);
  if (!reference) {
    logger.error('paystack transfer event without a reference: kept for operators', { event });
    return keep(`${event} cannot be settled: no reference`);
  }
  // Money given is read strictly: an amount that is not a positive whole number of kobo, or another
  // currency than naira, keeps the verdict, never settles the transfer unchecked as if none were given.
  const problem = transferMoneyProblem(data);
  if (problem) {
    logger.error('paystack transfer event whose money cannot be read: kept for operators', {
      event,
      reference,
      problem,
    });
    return keep(`${event} cannot be settled: ${problem}`);
  }
  const outcome: TransferSettled['outcome'] =
    event === 'transfer.success'
      ? { status: 'success', ...transferAmount(data) }
      : {
          status: event === 'transfer.failed' ? 'failed' : 'reversed',
          reason: failureReason(data),
          ...transferAmount(data),
        };
  return [{ type: 'TransferSettled', partner: 'paystack', reference, outcome }];
}

/** A Pay with Transfer payment Paystack returned to the payer (e.g. a wrong amount). */
function paymentRejected(data: Json, rawBody: string, keep: Keep): DomainEvent[] {
  const transfer = record(data.bank_transfer) ?? {};
  const email = text(record(data.customer)?.email, 320)?.toLowerCase();
  const reference = exact(data.reference, 100) ?? exact(transfer.reference, 100);
  const accountIds = reference ? [`charge:${reference}`] : [];
  const aliasIds = email ? [`email:${email}`] : [];
  // Paystack's sample sends this amount as a string of kobo.
  const amount =
    typeof transfer.amount === 'string' && /^\d+$/.test(transfer.amount)
      ? Number(transfer.amount)
      : transfer.amount;
  const namesNoAccount = accountIds.length === 0 && aliasIds.length === 0;
  if (namesNoAccount || !isPositiveKobo(amount)) {
    logger.error('paystack bank.transfer.rejected cannot be matched: kept for operators', {
      has_email: Boolean(email),
    });
    return keep(
      `bank.transfer.rejected cannot be listed: ${namesNoAccount ? 'names no account' : 'no amount'}`,
    );
  }
  const attempt = idOf(transfer.transaction_id) ?? idOf(data.id);
  const rejected: PaymentRejected = {
    type: 'PaymentRejected',
    partner: 'paystack',
    attempt_id: attempt ?? `body-${sha256Hex(rawBody).slice(0, 40)}`,
    account_ids: accountIds,
    ...(aliasIds.length > 0 ? { alias_ids: aliasIds } : {}),
    amount,
    reason:
      personText(transfer.message, NARRATION_MAX) ??
      personText(transfer.message_type, 100) ??
      DEFAULT_REJECTION,
    rejected_at: isoOrNull(transfer.created_at ?? transfer.received_at ?? data.created_at ?? data.createdAt),
  };
  return [rejected];
}

/** Node reports IPv4 clients of a dual-stack socket as `::ffff:a.b.c.d`: compared without the prefix. */
function plainIp(ip: string | undefined): string | undefined {
  const trimmed = ip?.trim().toLowerCase();
  return trimmed ? trimmed.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '') : undefined;
}

// ---------------------------------------------------------------------------------------------
// Reading JSON loosely: unknown fields are ignored and odd types are dropped, never fatal.

function parseObject(body: string): Json | undefined {
  try {
    return record(JSON.parse(body));
  } catch {
    return undefined;
  }
}

/** A Paystack id: a non-negative safe integer or a short string of id characters, exactly as sent. */
function idOf(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? String(value) : undefined;
  const id = exact(value, PAYMENT_ID_MAX);
  return id && PAYMENT_ID.test(id) ? id : undefined;
}

/**
 * A word of an event that money turns on (an event name, a channel, a currency, a reference, an
 * account number, a customer code), exactly as sent: printable ASCII without spaces, at most `max`
 * characters; undefined for anything else. Never trimmed or cut, so two texts are never read as one
 * id (` 9930000012` is not `9930000012`); what cannot be read so is kept for operators.
 */
function exact(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value.length <= max && /^[\x21-\x7E]+$/.test(value) ? value : undefined;
}

function isPositiveKobo(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

function messageOf(body: Json): string | undefined {
  return personText(body.message, NARRATION_MAX) ?? undefined;
}
