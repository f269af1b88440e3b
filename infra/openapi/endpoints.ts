import type * as v from 'valibot';
import * as requests from '#shared/contract/requests.ts';
import * as responses from '#shared/contract/responses.ts';
import type { MerchantRouteName } from '#shared/definitions/routes.ts';
import type { ErrorCode } from '#shared/errors.ts';
import { paymentReceived, transferSettled } from '#shared/partners/sandbox-payloads.ts';

/**
 * One form a request body may take, named in the docs ("One of: By beneficiary, …"): the fields
 * only this form takes (all required), beside the fields every form shares.
 */
export interface BodyAlternative {
  title: string;
  fields: readonly string[];
  description: string;
}

/** How one endpoint is documented: its schemas, its answers, and examples. */
export interface EndpointDoc {
  tag: 'Bank' | 'Beneficiary' | 'Transaction' | 'Payment' | 'Event' | 'Webhook endpoint';
  description: string;
  request: {
    body?: v.GenericSchema;
    query?: v.GenericSchema;
    params?: v.GenericSchema;
    bodyOptional?: boolean;
    /** Takes an `Idempotency-Key` header (`shared/http/idempotency.ts`). */
    idempotencyKey?: boolean;
  };
  /** The forms of the body, when it takes exactly one of several (the handler enforces it). */
  alternatives?: readonly BodyAlternative[];
  /**
   * Success statuses with the `message` the handler answers each with (the first is the usual one;
   * every e2e response is checked against it), and the `data` they carry (undefined: the bare
   * webhook acknowledgement).
   */
  success: { messages: Record<number, string>; data?: v.GenericSchema; list?: boolean };
  /** Error codes beyond the common ones (401 and 429 where they apply, 500). */
  errors: ErrorCode[];
  /** `response`: the `data` of the first success status (none for the bare acknowledgement). */
  example: { request?: unknown; response?: unknown };
}

const bodyErrors: ErrorCode[] = ['validation_error', 'payload_too_large', 'unsupported_media_type'];
const account = { account_number: '0000014579', bank_code: '011' };
const transactionExample = {
  reference: 'inv-2026-0042',
  type: 'debit',
  category: 'transfer',
  amount: 250000,
  fee: 1000,
  currency: 'NGN',
  status: 'success',
  narration: 'Invoice 42',
  counterparty: { account_name: 'UCHENNA CHIAMAKA SEGUN', account_number: '0000014579', bank_code: '011' },
  balance_after: 749000,
  reason: null,
  virtual_account_reference: null,
  created_at: '2026-11-21T10:15:30.000Z',
  updated_at: '2026-11-21T10:15:31.000Z',
};

const VA_EXAMPLE = {
  reference: 'order-1',
  status: 'paid',
  amount: 500000,
  amount_received: 500000,
  currency: 'NGN',
  account_number: '5016114154',
  bank: { code: '101', name: 'Providus Bank' },
  expires_at: '2026-11-21T10:45:30.000Z',
  paid_at: '2026-11-21T10:20:02.000Z',
  created_at: '2026-11-21T10:15:30.000Z',
  rejected_attempts: [],
};

const ENDPOINT_EXAMPLE = {
  id: 'we_4f1c2d3e4f5a6b7c8d9e0f1a',
  url: 'https://example.ng/hooks/naira',
  events: ['payment.received'],
  description: 'Orders',
  status: 'enabled',
  created_at: '2026-11-21T10:00:00.000Z',
};

const EVENT_EXAMPLE = {
  id: 'evt_019a4c3e2f1b7d2e9a0c4b5d',
  type: 'payment.received',
  created_at: '2026-11-21T10:20:02.500Z',
  data: {
    transaction: {
      ...transactionExample,
      reference: 'payment:100004261121102002123456789012',
      type: 'credit',
      category: 'payment',
      amount: 500000,
      fee: 0,
      narration: 'Order 1',
      counterparty: { account_name: 'ADEBAYO CHIOMA', account_number: '0123456789', bank_code: '058' },
      balance_after: 1249000,
      virtual_account_reference: 'order-1',
    },
    virtual_account: VA_EXAMPLE,
  },
};

