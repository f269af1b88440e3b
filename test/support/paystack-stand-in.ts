import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BANKS, type BankRecord } from '#shared/banks/data.ts';
import { toNuban } from '#shared/banks/nuban.ts';

/*
 * A stand-in for the part of Paystack's API the payments code uses, written from Paystack's own
 * published material: the OpenAPI description (PaystackOSS/openapi `dist/paystack.yaml`, "the
 * description" below) and the sample answers and events of PaystackOSS/doc-code-snippets
 * (`dist/api/<operation>/response.json`, `dist/doc/payments/**`). Where those are silent or
 * contradict each other, the choice made is commented where it is made.
 *
 * It deliberately imports nothing that reads configuration: tests start it before the environment
 * the rest of the code reads is set.
 */

// ---------------------------------------------------------------------------------------------
// Public surface
// ---------------------------------------------------------------------------------------------

/** Options of {@link startPaystackStandIn}. */
export interface PaystackStandInOptions {
  /** Port on 127.0.0.1; 0 or undefined picks a free one. */
  port?: number;
  /** The secret key requests must carry and events are signed with; default {@link DEFAULT_PAYSTACK_SECRET_KEY}. */
  secretKey?: string;
  /** Where signed events go; can be set later with `setWebhookUrl`. */
  webhookUrl?: string;
  /** Delay before the stand-in finishes a transfer it answered `pending`; default 200 ms. */
  settleAfterMs?: number;
  /** How long `GET /bank/resolve` hangs for an account starting `88888` before answering 504; default 3000 ms. */
  hangMs?: number;
  /**
   * Whether a new Pay with Transfer charge is given the account number of the most recently expired
   * charge (Paystack recycles the numbers of expired charges); default true. False: always a fresh number.
   */
  reuseAccountNumbers?: boolean;
  /**
   * How `POST /transfer` refuses a reference it already has; default 400 "Duplicate Transfer
   * Reference" (`duplicate_reference`). Paystack does not publish its wording: tests give other
   * answers to show nothing depends on it.
   */
  reusedReferenceAnswer?: { status: number; message: string };
  /**
   * The `bank` of a Pay with Transfer charge's answer; default Titan Paystack (`create-dva.js`).
   * Paystack's test mode answers `{"slug":"test-bank","id":24}` (`pwt.js`), a bank of no list.
   */
  chargeBank?: { name?: string; slug?: string; id?: number };
  /**
   * Whether `POST /transferrecipient` finds an existing recipient by account number alone, whatever
   * its bank (one reading of "A duplicate account number will lead to the retrieval of the existing
   * record"); default false: by bank and account number.
   */
  recipientsByAccountOnly?: boolean;
  /**
   * The `code` of `POST /transfer`'s refusal of a recipient code it does not know; default
   * `invalid_transfer_recipient` (the sample's). Paystack's published description types an error's
   * code only as `validation_error`, `processor_error` or `api_error`.
   */
  unknownRecipientCode?: string;
  /**
   * `GET /bank` as Paystack's published description gives it: no `meta` (no cursor), pages by
   * `page` only, at most this many banks a page whatever `perPage` asks. Default: `meta` with a
   * cursor, as Paystack's samples and live answers have it, `perPage` honoured.
   */
  bankPagesWithoutMeta?: number;
  /**
   * `GET /bank` paged as Paystack's other lists are (`TransferListResponse`): `use_cursor` ignored,
   * pages by `page`, at most this many banks a page, and a `meta` of page numbers
   * (`{total, skipped, perPage, page, pageCount}`) instead of a cursor.
   */
  bankPagesNumbered?: number;
}

/** One request the stand-in received. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The parsed JSON body, the raw text when it was not JSON, undefined when there was none. */
  body: unknown;
  /** The status answered; 0 while the answer is still pending or when the caller went away first. */
  status: number;
  /** What was wrong with the request against Paystack's description; empty for a valid request. */
  problems: string[];
}

/** An event as Paystack posts it to a webhook URL. */
export interface PaystackEvent {
  event: string;
  data: Record<string, unknown>;
}

/** One attempt of the stand-in to deliver an event on its own (a settled transfer, a payment). */
export interface EventDelivery {
  event: PaystackEvent;
  /** The receiver's status; undefined when the delivery did not get an answer. */
  status?: number;
  /** Why the delivery got no answer (no webhook URL, connection refused...). */
  error?: string;
}

/** A running stand-in; see {@link startPaystackStandIn}. */
export interface PaystackStandIn {
  /** Base URL, e.g. `http://127.0.0.1:41234` (Paystack's is `https://api.paystack.co`). */
  url: string;
  secretKey: string;
  /** Every request received, with the problems found against the description (empty = valid). */
  requests: RecordedRequest[];
  /** Every event the stand-in sent on its own, with the receiver's answer. */
  deliveries: EventDelivery[];
  /** The last event built by `payCharge`, `rejectCharge`, `payDedicatedAccount` or a settled transfer. */
  readonly lastEvent: PaystackEvent | undefined;
  setWebhookUrl(url: string): void;
  /**
   * Signs (unless `signature` is given) and POSTs an event {event, data} to the webhook URL; or,
   * given `rawBody`, exactly that text (for bodies `JSON.stringify` cannot make), with `contentType`.
   */
  sendEvent(
    event: PaystackEvent,
    options?: { signature?: string; rawBody?: string; contentType?: string },
  ): Promise<{ status: number; body: string }>;
  /**
   * Forgets every recipient, as deleting them on Paystack's dashboard does: their codes are then
   * refused (`invalid_transfer_recipient`), and `POST /transferrecipient` makes new ones.
   */
  forgetRecipients(): void;
  /** A transfer by its (our) reference, as the stand-in holds it. */
  transfer(
    reference: string,
  ): { status: string; amount: number; transfer_code: string; recipient_code: string } | undefined;
  /** Finishes a transfer: sets its status and, if `sendWebhook` (default true), sends transfer.success|failed|reversed. */
  settleTransfer(
    reference: string,
    status: 'success' | 'failed' | 'reversed',
    options?: { sendWebhook?: boolean; reason?: string },
  ): Promise<void>;
  /**
   * A customer pays into a Pay with Transfer charge (by charge reference): sends charge.success
   * (channel bank_transfer) unless `sendWebhook` is false; returns Paystack's transaction id and the
   * event, which `sendEvent` can redeliver as is.
   */
  payCharge(
    chargeReference: string,
    amount: number,
    options?: { sendWebhook?: boolean },
  ): Promise<{ id: number; event: PaystackEvent }>;
  /** A customer sends a wrong amount to a charge's account: Paystack refuses it and sends bank.transfer.rejected. */
  rejectCharge(chargeReference: string, amount: number): Promise<{ event: PaystackEvent }>;
  /** A customer pays into a dedicated account (by account number): charge.success with channel dedicated_nuban. */
  payDedicatedAccount(accountNumber: string, amount: number): Promise<{ id: number; event: PaystackEvent }>;
  /** Pay with Transfer charges by charge reference. */
  charges: Map<string, { email: string; amount: number; account_number: string }>;
  /** Dedicated accounts by account number. */
  dedicatedAccounts: Map<string, { customer_code: string; email: string }>;
  close(): Promise<void>;
}

/** The default secret key: `sk_test_` and 40 hex characters, fixed so failures are reproducible. */
export const DEFAULT_PAYSTACK_SECRET_KEY = 'sk_test_5f0c2d9a7b41e3c86d0f9a2b4c6e8d1f3a5b7c90';

/** Our CBN code of the one bank of our list that the stand-in's `GET /bank` leaves out (Rex Microfinance Bank). */
export const PAYSTACK_MISSING_BANK_CODE = '090449';

/** Our CBN code of the bank the stand-in lists with `supports_transfer: false` (MoneyMaster PSB). */
export const PAYSTACK_NO_TRANSFER_BANK_CODE = '120005';

/**
 * Banks whose Paystack `code` is not our CBN code, by our CBN code; their `nip_sort_code` is still our
 * NIP code. Paystack's own sample list has such codes (Infinity MFB `50457`, Paycom `999992`), so
 * code that maps Paystack banks to ours must map by NIP code.
 */