/** Every route of the route table, documented. A route without an entry here does not compile. */
export const ENDPOINTS: Record<MerchantRouteName, EndpointDoc> = {
  'list-banks': {
    tag: 'Bank',
    description:
      'Every supported bank, microfinance bank and wallet, sorted by name: without `limit` and `cursor`, all of them in one page (`meta.next_cursor` null); with either, pages of `limit` 1-100 (default 20) in the same order, `cursor` from the previous page, for clients that page every list. Public: no credentials needed (they are allowed). Also served at `/banks/list`. `Cache-Control: public, max-age=3600`.',
    request: requests.listBanksRequest,
    success: { messages: { 200: 'Banks retrieved' }, data: responses.bankList, list: true },
    errors: ['validation_error'],
    example: {
      response: [
        { code: '044', name: 'Access Bank' },
        { code: '058', name: 'Guaranty Trust Bank' },
      ],
    },
  },
  'validate-account': {
    tag: 'Bank',
    description:
      "Confirms a bank account and returns the holder's name from the partner bank. The NUBAN check digit is verified first (no partner call for a wrong one). The `session_id` stands in for the account in POST /beneficiaries and POST /transfers for 30 minutes.",
    request: requests.validateAccountRequest,
    success: { messages: { 200: 'Account validated' }, data: responses.validatedAccount },
    errors: [
      ...bodyErrors,
      'unknown_bank',
      'invalid_account_number',
      'bank_not_supported',
      'account_not_found',
      'partner_unavailable',
    ],
    example: {
      request: account,
      response: {
        account_name: 'UCHENNA CHIAMAKA SEGUN',
        account_number: '0000014579',
        bank: { code: '011', name: 'First Bank of Nigeria' },
        session_id: 'ses_5ab667399f4ce9afb502a6cfaff31c61',
      },
    },
  },
  'get-balance': {
    tag: 'Bank',
    description: "The authenticated merchant's own wallet; amounts in kobo.",
    request: requests.getBalanceRequest,
    success: { messages: { 200: 'Balance retrieved' }, data: responses.balance },
    errors: ['not_found'],
    example: {
      response: {
        account_number: '5261753142',
        account_name: 'NAIRAPAY/ACME LTD',
        balance: 500000,
        currency: 'NGN',
        updated_at: '2026-11-21T10:15:30.000Z',
      },
    },
  },
  'create-beneficiary': {
    tag: 'Beneficiary',
    description:
      "Saves a bank account as a beneficiary, from a `session_id` of your own validation or from `account_number` + `bank_code`. The name always comes from the partner's name enquiry. The same bank account saved again answers 200 with the existing beneficiary.",
    request: requests.createBeneficiaryRequest,
    alternatives: [
      {
        title: 'By validation session',
        fields: ['session_id'],
        description: 'The account of your own POST /validate-account, within 30 minutes of it.',
      },
      {
        title: 'By account number',
        fields: ['account_number', 'bank_code'],
        description: 'A bank account, validated on the spot.',
      },
    ],
    success: {
      messages: { 201: 'Beneficiary saved', 200: 'Beneficiary already saved' },
      data: responses.beneficiary,
    },
    errors: [
      ...bodyErrors,
      'unknown_bank',
      'invalid_account_number',
      'bank_not_supported',
      'account_not_found',
      'session_expired',
      'partner_unavailable',
    ],
    example: {
      request: { ...account, nickname: 'Supplier' },
      response: {
        id: 'ben_019a4c3e2f1b7d2e9a0c4b5d6e7f8a9b',
        account_name: 'UCHENNA CHIAMAKA SEGUN',
        account_number: '0000014579',
        bank: { code: '011', name: 'First Bank of Nigeria' },
        nickname: 'Supplier',
        created_at: '2026-11-21T10:15:30.000Z',
      },
    },
  },
  'list-beneficiaries': {
    tag: 'Beneficiary',
    description:
      'Your beneficiaries, newest first; `limit` 1-100 (default 20), `cursor` from the previous page.',
    request: requests.listBeneficiariesRequest,
    success: { messages: { 200: 'Beneficiaries retrieved' }, data: responses.beneficiaryList, list: true },
    errors: ['validation_error'],
    example: { response: [] },
  },
  'create-transfer': {
    tag: 'Transaction',
    description:
      'Sends money from your wallet. `reference` is the idempotency key: the same reference and body again answer 200 with the same transaction and never debit twice; another body is 409. The debit of `amount + fee` is atomic with the check that the balance covers it. Fee: 1,000 kobo up to NGN 5,000, 2,500 up to NGN 50,000, 5,000 above. The partner rejects → `failed` and a `reversal:<reference>` credit gives `amount + fee` back; the partner does not answer → `pending` until its webhook settles it.',
    request: requests.createTransferRequest,
    alternatives: [
      {
        title: 'By beneficiary',
        fields: ['beneficiary_id'],
        description: 'To a beneficiary you saved with POST /beneficiaries.',
      },
      {
        title: 'By validation session',
        fields: ['session_id'],
        description: 'To the account of your own POST /validate-account, within 30 minutes of it.',
      },
      {
        title: 'By account number',
        fields: ['account_number', 'bank_code'],
        description: 'To a bank account, validated on the spot.',
      },
    ],
    success: {
      messages: { 201: 'Transfer created', 200: 'Transfer already exists' },
      data: responses.transaction,
    },
    errors: [
      ...bodyErrors,
      'unknown_bank',
      'invalid_account_number',
      'bank_not_supported',
      'duplicate_reference',
      'account_not_found',
      'insufficient_funds',
      'beneficiary_not_found',
      'session_expired',
      'partner_unavailable',
    ],
    example: {
      request: { reference: 'inv-2026-0042', amount: 250000, ...account, narration: 'Invoice 42' },
      response: transactionExample,
    },
  },
  'list-transactions': {
    tag: 'Transaction',
    description:
      'Your transactions, newest first, filtered by `type`, `status` and the `from`/`to` date range.',
    request: requests.listTransactionsRequest,
    success: { messages: { 200: 'Transactions retrieved' }, data: responses.transactionList, list: true },
    errors: ['validation_error'],
    example: { response: [transactionExample] },
  },
  'get-transaction': {
    tag: 'Transaction',
    description: "One of your transactions by reference. Another merchant's reference is 404, never 403.",
    request: requests.getTransactionRequest,
    success: { messages: { 200: 'Transaction retrieved' }, data: responses.transaction },
    errors: ['not_found'],
    example: { response: transactionExample },
  },
  'create-virtual-account': {
    tag: 'Payment',
    description:
      'A temporary account at the partner bank for a fixed amount. The account number is never issued twice, so a late payment always finds it. Same `reference` and body → 200 with the same account; another body → 409.',
    request: requests.createVirtualAccountRequest,
    success: {
      messages: { 201: 'Virtual account created', 200: 'Virtual account already exists' },
      data: responses.virtualAccount,
    },
    errors: [...bodyErrors, 'duplicate_reference', 'not_found', 'partner_unavailable'],
    example: {
      request: {
        amount: 500000,
        reference: 'order-1',
        customer: { name: 'Ada Obi', email: 'ada@example.com' },
      },
      response: {
        reference: 'order-1',
        account_number: '5016114154',
        account_name: 'NAIRAPAY/ADA OBI',
        bank: { code: '101', name: 'Providus Bank' },
        amount: 500000,
        currency: 'NGN',
        status: 'pending',
        expires_at: '2026-11-21T10:45:30.000Z',
        created_at: '2026-11-21T10:15:30.000Z',
      },
    },
  },
  'get-payment': {
    tag: 'Payment',
    description:
      'The status of a virtual account: `pending` (nothing yet), `partially_paid`, `paid` (exact), `overpaid`, `expired` (nothing received and past `expires_at`), and every payment received. Every payment is credited exactly once, partial, excess and late ones included.',
    request: requests.getPaymentRequest,
    success: { messages: { 200: 'Payment retrieved' }, data: responses.paymentStatus },
    errors: ['not_found'],
    example: {
      response: {
        ...VA_EXAMPLE,
        payments: [
          {
            session_id: '100004261121102002123456789012',
            amount: 500000,
            sender_name: 'ADEBAYO CHIOMA',
            sender_account_number: '0123456789',
            sender_bank_code: '058',
            received_at: '2026-11-21T10:20:02.000Z',
          },
        ],
      },
    },
  },
  'list-virtual-accounts': {
    tag: 'Payment',
    description:
      'Your virtual accounts, newest first, each as `GET /payments/{reference}` shows it without `payments`; optional `status` filter; `limit` 1-100 (default 20), `cursor` from the previous page.',
    request: requests.listVirtualAccountsRequest,
    success: {
      messages: { 200: 'Virtual accounts retrieved' },
      data: responses.virtualAccountList,
      list: true,
    },
    errors: ['validation_error'],
    example: { response: [VA_EXAMPLE] },
  },
  'list-events': {
    tag: 'Event',
    description:
      'Your events of the last 30 days, newest first, in full: every credited payment (`payment.received`), every virtual account that became paid (`virtual_account.paid`), every transfer that ended `success`, `failed` or `reversed`. Exactly one event per state change. Optional `type`; `limit`, `cursor`.',
    request: requests.listEventsRequest,
    success: { messages: { 200: 'Events retrieved' }, data: responses.eventList, list: true },
    errors: ['validation_error'],
    example: { response: [EVENT_EXAMPLE] },
  },
  'get-event': {
    tag: 'Event',
    description:
      "One of your events with its `deliveries`: one per endpoint it was sent to (and one more per redelivery), each with every attempt (`at`, `status_code` or `error`, `duration_ms`). Another merchant's event id is 404.",
    request: requests.getEventRequest,
    success: { messages: { 200: 'Event retrieved' }, data: responses.eventWithDeliveries },
    errors: ['not_found'],
    example: {
      response: {
        ...EVENT_EXAMPLE,
        deliveries: [
          {
            endpoint_id: 'we_4f1c2d3e4f5a6b7c8d9e0f1a',
            status: 'delivered',
            attempts: [
              { at: '2026-11-21T10:20:03.000Z', status_code: 503, error: null, duration_ms: 120 },
              { at: '2026-11-21T10:20:08.000Z', status_code: 200, error: null, duration_ms: 95 },
            ],
          },
        ],
      },
    },
  },
  'redeliver-event': {
    tag: 'Event',
    description:
      'Sends an event again, as a new delivery with the same `webhook-id`: to `endpoint_id` (one of your enabled endpoints, else 404), or by default to every enabled endpoint subscribed to its type. No body, or `{}`, or `{"endpoint_id"}`.',
    request: requests.redeliverEventRequest,
    success: { messages: { 202: 'Redelivery queued' }, data: responses.redelivery },
    errors: ['not_found', 'validation_error', 'payload_too_large', 'unsupported_media_type'],
    example: {
      request: { endpoint_id: 'we_4f1c2d3e4f5a6b7c8d9e0f1a' },
      response: {
        event_id: 'evt_019a4c3e2f1b7d2e9a0c4b5d',
        deliveries: [{ endpoint_id: 'we_4f1c2d3e4f5a6b7c8d9e0f1a', status: 'pending', attempts: [] }],
      },
    },
  },
  'create-webhook-endpoint': {
    tag: 'Webhook endpoint',
    description:
      "Registers an endpoint that receives your events (`events`: the types it wants, default all). `url` must be `https://`, without user info, a fragment or port 0, and must not resolve to a loopback, private, CGNAT, link-local or metadata address (checked again at every delivery; the delivery connects to the checked addresses themselves and follows no redirect). At most 5 endpoints (422 `limit_reached`). The answer carries the endpoint's `secret`, shown only here and on rotation: deliveries are signed with it per Standard Webhooks. Send an `Idempotency-Key` to retry safely after a lost answer: the same key and body within 24 hours answer 200 with the same endpoint and secret (`Idempotent-Replayed: true`) and make nothing; the key with another body is 409 `duplicate_reference`.",
    request: requests.createWebhookEndpointRequest,
    success: {
      messages: { 201: 'Webhook endpoint created', 200: 'Webhook endpoint already created' },
      data: responses.webhookEndpointWithSecret,
    },
    errors: [...bodyErrors, 'invalid_url', 'limit_reached', 'duplicate_reference'],
    example: {
      request: { url: 'https://example.ng/hooks/naira', events: ['payment.received'], description: 'Orders' },
      response: { ...ENDPOINT_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
    },
  },
  'list-webhook-endpoints': {
    tag: 'Webhook endpoint',
    description: 'Your enabled webhook endpoints, without secrets.',
    request: requests.listWebhookEndpointsRequest,
    success: {
      messages: { 200: 'Webhook endpoints retrieved' },
      data: responses.webhookEndpointList,
      list: true,
    },
    errors: [],
    example: { response: [ENDPOINT_EXAMPLE] },
  },
  'delete-webhook-endpoint': {
    tag: 'Webhook endpoint',
    description:
      "Deletes an endpoint (no body, or `{}`): nothing more is sent to it, and it no longer counts towards the 5. Another merchant's id is 404.",
    request: requests.deleteWebhookEndpointRequest,
    success: { messages: { 200: 'Webhook endpoint deleted' }, data: responses.webhookEndpoint },
    errors: ['not_found', 'validation_error', 'payload_too_large', 'unsupported_media_type'],
    example: { request: {}, response: { ...ENDPOINT_EXAMPLE, status: 'deleted' } },
  },
  'rotate-webhook-secret': {
    tag: 'Webhook endpoint',
    description:
      'A new secret for the endpoint (no body, or `{}`), shown once. For 24 hours deliveries carry signatures with both the new and the old secret, so you can switch without missing one; a secret rotated out earlier keeps its own 24 hours when you rotate again. At most 5 secrets sign at once: past that, the oldest rotated-out secret stops signing first. A rotation is never refused. With an `Idempotency-Key`, a retry within 24 hours rotates nothing and answers the same secret (`Idempotent-Replayed: true`); the key used for another request is 409 `duplicate_reference`.',
    request: requests.rotateWebhookSecretRequest,
    success: { messages: { 200: 'Webhook secret rotated' }, data: responses.webhookEndpointWithSecret },
    errors: [
      'not_found',
      'validation_error',
      'payload_too_large',
      'unsupported_media_type',
      'duplicate_reference',
    ],
    example: {
      request: {},
      response: { ...ENDPOINT_EXAMPLE, secret: 'whsec_2b6pQ0c3ZcR9m1x7w8YvKdL4tN5sHjUe' },
    },
  },
  'receive-partner-webhook': {
    tag: 'Payment',
    description:
      'Called by the banking partner, never by merchants. The sandbox partner posts to `/webhooks/payments`, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp` within ±5 minutes, `webhook-signature` = `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{raw body}` keyed with the base64-decoded part of the secret after `whsec_`); Paystack posts to `/webhooks/paystack`, signed by `x-paystack-signature` (hex HMAC-SHA512 of the raw body with the secret key). Answers 200 only once the event is durably queued; a redelivery is 200 and credits nothing again. Unknown fields and event types are ignored. Bodies up to 256 KiB; the content type is not checked (a signed body is judged by its bytes, read as UTF-8 JSON). A signed delivery that is valid JSON is always 200: credited, or kept for operators with the reason when its money fields cannot be read or a key is given twice; fields people read (sender, narration, `paid_at`) are cut or dropped, never a reason to refuse. Only a body that is not JSON is 400. On AWS also served at the webhook function URL.',
    request: { body: undefined },
    success: { messages: { 200: 'Accepted' } },
    errors: ['validation_error', 'invalid_signature', 'payload_too_large'],
    example: {
      request: {
        type: 'payment.received',
        data: {
          session_id: '100004261121102002123456789012',
          account_number: '5016114154',
          amount: 500000,
          sender: { account_name: 'ADEBAYO CHIOMA', account_number: '0123456789', bank_code: '058' },
          narration: 'Order 1',
          paid_at: '2026-11-21T10:20:02.000Z',
        },
      },
    },
  },
};

/** The partner events the webhook takes, named as the docs show them. */
export const WEBHOOK_EVENTS = [
  { title: 'Payment received (payment.received)', schema: paymentReceived },
  {
    title: 'Transfer settled (transfer.success, transfer.failed, transfer.reversed)',
    schema: transferSettled,
  },
] as const;