export const PAYSTACK_BANK_CODE_OVERRIDES: Readonly<Record<string, string>> = {
  '090267': '50211', // Kuda Microfinance Bank
  '090405': '50515', // Moniepoint Microfinance Bank
  '100004': '999992', // OPay
};

/**
 * Paystack's own bank as published copies of its `/bank` list show it: "Titan Paystack" (not the
 * "Paystack-Titan" of its account answers and of our list), code 100039, with no NIP sort code
 * known, so the adapter must find it by its code.
 */
const PAYSTACK_OWN_BANK = { cbn: '100039', name: 'Titan Paystack' } as const;

/**
 * Account-number prefixes that make the stand-in misbehave, as the brief of each test needs:
 * resolution (`GET /bank/resolve`) and transfers to a recipient with such an account number.
 */
export const PAYSTACK_ACCOUNT_PREFIXES = {
  /** Resolve answers 422 "Could not resolve account name". */
  unresolvable: '99999',
  /** Resolve hangs `hangMs`, then answers 504. */
  resolveHangs: '88888',
  /** Transfer pending, then failed with transfer.failed. */
  failsWithWebhook: '77777',
  /** Transfer pending until `settleTransfer`. */
  staysPending: '66666',
  /** Transfer pending, then success without a webhook. */
  succeedsSilently: '55555',
  /** Transfer pending, then failed ("Could not credit account") without a webhook. */
  failsSilently: '44444',
  /** Transfer refused synchronously: 400 balance not enough. */
  insufficientBalance: '33333',
  /** Transfer answered 500 without being created. */
  serverError: '22222',
  /** Transfer created (and settled as usual), but its answer hangs `hangMs`, then 504: the answer is lost. */
  answerLost: '11111',
  /**
   * Transfer made only `2 × hangMs` after its request (then settled as usual); the answer hangs
   * `hangMs`, then 504. Until it is made, verify answers 404 and a resend of the reference is
   * refused in words Paystack does not publish ("Transfer could not be processed at this time").
   */
  slowToCreate: '10101',
} as const;

/**
 * Paystack's published webhook source addresses (paystack.com/docs/payments/webhooks, "IP
 * whitelisting"); the stand-in itself posts from 127.0.0.1.
 */
export const PAYSTACK_WEBHOOK_IPS = ['52.31.139.75', '52.49.173.169', '52.214.14.220'] as const;

/** The `id` the stand-in's `GET /bank` gives one of our banks (by CBN code). */
export function paystackBankId(cbnCode: string): number {
  return bankByCbn(cbnCode).id;
}

/** The Paystack `code` of one of our banks (by CBN code); undefined for the bank Paystack does not list. */
export function paystackBankCode(cbnCode: string): string | undefined {
  return PAYSTACK_BANKS.find((bank) => bank.cbn === cbnCode)?.code;
}

/**
 * A valid NUBAN at one of our banks (by CBN code) whose number starts with `prefix` (see
 * {@link PAYSTACK_ACCOUNT_PREFIXES}); `n` tells several apart.
 */
export function standInAccountNumber(prefix: string, cbnCode: string, n = 0): string {
  const serial = `${prefix}${String(n).padStart(9 - prefix.length, '0')}`;
  return toNuban(cbnCode, serial);
}

/** Starts a stand-in on 127.0.0.1. */
export async function startPaystackStandIn(options: PaystackStandInOptions = {}): Promise<PaystackStandIn> {
  const standIn = new StandIn(options);
  await standIn.listen(options.port ?? 0);
  return standIn;
}

// ---------------------------------------------------------------------------------------------
// Banks, as Paystack lists them
// ---------------------------------------------------------------------------------------------

interface PaystackBank {
  id: number;
  name: string;
  slug: string;
  code: string;
  cbn: string;
  nip_sort_code: string;
  supports_transfer: boolean;
}

function slugOf(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function paystackBankOf(bank: BankRecord, index: number): PaystackBank {
  const own = bank.code === PAYSTACK_OWN_BANK.cbn;
  const name = own ? PAYSTACK_OWN_BANK.name : bank.name;
  return {
    id: index + 1,
    name,
    slug: slugOf(name),
    code: PAYSTACK_BANK_CODE_OVERRIDES[bank.code] ?? bank.code,
    cbn: bank.code,
    nip_sort_code: own ? '' : bank.nip_code,
    supports_transfer: bank.code !== PAYSTACK_NO_TRANSFER_BANK_CODE,
  };
}

// Paystack sorts its list by name; ids are stable positions in our list.
const PAYSTACK_BANKS: readonly PaystackBank[] = BANKS.map(paystackBankOf)
  .filter((bank) => bank.cbn !== PAYSTACK_MISSING_BANK_CODE)
  .sort((a, b) => a.name.localeCompare(b.name, 'en'));

const BANK_DATES = { createdAt: '2020-11-24T10:25:07.000Z', updatedAt: '2020-11-24T10:25:07.000Z' };

function bankByCode(code: string): PaystackBank | undefined {
  return PAYSTACK_BANKS.find((bank) => bank.code === code);
}

function bankByCbn(cbn: string): PaystackBank {
  const bank = PAYSTACK_BANKS.find((b) => b.cbn === cbn);
  if (!bank) throw new Error(`stand-in: no bank ${cbn}`);
  return bank;
}

/** A bank as `GET /bank` shows it (sample `dist/api/miscellaneous/bank/response.json` + the description's schema). */
function bankView(bank: PaystackBank, withNip: boolean): Record<string, unknown> {
  return {
    id: bank.id,
    name: bank.name,
    slug: bank.slug,
    code: bank.code,
    longcode: '',
    gateway: null,
    pay_with_bank: false,
    supports_transfer: bank.supports_transfer,
    available_for_direct_debit: false,
    active: true,
    country: 'Nigeria',
    currency: 'NGN',
    type: 'nuban',
    is_deleted: false,
    ...BANK_DATES,
    ...(withNip ? { nip_sort_code: bank.nip_sort_code || null } : {}),
  };
}

/** Banks that host dedicated accounts and Pay with Transfer accounts, by Paystack slug. */
interface AccountBank {
  name: string;
  id: number;
  slug: string;
  /** Our CBN code, to mint valid NUBANs there. */
  cbn: string;
}

function accountBankOf(cbn: string): AccountBank {
  const bank = bankByCbn(cbn);
  return { name: bank.name, id: bank.id, slug: bank.slug, cbn };
}

// Paystack's own bank: "Titan Paystack" (code 100039) in its /bank list, "Paystack-Titan" with the
// same id and slug in its dedicated-account answers (`create-dva.js`).
const TITAN_PAYSTACK: AccountBank = { ...accountBankOf(PAYSTACK_OWN_BANK.cbn), name: 'Paystack-Titan' };

// Providers of `dist/api/dedicated-virtual-account/providers/response.json` plus `titan-paystack` of
// `dist/doc/payments/dedicated-virtual-account/create-dva.js`.
const DVA_BANKS: ReadonlyMap<string, AccountBank> = new Map([
  ['wema-bank', accountBankOf('035')],
  ['access-bank', accountBankOf('044')],
  ['titan-paystack', TITAN_PAYSTACK],
]);

// ---------------------------------------------------------------------------------------------
// Validation against the description
// ---------------------------------------------------------------------------------------------

type JsonType = 'string' | 'integer' | 'boolean' | 'object';

interface Rule {
  type: JsonType | readonly JsonType[];
  required?: boolean;
  enum?: readonly string[];
  pattern?: RegExp;
  minLength?: number;
}

type Rules = Readonly<Record<string, Rule>>;

const CURRENCIES = ['NGN', 'GHS', 'ZAR', 'USD'] as const;

/** `GET /bank` query parameters. */
const BANK_QUERY: Rules = {
  country: { type: 'string', enum: ['ghana', 'kenya', 'nigeria', 'south africa'] },
  currency: { type: 'string', enum: ['GHS', 'KES', 'NGN', 'ZAR'] },
  use_cursor: { type: 'boolean' },
  perPage: { type: 'integer' },
  page: { type: 'integer' },
  next: { type: 'string' },
  previous: { type: 'string' },
  pay_with_bank_transfer: { type: 'boolean' },
  pay_with_bank: { type: 'boolean' },
  enabled_for_verification: { type: 'boolean' },
  gateway: { type: 'string', enum: ['emandate', 'digitalbankmandate'] },
  type: { type: 'string', enum: ['ghipps', 'mobile_money', 'nuban', 'kepss', 'basa'] },
  include_nip_sort_code: { type: 'boolean' },
};

// The description types both as integers but callers send zero-padded digit strings (Paystack's own
// sample: `account_number=0022728151&bank_code=063`); "integer" in a query means all digits here.
// Not marked required in the description, but Paystack's error list has "This endpoint expects that
// you pass a bank_code parameter", so both are required.
const RESOLVE_QUERY: Rules = {
  account_number: { type: 'integer', required: true },
  bank_code: { type: 'integer', required: true },
};

/** `TransferRecipientCreate`. */
const RECIPIENT_BODY: Rules = {
  type: {
    type: 'string',
    required: true,
    enum: ['nuban', 'ghipss', 'mobile_money', 'basa', 'authorization'],
  },
  name: { type: 'string', required: true },
  account_number: { type: 'string', required: true },
  bank_code: { type: 'string', required: true },
  description: { type: 'string' },
  currency: { type: 'string' },
  authorization_code: { type: 'string' },
  metadata: { type: 'object' },
};

/**
 * `TransferInitiate` (= `TransferBase` + source, currency). The reference is "a lowercase
 * alphanumeric string with only -,_ symbols allowed" with `minimum: 16` (meant as a length).
 */
const TRANSFER_BODY: Rules = {
  source: { type: 'string', required: true },
  amount: { type: 'integer', required: true },
  recipient: { type: 'string', required: true },
  reference: { type: 'string', required: true, pattern: /^[a-z0-9_-]+$/, minLength: 16 },
  reason: { type: 'string' },
  currency: { type: 'string', enum: ['NGN', 'ZAR', 'KES', 'GHS'] },
};

/**
 * `ChargeCreate` plus the channel objects of `POST /charge`. `bank_transfer` is not in the
 * description at all: it comes from `dist/doc/payments/payment-methods/pwt.js`. `metadata` is a
 * JSON object, as the newest description (9678dea of PaystackOSS/openapi) types it; its versions
 * disagree (stringified JSON at 01ce756), so the adapter sends none.
 */
const CHARGE_BODY: Rules = {
  email: { type: 'string', required: true },
  amount: { type: 'integer', required: true },
  authorization_code: { type: 'string' },
  pin: { type: 'string' },
  reference: { type: 'string', pattern: /^[A-Za-z0-9.=-]+$/ },
  birthday: { type: 'string' },
  device_id: { type: 'string' },
  metadata: { type: 'object' },
  currency: { type: 'string', enum: CURRENCIES },
  bank: { type: 'object' },
  mobile_money: { type: 'object' },
  ussd: { type: 'object' },
  eft: { type: 'object' },
  bank_transfer: { type: 'object' },
};

const BANK_TRANSFER_BODY: Rules = { account_expires_at: { type: 'string' } };

/** `CustomerCreate`: here `metadata` is a string ("Stringified JSON object of custom data"). */
const CUSTOMER_BODY: Rules = {
  email: { type: 'string', required: true },
  first_name: { type: 'string' },
  last_name: { type: 'string' },
  phone: { type: 'string' },
  metadata: { type: 'string' },
};

/** `DedicatedVirtualAccountCreate`. */
const DVA_BODY: Rules = {
  customer: { type: 'string', required: true },
  preferred_bank: { type: 'string' },
  subaccount: { type: 'string' },
  split_code: { type: 'string' },
};

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typesOf(rule: Rule): readonly JsonType[] {
  return typeof rule.type === 'string' ? [rule.type] : rule.type;
}

function stringProblems(name: string, rule: Rule, value: string): string[] {
  if (rule.enum && !rule.enum.includes(value)) {
    return [`${name} must be one of ${rule.enum.join(', ')} (got ${JSON.stringify(value)})`];
  }
  const problems: string[] = [];
  if (rule.pattern && !rule.pattern.test(value))
    problems.push(`${name} has characters outside ${rule.pattern}`);
  if (rule.minLength !== undefined && value.length < rule.minLength) {
    problems.push(`${name} must have at least ${rule.minLength} characters (got ${value.length})`);
  }
  return problems;
}

function bodyProblems(rules: Rules, body: Record<string, unknown>, prefix = ''): string[] {
  const problems: string[] = [];
  for (const [field, rule] of Object.entries(rules)) {
    const name = `${prefix}${field}`;
    const value = body[field];
    if (value === undefined) {
      if (rule.required) problems.push(`${name} is required`);
      continue;
    }
    const actual = jsonTypeOf(value);
    if (!typesOf(rule).some((type) => type === actual)) {
      problems.push(`${name} must be ${typesOf(rule).join(' or ')} (got ${actual})`);
    } else if (typeof value === 'string') {
      problems.push(...stringProblems(name, rule, value));
    }
  }
  return problems;
}

function queryValueProblem(name: string, rule: Rule, value: string): string | undefined {
  if (typesOf(rule).includes('integer') && !/^\d+$/.test(value))
    return `${name} must be all digits (got ${value})`;
  if (typesOf(rule).includes('boolean') && value !== 'true' && value !== 'false') {
    return `${name} must be true or false (got ${value})`;
  }
  return stringProblems(name, rule, value)[0];
}

function queryProblems(rules: Rules, query: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [name, rule] of Object.entries(rules)) {
    const value = query[name];
    if (value === undefined) {
      if (rule.required) problems.push(`${name} is required`);
      continue;
    }
    const problem = queryValueProblem(name, rule, value);
    if (problem) problems.push(problem);
  }
  return problems;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const INTEGRATION = { id: 463433, is_live: false, business_name: 'NairaPay Test' };

const NAMES = [
  'ADEBAYO OLUWASEUN ADEYEMI',
  'CHIOMA NGOZI OKAFOR',
  'IBRAHIM MUSA ABUBAKAR',
  'FUNMILAYO BLESSING ADEWALE',
  'EMEKA CHUKWUDI NWOSU',
  'AISHA HALIMA BELLO',
  'OLUWATOYIN GRACE BALOGUN',
  'CHINEDU IKECHUKWU EZE',
  'FATIMA ZAINAB USMAN',
  'TUNDE ADEKUNLE OGUNLEYE',
  'NKECHI AMAKA OBI',
  'YUSUF ABDULLAHI SANI',
] as const;

/** A deterministic Nigerian name for an account number, so a test can predict resolution. */
export function standInAccountName(accountNumber: string): string {
  const index = createHash('sha256').update(accountNumber).digest().readUInt32BE(0) % NAMES.length;
  return NAMES[index] ?? NAMES[0];
}

function randomCode(prefix: string, length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  return prefix + Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('');
}

function sign(secretKey: string, body: string): string {
  return createHmac('sha512', secretKey).update(body).digest('hex');
}

/** Paystack's NGN transfer fee in kobo: ₦10 up to ₦5,000, ₦25 up to ₦50,000, ₦50 above. */
function transferFee(amount: number): number {
  if (amount <= 500_000) return 1_000;
  return amount <= 5_000_000 ? 2_500 : 5_000;
}

/** Paystack's local collection fee in kobo: 1.5% (+ ₦100 from ₦2,500), capped at ₦2,000. */
function collectionFee(amount: number): number {
  const fee = Math.round(amount * 0.015) + (amount >= 250_000 ? 10_000 : 0);
  return Math.min(fee, 200_000);
}

function masked(accountNumber: string): { bin: string; last4: string; masked: string } {
  return {
    bin: `${accountNumber.slice(0, 3)}XXX`,
    last4: `X${accountNumber.slice(-3)}`,
    masked: `${'X'.repeat(accountNumber.length - 3)}${accountNumber.slice(-3)}`,
  };
}

function prefixOf(accountNumber: string): string {
  return accountNumber.slice(0, 5);
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  problems?: string[];
}

function ok(message: string, data: unknown, status = 200): Answer {
  return { status, body: { status: true, message, data } };
}

function refused(status: number, message: string, problems: string[] = [], extra = {}): Answer {
  return { status, body: { status: false, message, ...extra }, problems };
}

function invalid(problems: string[]): Answer {
  return refused(400, problems.join('; '), problems, { type: 'validation_error' });
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

interface Customer {
  id: number;
  customer_code: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  metadata: unknown;
  createdAt: string;
  updatedAt: string;
}

interface Recipient {
  id: number;
  recipient_code: string;
  name: string;
  type: string;
  currency: string;
  description: string;
  metadata: unknown;
  account_number: string;
  account_name: string;
  bank: PaystackBank;
  createdAt: string;
  updatedAt: string;
}

interface Transfer {
  id: number;
  request: number;
  reference: string;
  transfer_code: string;
  amount: number;
  currency: string;
  source: string;
  reason: string;
  status: string;
  recipient: Recipient;
  gateway_response: string | null;
  transferred_at: string | null;
  session_id: string;
  createdAt: string;
  updatedAt: string;
}

interface Charge {
  reference: string;
  email: string;
  amount: number;
  account_number: string;
  expiresAt: number;
  account_expires_at: string;
  metadata: unknown;
  created_at: string;
}

interface DedicatedAccount {
  id: number;
  account_number: string;
  account_name: string;
  bank: AccountBank;
  customer_code: string;
  email: string;
  created_at: string;
}

type Handler = (request: ParsedRequest) => Answer | Promise<Answer>;

interface ParsedRequest {
  query: Record<string, string>;
  body: Record<string, unknown>;
  param: string;
  /** Aborted when the caller goes away, so a hanging answer stops waiting. */
  signal: AbortSignal;
}

interface Route {
  pattern: RegExp;
  /** Methods the description documents for the path. */
  documented: readonly string[];
  handlers: Readonly<Record<string, Handler>>;
}

/** How a transfer the stand-in answered `pending` ends, after `settleAfterMs`. */
type Settlement = 'manual' | { status: 'success' | 'failed'; sendWebhook: boolean; reason?: string };

const FAILED_CREDIT = 'Could not credit account';
const SETTLE_NORMALLY: Settlement = { status: 'success', sendWebhook: true };

/** Settlements by the first five digits of the recipient's account number. */
const SETTLEMENTS: Readonly<Record<string, Settlement>> = {
  [PAYSTACK_ACCOUNT_PREFIXES.staysPending]: 'manual',
  [PAYSTACK_ACCOUNT_PREFIXES.failsWithWebhook]: {
    status: 'failed',
    sendWebhook: true,
    reason: FAILED_CREDIT,
  },
  [PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently]: { status: 'success', sendWebhook: false },
  [PAYSTACK_ACCOUNT_PREFIXES.failsSilently]: { status: 'failed', sendWebhook: false, reason: FAILED_CREDIT },
};

const MAX_BODY_BYTES = 1_000_000;
const DEFAULT_CHARGE_LIFETIME_MS = 30 * 60_000;

class StandIn implements PaystackStandIn {
  url = '';
  readonly secretKey: string;
  readonly requests: RecordedRequest[] = [];
  readonly deliveries: EventDelivery[] = [];
  readonly charges = new Map<string, Charge>();
  readonly dedicatedAccounts = new Map<string, DedicatedAccount>();
  lastEvent: PaystackEvent | undefined;

  private webhookUrl: string | undefined;
  private readonly settleAfterMs: number;
  private readonly hangMs: number;
  private readonly reuseAccountNumbers: boolean;
  private readonly reusedReferenceAnswer: { status: number; message: string } | undefined;
  private readonly chargeBank: NonNullable<PaystackStandInOptions['chargeBank']>;
  private readonly recipientsByAccountOnly: boolean;
  private readonly unknownRecipientCode: string;
  private readonly bankPagesWithoutMeta: number | undefined;
  private readonly bankPagesNumbered: number | undefined;
  private readonly server: Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly hanging = new Set<AbortController>();
  private readonly customers = new Map<string, Customer>();
  private readonly recipients = new Map<string, Recipient>();
  private readonly transfers = new Map<string, Transfer>();
  /** References of `slowToCreate` transfers still being made. */
  private readonly making = new Set<string>();
  private readonly chargeReferences = new Set<string>();
  private nextId = 3_104_021_987;
  private nextSerial = 0;
  private readonly routes: readonly Route[];

  constructor(options: PaystackStandInOptions) {
    this.secretKey = options.secretKey ?? DEFAULT_PAYSTACK_SECRET_KEY;
    this.webhookUrl = options.webhookUrl;
    this.settleAfterMs = options.settleAfterMs ?? 200;
    this.hangMs = options.hangMs ?? 3000;
    this.reuseAccountNumbers = options.reuseAccountNumbers ?? true;
    this.reusedReferenceAnswer = options.reusedReferenceAnswer;
    this.recipientsByAccountOnly = options.recipientsByAccountOnly ?? false;
    this.unknownRecipientCode = options.unknownRecipientCode ?? 'invalid_transfer_recipient';
    this.bankPagesWithoutMeta = options.bankPagesWithoutMeta;
    this.bankPagesNumbered = options.bankPagesNumbered;
    this.chargeBank = options.chargeBank ?? {
      slug: TITAN_PAYSTACK.slug,
      name: TITAN_PAYSTACK.name,
      id: TITAN_PAYSTACK.id,
    };
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => this.crash(res, error));
    });
    this.routes = [
      { pattern: /^\/bank$/, documented: ['GET'], handlers: { GET: (r) => this.listBanks(r) } },
      { pattern: /^\/bank\/resolve$/, documented: ['GET'], handlers: { GET: (r) => this.resolve(r) } },
      {
        pattern: /^\/transferrecipient$/,
        documented: ['POST', 'GET'],
        handlers: { POST: (r) => this.createRecipient(r) },
      },
      {
        pattern: /^\/transfer$/,
        documented: ['POST', 'GET'],
        handlers: { POST: (r) => this.initiateTransfer(r) },
      },
      {
        pattern: /^\/transfer\/verify\/([^/]+)$/,
        documented: ['GET'],
        handlers: { GET: (r) => this.verifyTransfer(r) },
      },
      { pattern: /^\/charge$/, documented: ['POST'], handlers: { POST: (r) => this.createCharge(r) } },
      {
        pattern: /^\/customer$/,
        documented: ['POST', 'GET'],
        handlers: { POST: (r) => this.createCustomer(r) },
      },
      {
        pattern: /^\/dedicated_account$/,
        documented: ['POST', 'GET'],
        handlers: { POST: (r) => this.createDedicatedAccount(r) },
      },
    ];
  }

  listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        const { port: bound } = this.server.address() as AddressInfo;
        this.url = `http://127.0.0.1:${bound}`;
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const hang of this.hanging) hang.abort();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  setWebhookUrl(url: string): void {
    this.webhookUrl = url;
  }

  // -------------------------------------------------------------------------------------------
  // HTTP plumbing
  // -------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: undefined,
      status: 0,
      problems: [],
    };
    this.requests.push(record);
    const raw = await readBody(req);
    if (raw.length > 0) record.body = parseJson(raw) ?? raw;
    const answer = await this.answer(req, res, record, raw);
    this.reply(res, record, answer);
  }

  private async answer(req: IncomingMessage, res: ServerResponse, record: RecordedRequest, raw: string) {
    // Paystack checks the key before anything else (description: every operation answers 401).
    if (req.headers.authorization !== `Bearer ${this.secretKey}`) {
      return refused(401, 'Invalid key', ['Authorization is not "Bearer <secret key>"']);
    }
    const found = this.route(record.method, record.path);
    if ('answer' in found) return found.answer;
    const body = record.method === 'GET' ? {} : postBody(req, raw);
    if (Array.isArray(body)) return invalid(body);
    const controller = new AbortController();
    res.once('close', () => controller.abort());
    return found.handler({ query: record.query, body, param: found.param, signal: controller.signal });
  }

  private route(method: string, path: string): { handler: Handler; param: string } | { answer: Answer } {
    for (const route of this.routes) {
      const match = route.pattern.exec(path);
      if (!match) continue;
      const handler = route.handlers[method];
      if (handler) return { handler, param: decodeURIComponent(match[1] ?? '') };
      if (route.documented.includes(method)) {
        return { answer: refused(501, `The stand-in does not implement ${method} ${path}`) };
      }
      return { answer: refused(404, 'Entity not found', [`${method} is not documented for ${path}`]) };
    }
    return { answer: refused(404, 'Entity not found', [`${path} is not an operation of the description`]) };
  }

  private reply(res: ServerResponse, record: RecordedRequest, answer: Answer): void {
    if (res.destroyed || res.writableEnded) return;
    record.status = answer.status;
    record.problems = answer.problems ?? [];
    const text = JSON.stringify(answer.body);
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(text);
  }

  private crash(res: ServerResponse, error: unknown): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ status: false, message: `stand-in error: ${String(error)}` }));
  }

  private id(): number {
    this.nextId += 1;
    return this.nextId;
  }

  private later(ms: number, work: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void work();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  // -------------------------------------------------------------------------------------------
  // GET /bank, GET /bank/resolve
  // -------------------------------------------------------------------------------------------

  private listBanks({ query }: ParsedRequest): Answer {
    const problems = queryProblems(BANK_QUERY, query);
    if (problems.length > 0) return invalid(problems);
    // Only Nigerian banks are held: a filter for another country or currency finds none.
    const nigerian =
      (query.currency ?? 'NGN') === 'NGN' &&
      (query.country ?? 'nigeria') === 'nigeria' &&
      (query.type ?? 'nuban') === 'nuban';
    const all = nigerian ? PAYSTACK_BANKS : [];
    const capped = this.bankPagesWithoutMeta ?? this.bankPagesNumbered;
    if (capped !== undefined) {
      const pageNumber = Number(query.page ?? 1);
      const start = (pageNumber - 1) * capped;
      const data = all
        .slice(start, start + capped)
        .map((bank) => bankView(bank, query.include_nip_sort_code === 'true'));
      if (this.bankPagesWithoutMeta !== undefined) {
        return { status: 200, body: { status: true, message: 'Banks retrieved', data } };
      }
      const meta = {
        total: all.length,
        skipped: start,
        perPage: capped,
        page: pageNumber,
        pageCount: Math.ceil(all.length / capped),
      };
      return { status: 200, body: { status: true, message: 'Banks retrieved', data, meta } };
    }
    const perPage = query.perPage ? Number(query.perPage) : all.length;
    const start = startOf(query, perPage);
    const page = all.slice(start, start + perPage);
    const data = page.map((bank) => bankView(bank, query.include_nip_sort_code === 'true'));
    const end = start + page.length;
    const meta = {
      next: end < all.length ? cursor(end) : null,
      previous: start > 0 ? cursor(start) : null,
      perPage,
    };
    return { status: 200, body: { status: true, message: 'Banks retrieved', data, meta } };
  }

  private async resolve({ query, signal }: ParsedRequest): Promise<Answer> {
    const problems = queryProblems(RESOLVE_QUERY, query);
    if (problems.length > 0) return invalid(problems);
    const accountNumber = query.account_number ?? '';
    const bank = bankByCode(query.bank_code ?? '');
    // Not documented; Paystack is seen answering 422 for a code it does not know.
    if (!bank) return refused(422, `Unknown bank code: ${query.bank_code}`);
    if (prefixOf(accountNumber) === PAYSTACK_ACCOUNT_PREFIXES.resolveHangs) return this.hang(signal);
    if (accountNumber.length !== 10 || prefixOf(accountNumber) === PAYSTACK_ACCOUNT_PREFIXES.unresolvable) {
      return refused(422, 'Could not resolve account name. Check parameters or try again.');
    }
    const data = {
      account_number: accountNumber,
      account_name: standInAccountName(accountNumber),
      bank_id: bank.id,
    };
    return ok('Account number resolved', data);
  }

  private hang(signal: AbortSignal): Promise<Answer> {
    const controller = new AbortController();
    this.hanging.add(controller);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.hanging.delete(controller);
        resolve(refused(504, 'Gateway Timeout'));
      };
      const timer = setTimeout(done, this.hangMs);
      signal.addEventListener('abort', done, { once: true });
      controller.signal.addEventListener('abort', done, { once: true });
    });
  }

  // -------------------------------------------------------------------------------------------
  // POST /transferrecipient, POST /transfer, GET /transfer/verify/{reference}
  // -------------------------------------------------------------------------------------------

  private createRecipient({ body }: ParsedRequest): Answer {
    const problems = bodyProblems(RECIPIENT_BODY, body);
    if (problems.length > 0) return invalid(problems);
    const fields = body as { type: string; name: string; account_number: string; bank_code: string };
    if (fields.type !== 'nuban') {
      return refused(400, `The stand-in only holds nuban recipients (got ${fields.type})`);
    }
    const bank = bankByCode(fields.bank_code);
    if (!bank) return refused(400, `Unknown bank code: ${fields.bank_code}`);
    // Not documented: which call refuses a bank without transfers. Refusing the recipient is earliest.
    if (!bank.supports_transfer) return refused(400, `Transfers to ${bank.name} are not supported`);
    // Description: "A duplicate account number will lead to the retrieval of the existing record."
    const key = `${bank.code}:${fields.account_number}`;
    const sameNumber = this.recipientsByAccountOnly
      ? [...this.recipients.values()].find((r) => r.account_number === fields.account_number)
      : undefined;
    const recipient = sameNumber ?? this.recipients.get(key) ?? this.newRecipient(key, body, bank);
    return ok('Transfer recipient created successfully', recipientView(recipient, 'answer'), 201);
  }

  private newRecipient(key: string, body: Record<string, unknown>, bank: PaystackBank): Recipient {
    const now = new Date().toISOString();
    const accountNumber = String(body.account_number);
    const recipient: Recipient = {
      id: this.id(),
      recipient_code: randomCode('RCP_', 15),
      name: String(body.name),
      type: 'nuban',
      currency: typeof body.currency === 'string' ? body.currency : 'NGN',
      description: typeof body.description === 'string' ? body.description : '',
      metadata: body.metadata ?? null,
      account_number: accountNumber,
      account_name: standInAccountName(accountNumber),
      bank,
      createdAt: now,
      updatedAt: now,
    };
    this.recipients.set(key, recipient);
    return recipient;
  }

  private recipientByCode(code: string): Recipient | undefined {
    return [...this.recipients.values()].find((recipient) => recipient.recipient_code === code);
  }

  forgetRecipients(): void {
    this.recipients.clear();
  }

  private initiateTransfer({ body, signal }: ParsedRequest): Answer | Promise<Answer> {
    const problems = bodyProblems(TRANSFER_BODY, body);
    if (problems.length > 0) return invalid(problems);
    const fields = body as { source: string; amount: number; recipient: string; reference: string };
    if (fields.source !== 'balance') {
      return refused(400, 'Invalid transfer source', [`source must be balance (got ${fields.source})`]);
    }
    if (fields.amount <= 0) return refused(400, 'Invalid amount', ['amount must be positive']);
    const recipient = this.recipientByCode(fields.recipient);
    if (!recipient) return invalidRecipient(this.unknownRecipientCode);
    // A reused reference is an error and never a second transfer (Paystack's transfer error list:
    // "This reference has already been used on a prior transfer").
    if (this.transfers.has(fields.reference)) {
      const reused = this.reusedReferenceAnswer;
      return reused ? refused(reused.status, reused.message) : duplicateReference();
    }
    if (this.making.has(fields.reference))
      return refused(400, 'Transfer could not be processed at this time');
    return this.queueTransfer(body, recipient, signal);
  }

  private queueTransfer(
    body: Record<string, unknown>,
    recipient: Recipient,
    signal: AbortSignal,
  ): Answer | Promise<Answer> {
    const prefix = prefixOf(recipient.account_number);
    if (prefix === PAYSTACK_ACCOUNT_PREFIXES.insufficientBalance) {
      return refused(400, 'Your balance is not enough to fulfil this request');
    }
    if (prefix === PAYSTACK_ACCOUNT_PREFIXES.serverError) {
      return refused(500, 'An error occurred while processing this request. Please try again later.');
    }
    if (prefix === PAYSTACK_ACCOUNT_PREFIXES.slowToCreate) {
      const reference = String(body.reference);
      this.making.add(reference);
      this.later(2 * this.hangMs, async () => {
        this.making.delete(reference);
        this.scheduleSettlement(this.newTransfer(body, recipient));
      });
      return this.hang(signal);
    }
    const transfer = this.newTransfer(body, recipient);
    this.scheduleSettlement(transfer);
    if (prefix === PAYSTACK_ACCOUNT_PREFIXES.answerLost) return this.hang(signal);
    return ok('Transfer has been queued', transferCreatedView(transfer));
  }

  private newTransfer(body: Record<string, unknown>, recipient: Recipient): Transfer {
    const now = new Date().toISOString();
    const transfer: Transfer = {
      id: this.id(),
      request: this.id(),
      reference: String(body.reference),
      transfer_code: randomCode('TRF_', 16),
      amount: Number(body.amount),
      currency: typeof body.currency === 'string' ? body.currency : 'NGN',
      source: 'balance',
      reason: typeof body.reason === 'string' ? body.reason : '',
      status: 'pending',
      recipient,
      gateway_response: null,
      transferred_at: null,
      session_id: `1000${Date.now()}${String(this.nextId).slice(-8)}`,
      createdAt: now,
      updatedAt: now,
    };
    this.transfers.set(transfer.reference, transfer);
    return transfer;
  }

  private scheduleSettlement(transfer: Transfer): void {
    const plan = SETTLEMENTS[prefixOf(transfer.recipient.account_number)] ?? SETTLE_NORMALLY;
    if (plan === 'manual') return;
    const { status, sendWebhook, reason } = plan;
    this.later(this.settleAfterMs, () =>
      this.settleTransfer(transfer.reference, status, { sendWebhook, reason }),
    );
  }

  private verifyTransfer({ param }: ParsedRequest): Answer {
    const transfer = this.transfers.get(param);
    if (!transfer) return refused(404, 'Transfer not found');
    return ok('Transfer retrieved', transferVerifyView(transfer));
  }

  transfer(reference: string) {
    const transfer = this.transfers.get(reference);
    if (!transfer) return undefined;
    const { status, amount, transfer_code } = transfer;
    return { status, amount, transfer_code, recipient_code: transfer.recipient.recipient_code };
  }

  async settleTransfer(
    reference: string,
    status: 'success' | 'failed' | 'reversed',
    options: { sendWebhook?: boolean; reason?: string } = {},
  ): Promise<void> {
    const transfer = this.transfers.get(reference);
    if (!transfer) throw new Error(`stand-in: no transfer ${reference}`);
    const now = new Date().toISOString();
    transfer.status = status;
    transfer.updatedAt = now;
    if (status === 'success') transfer.transferred_at = now;
    if (status !== 'success') transfer.gateway_response = options.reason ?? FAILED_CREDIT;
    if (options.sendWebhook ?? true) await this.deliver(transferEvent(transfer));
  }

  // -------------------------------------------------------------------------------------------
  // POST /charge (Pay with Transfer)
  // -------------------------------------------------------------------------------------------

  private createCharge({ body }: ParsedRequest): Answer {
    const problems = chargeProblems(body);
    if (problems.length > 0) return invalid(problems);
    const fields = body as { email: string; amount: number; reference?: string };
    if (!isRecord(body.bank_transfer)) {
      return refused(400, 'The stand-in only takes Pay with Transfer charges (bank_transfer)');
    }
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(fields.email)) return refused(400, 'Invalid Email Address Passed');
    // Paystack's transaction errors: "The minimum amount for Pay with Transfers transactions is NGN 100".
    if (fields.amount < 10_000) return refused(400, 'The minimum amount for Pay with Transfer is NGN 100');
    if (fields.reference !== undefined && this.chargeReferences.has(fields.reference)) {
      return duplicateTransactionReference();
    }
    const charge = this.newCharge(body, body.bank_transfer);
    return ok('Charge attempted', chargeView(charge, this.chargeBank));
  }

  private newCharge(body: Record<string, unknown>, bankTransfer: Record<string, unknown>): Charge {
    const requested =
      typeof bankTransfer.account_expires_at === 'string' ? bankTransfer.account_expires_at : undefined;
    const expiresAt = requested ? Date.parse(requested) : Date.now() + DEFAULT_CHARGE_LIFETIME_MS;
    const reference = typeof body.reference === 'string' ? body.reference : randomCode('', 10);
    const charge: Charge = {
      reference,
      email: String(body.email),
      amount: Number(body.amount),
      account_number: this.chargeAccountNumber(),
      expiresAt,
      account_expires_at: requested ?? new Date(expiresAt).toISOString(),
      metadata: body.metadata,
      created_at: new Date().toISOString(),
    };
    this.chargeReferences.add(reference);
    this.charges.set(reference, charge);
    this.customerFor(charge.email);
    return charge;
  }

  /**
   * Paystack hands out the account numbers of expired charges again: the number of the most
   * recently expired charge whose number no live charge holds, else a fresh one.
   */
  private chargeAccountNumber(): string {
    const now = Date.now();
    const charges = [...this.charges.values()];
    const held = new Set(
      charges.filter((charge) => charge.expiresAt > now).map((charge) => charge.account_number),
    );
    const expired = charges
      .filter((charge) => charge.expiresAt <= now && !held.has(charge.account_number))
      .sort((a, b) => b.expiresAt - a.expiresAt);
    const reusable = expired[0];
    if (this.reuseAccountNumbers && reusable) return reusable.account_number;
    return this.freshAccountNumber('126', TITAN_PAYSTACK.cbn);
  }

  private freshAccountNumber(lead: string, cbn: string): string {
    this.nextSerial += 1;
    return toNuban(cbn, `${lead}${String(this.nextSerial).padStart(6, '0')}`);
  }

  async payCharge(chargeReference: string, amount: number, options: { sendWebhook?: boolean } = {}) {
    const charge = this.charges.get(chargeReference);
    if (!charge) throw new Error(`stand-in: no charge ${chargeReference}`);
    const id = this.id();
    const event: PaystackEvent = {
      event: 'charge.success',
      data: this.chargeSuccess(id, amount, charge.reference, this.customerFor(charge.email), {
        requested_amount: charge.amount,
        created_at: charge.created_at,
        metadata: eventMetadata(charge.metadata),
        authorization: pwtAuthorization(charge.account_number),
      }),
    };
    // Kept even when not sent, so a test can deliver it later with `sendEvent`.
    this.lastEvent = event;
    if (options.sendWebhook ?? true) await this.deliver(event);
    return { id, event };
  }

  async rejectCharge(chargeReference: string, amount: number) {
    const charge = this.charges.get(chargeReference);
    if (!charge) throw new Error(`stand-in: no charge ${chargeReference}`);
    // Shape of `bank_transfer_rejected` in pwt-events.js: no charge reference, amount as a string.
    const event: PaystackEvent = {
      event: 'bank.transfer.rejected',
      data: {
        bank_transfer: {
          amount: String(amount),
          message: 'incorrect amount sent',
          message_type: 'INCORRECT_AMOUNT',
          transaction_id: String(this.id()),
        },
        customer: customerView(this.customerFor(charge.email)),
      },
    };
    await this.deliver(event);
    return { event };
  }

  // -------------------------------------------------------------------------------------------
  // POST /customer, POST /dedicated_account
  // -------------------------------------------------------------------------------------------

  private createCustomer({ body }: ParsedRequest): Answer {
    const problems = bodyProblems(CUSTOMER_BODY, body);
    if (problems.length > 0) return invalid(problems);
    const customer = this.customerFor(String(body.email));
    fillCustomer(customer, body);
    return ok('Customer created', {
      ...customerView(customer),
      transactions: [],
      subscriptions: [],
      authorizations: [],
    });
  }

  private customerFor(email: string): Customer {
    const key = email.toLowerCase();
    const known = this.customers.get(key);
    if (known) return known;
    const now = new Date().toISOString();
    const customer: Customer = {
      id: this.id(),
      customer_code: randomCode('CUS_', 15),
      email,
      first_name: null,
      last_name: null,
      phone: null,
      metadata: null,
      createdAt: now,
      updatedAt: now,
    };
    this.customers.set(key, customer);
    return customer;
  }

  private createDedicatedAccount({ body }: ParsedRequest): Answer {
    const problems = bodyProblems(DVA_BODY, body);
    if (problems.length > 0) return invalid(problems);
    const customer = [...this.customers.values()].find((c) => c.customer_code === body.customer);
    if (!customer) return refused(404, 'Customer not found');
    const bank = DVA_BANKS.get(typeof body.preferred_bank === 'string' ? body.preferred_bank : 'wema-bank');
    if (!bank) return refused(400, `Preferred bank ${String(body.preferred_bank)} is not available`);
    const existing = [...this.dedicatedAccounts.values()].find(
      (a) => a.customer_code === customer.customer_code,
    );
    const account = existing ?? this.newDedicatedAccount(customer, bank);
    return ok('NUBAN successfully created', dedicatedAccountView(account, customer));
  }

  private newDedicatedAccount(customer: Customer, bank: AccountBank): DedicatedAccount {
    const holder =
      [customer.first_name, customer.last_name].filter(Boolean).join(' ') || customer.email.split('@')[0];
    const account: DedicatedAccount = {
      id: this.id(),
      account_number: this.freshAccountNumber('993', bank.cbn),
      account_name: `${INTEGRATION.business_name.toUpperCase()} / ${String(holder).toUpperCase()}`,
      bank,
      customer_code: customer.customer_code,
      email: customer.email,
      created_at: new Date().toISOString(),
    };
    this.dedicatedAccounts.set(account.account_number, account);
    return account;
  }

  async payDedicatedAccount(accountNumber: string, amount: number) {
    const account = this.dedicatedAccounts.get(accountNumber);
    if (!account) throw new Error(`stand-in: no dedicated account ${accountNumber}`);
    const id = this.id();
    const customer = this.customerFor(account.email);
    // Paystack names the reference of a payment into a dedicated account; nothing we sent.
    const event: PaystackEvent = {
      event: 'charge.success',
      data: this.chargeSuccess(id, amount, randomCode('', 16), customer, {
        channel: 'dedicated_nuban',
        requested_amount: amount,
        created_at: new Date().toISOString(),
        metadata: '',
        authorization: dvaAuthorization(account),
        source: null,
      }),
    };
    await this.deliver(event);
    return { id, event };
  }

  /** `charge.success` data as in `pwt-events.js` (`charge_successful`); `overrides` set what differs. */
  private chargeSuccess(
    id: number,
    amount: number,
    reference: string,
    customer: Customer,
    overrides: Record<string, unknown>,
  ): Record<string, unknown> {
    const paidAt = new Date().toISOString();
    return {
      id,
      domain: 'test',
      status: 'success',
      reference,
      amount,
      message: null,
      gateway_response: 'Approved',
      paid_at: paidAt,
      channel: 'bank_transfer',
      currency: 'NGN',
      ip_address: '41.58.96.120',
      fees_breakdown: null,
      log: null,
      fees: collectionFee(amount),
      fees_split: null,
      customer: { ...eventCustomer(customer), international_format_phone: null },
      plan: {},
      subaccount: {},
      split: {},
      order_id: null,
      paidAt,
      pos_transaction_data: null,
      source: { type: 'api', source: 'merchant_api', entry_point: 'charge', identifier: null },
      ...overrides,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Events
  // -------------------------------------------------------------------------------------------

  async sendEvent(
    event: PaystackEvent,
    options: { signature?: string; rawBody?: string; contentType?: string } = {},
  ) {
    if (!this.webhookUrl) throw new Error('stand-in: no webhook URL set');
    const body = options.rawBody ?? JSON.stringify(event);
    const response = await fetch(this.webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': options.contentType ?? 'application/json',
        'x-paystack-signature': options.signature ?? sign(this.secretKey, body),
      },
      body,
    });
    return { status: response.status, body: await response.text() };
  }

  /** Sends an event the stand-in raises on its own; a failed delivery is recorded, never thrown. */
  private async deliver(event: PaystackEvent): Promise<void> {
    this.lastEvent = event;
    const delivery: EventDelivery = { event };
    this.deliveries.push(delivery);
    try {
      delivery.status = (await this.sendEvent(event)).status;
    } catch (error) {
      delivery.error = error instanceof Error ? error.message : String(error);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Request parsing
// ---------------------------------------------------------------------------------------------

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The JSON object of a POST, or the problems that stop it being one. */
function postBody(req: IncomingMessage, raw: string): Record<string, unknown> | string[] {
  // The description also allows form bodies; the stand-in takes JSON only, as the payments code sends.
  if (!(req.headers['content-type'] ?? '').includes('application/json')) {
    return ['Content-Type must be application/json'];
  }
  const parsed = parseJson(raw);
  if (parsed === undefined) return ['body is not JSON'];
  if (!isRecord(parsed)) return [`body must be a JSON object (got ${jsonTypeOf(parsed)})`];
  return parsed;
}

function chargeProblems(body: Record<string, unknown>): string[] {
  const problems = bodyProblems(CHARGE_BODY, body);
  if (isRecord(body.bank_transfer)) {
    problems.push(...bodyProblems(BANK_TRANSFER_BODY, body.bank_transfer, 'bank_transfer.'));
    const expires = body.bank_transfer.account_expires_at;
    if (typeof expires === 'string' && Number.isNaN(Date.parse(expires))) {
      problems.push('bank_transfer.account_expires_at must be a date-time');
    }
  }
  return problems;
}

function cursor(position: number): string {
  return Buffer.from(`bank:${position}`).toString('base64');
}

function startOf(query: Record<string, string>, perPage: number): number {
  const fromCursor = query.next ?? query.previous;
  if (fromCursor) {
    const position = Number(
      Buffer.from(fromCursor, 'base64')
        .toString('utf8')
        .replace(/^bank:/, ''),
    );
    return Number.isInteger(position) && position >= 0 ? position : 0;
  }
  return query.page ? (Number(query.page) - 1) * perPage : 0;
}

// ---------------------------------------------------------------------------------------------
// Answers and events, shaped as Paystack's samples
// ---------------------------------------------------------------------------------------------

/** 400 of `dist/api/transfers/initiate/response.json` (`code`: the sample's, or another). */
function invalidRecipient(code: string): Answer {
  return refused(400, 'Recipient specified is invalid', [], {
    meta: {
      nextStep: 'Provide a valid recipient. Ensure you are passing the recipient code in the recipient param',
    },
    type: 'validation_error',
    code,
  });
}

// The wire text of a reused transfer reference is not published; this mirrors the description's
// "Duplicate Transaction Reference" error and the remedy Paystack's transfer error list gives.
function duplicateReference(): Answer {
  return refused(400, 'Duplicate Transfer Reference', [], {
    meta: { nextStep: 'Create a new reference for the new transfer' },
    type: 'validation_error',
    code: 'duplicate_reference',
  });
}

/** The description's `TransactionInitializeBadRequestModel` example. */
function duplicateTransactionReference(): Answer {
  return refused(400, 'Duplicate Transaction Reference', [], {
    meta: { nextStep: 'Try and create the Transaction or Charge with a new reference' },
    type: 'validation_error',
    code: 'duplicate_reference',
    errorCodeMappingNotFound: false,
  });
}

function recipientDetails(recipient: Recipient): Record<string, unknown> {
  return {
    authorization_code: null,
    account_number: recipient.account_number,
    account_name: recipient.account_name,
    bank_code: recipient.bank.code,
    bank_name: recipient.bank.name,
  };
}

/**
 * A recipient as answers show it (`createdAt`, `isDeleted`), as `transfer.success` shows it
 * (`createdAt`, no `isDeleted`), or as `transfer.failed` / `transfer.reversed` show it
 * (`created_at`): Paystack's samples differ.
 */
function recipientView(recipient: Recipient, style: 'answer' | 'success' | 'snake'): Record<string, unknown> {
  const common = {
    active: true,
    currency: recipient.currency,
    description: recipient.description,
    domain: 'test',
    email: null,
    id: recipient.id,
    integration: INTEGRATION.id,
    metadata: recipient.metadata,
    name: recipient.name,
    recipient_code: recipient.recipient_code,
    type: recipient.type,
    is_deleted: false,
    details: recipientDetails(recipient),
  };
  if (style === 'snake')
    return { ...common, created_at: recipient.createdAt, updated_at: recipient.updatedAt };
  const dates = { createdAt: recipient.createdAt, updatedAt: recipient.updatedAt };
  return style === 'answer' ? { ...common, isDeleted: false, ...dates } : { ...common, ...dates };
}

function session(transfer: Transfer): Record<string, unknown> {
  return transfer.status === 'pending'
    ? { provider: null, id: null }
    : { provider: 'nip', id: transfer.session_id };
}

/** `data` of `dist/api/transfers/initiate/response.json`: `recipient` is the recipient's id. */
function transferCreatedView(transfer: Transfer): Record<string, unknown> {
  return {
    transfersessionid: [],
    transfertrials: [],
    domain: 'test',
    amount: transfer.amount,
    currency: transfer.currency,
    reference: transfer.reference,
    source: transfer.source,
    source_details: null,
    reason: transfer.reason,
    status: transfer.status,
    failures: null,
    transfer_code: transfer.transfer_code,
    titan_code: null,
    transferred_at: transfer.transferred_at,
    id: transfer.id,
    integration: INTEGRATION.id,
    request: transfer.request,
    recipient: transfer.recipient.id,
    createdAt: transfer.createdAt,
    updatedAt: transfer.updatedAt,
  };
}

/** `data` of `dist/api/transfers/verify/response.json`: `recipient` is the whole recipient. */
function transferVerifyView(transfer: Transfer): Record<string, unknown> {
  return {
    amount: transfer.amount,
    createdAt: transfer.createdAt,
    currency: transfer.currency,
    domain: 'test',
    failures: null,
    id: transfer.id,
    integration: INTEGRATION.id,
    reason: transfer.reason,
    reference: transfer.reference,
    source: transfer.source,
    source_details: null,
    status: transfer.status,
    titan_code: null,
    transfer_code: transfer.transfer_code,
    request: transfer.request,
    transferred_at: transfer.transferred_at,
    updatedAt: transfer.updatedAt,
    recipient: recipientView(transfer.recipient, 'answer'),
    session: session(transfer),
    fee_charged: transferFee(transfer.amount),
    fees_breakdown: null,
    gateway_response: transfer.gateway_response,
  };
}

/**
 * `transfer.success` / `transfer.failed` / `transfer.reversed` as in `webhooks/events.js`. The
 * samples carry no failure text (`failures` is null); the stand-in adds it as `gateway_response`,
 * the field the verify answer has for it.
 */
function transferEvent(transfer: Transfer): PaystackEvent {
  const common = {
    amount: transfer.amount,
    currency: transfer.currency,
    domain: 'test',
    failures: null,
    id: transfer.id,
    integration: INTEGRATION,
    reason: transfer.reason,
    reference: transfer.reference,
    source: transfer.source,
    source_details: null,
    status: transfer.status,
    titan_code: null,
    transfer_code: transfer.transfer_code,
    transferred_at: transfer.transferred_at,
    session: session(transfer),
    gateway_response: transfer.gateway_response,
  };
  if (transfer.status === 'success') {
    return {
      event: 'transfer.success',
      data: {
        ...common,
        createdAt: transfer.createdAt,
        updatedAt: transfer.updatedAt,
        recipient: recipientView(transfer.recipient, 'success'),
        fee_charged: transferFee(transfer.amount),
      },
    };
  }
  return {
    event: `transfer.${transfer.status}`,
    data: {
      ...common,
      recipient: recipientView(transfer.recipient, 'snake'),
      created_at: transfer.createdAt,
      updated_at: transfer.updatedAt,
    },
  };
}

/** `data` of the Pay with Transfer answer in `pwt.js`. */
function chargeView(charge: Charge, bank: Record<string, unknown>): Record<string, unknown> {
  return {
    reference: charge.reference,
    status: 'pending_bank_transfer',
    display_text: 'Please make a transfer to the account specified',
    account_name: 'TEST-MANAGED-ACCOUNT',
    account_number: charge.account_number,
    bank,
    account_expires_at: charge.account_expires_at,
  };
}

/** Metadata as events carry it: the object sent (parsed when sent stringified), `""` when none. */
function eventMetadata(metadata: unknown): unknown {
  if (typeof metadata === 'string') return parseJson(metadata) ?? metadata;
  return metadata ?? '';
}

const SENDER = { name: 'JADESOLA OLUWASHINA', account: '0123456553' };

/** `authorization` of `charge_successful` in `pwt-events.js`: no receiver fields there. */
function pwtAuthorization(accountNumber: string): Record<string, unknown> {
  const sender = masked(SENDER.account);
  return {
    authorization_code: randomCode('AUTH_', 10),
    bin: sender.bin,
    last4: sender.last4,
    exp_month: String(new Date().getUTCMonth() + 1).padStart(2, '0'),
    exp_year: String(new Date().getUTCFullYear()),
    channel: 'bank_transfer',
    card_type: 'transfer',
    bank: null,
    country_code: 'NG',
    brand: 'Managed Account',
    reusable: false,
    signature: null,
    account_name: null,
    sender_country: 'NG',
    sender_bank: null,
    sender_bank_account_number: sender.masked,
    sender_name: SENDER.name,
    narration: `Transfer to ${accountNumber}`,
  };
}

/** `authorization` of `dedicated-virtual-account/event-snippet.js`: the receiving account is here. */
function dvaAuthorization(account: DedicatedAccount): Record<string, unknown> {
  const sender = masked(SENDER.account);
  const senderBank = bankByCbn('214').name;
  return {
    authorization_code: randomCode('AUTH_', 10),
    bin: sender.bin,
    last4: sender.last4,
    exp_month: String(new Date().getUTCMonth() + 1).padStart(2, '0'),
    exp_year: String(new Date().getUTCFullYear()),
    channel: 'dedicated_nuban',
    card_type: 'transfer',
    bank: senderBank,
    country_code: 'NG',
    brand: 'Managed Account',
    reusable: false,
    signature: null,
    sender_bank: senderBank,
    sender_bank_account_number: sender.masked,
    sender_country: 'NG',
    sender_name: SENDER.name,
    narration: `NIP: ${SENDER.name} -${SENDER.account}/${account.account_number}`,
    receiver_bank_account_number: account.account_number,
    receiver_bank: account.bank.name,
  };
}

function eventCustomer(customer: Customer): Record<string, unknown> {
  return {
    id: customer.id,
    first_name: customer.first_name,
    last_name: customer.last_name,
    email: customer.email,
    customer_code: customer.customer_code,
    phone: customer.phone,
    metadata: customer.metadata,
    risk_action: 'default',
  };
}

/** A customer as `POST /customer` and `bank.transfer.rejected` show it. */
function customerView(customer: Customer): Record<string, unknown> {
  return {
    ...eventCustomer(customer),
    domain: 'test',
    integration: INTEGRATION.id,
    identified: false,
    identifications: null,
    createdAt: customer.createdAt,
    updatedAt: customer.updatedAt,
  };
}

function fillCustomer(customer: Customer, body: Record<string, unknown>): void {
  if (typeof body.first_name === 'string') customer.first_name = body.first_name;
  if (typeof body.last_name === 'string') customer.last_name = body.last_name;
  if (typeof body.phone === 'string') customer.phone = body.phone;
  if (typeof body.metadata === 'string') customer.metadata = parseJson(body.metadata) ?? null;
  customer.updatedAt = new Date().toISOString();
}

/** `data` of `dist/api/dedicated-virtual-account/create/response.json`. */
function dedicatedAccountView(account: DedicatedAccount, customer: Customer): Record<string, unknown> {
  return {
    bank: { name: account.bank.name, id: account.bank.id, slug: account.bank.slug },
    account_name: account.account_name,
    account_number: account.account_number,
    assigned: true,
    currency: 'NGN',
    metadata: null,
    active: true,
    id: account.id,
    created_at: account.created_at,
    updated_at: account.created_at,
    assignment: {
      integration: INTEGRATION.id,
      assignee_id: customer.id,
      assignee_type: 'Customer',
      expired: false,
      account_type: 'PAY-WITH-TRANSFER-RECURRING',
      assigned_at: account.created_at,
      expired_at: null,
    },
    customer: { ...eventCustomer(customer), international_format_phone: null },
  };
}
