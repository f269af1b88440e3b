import * as v from 'valibot';
import type { ErrorCode } from '#shared/errors.ts';
import { STATUS_BY_CODE } from '#shared/http/errors.ts';

/**
 * What every endpoint answers, as schemas: the OpenAPI document is generated from them and every
 * e2e response is validated against that document. Objects are strict, so a field the contract does
 * not name (an internal one leaking out) fails the check.
 */

function meta<T extends v.GenericSchema>(schema: T, description: string, example?: unknown) {
  return v.pipe(
    schema,
    v.metadata({ description, ...(example === undefined ? {} : { examples: [example] }) }),
  );
}

/** A whole number (JSON has no integer type of its own). */
const int = () => v.pipe(v.number(), v.safeInteger());

export const kobo = meta(int(), 'An amount in kobo (NGN 1 = 100 kobo)', 500000);
/** `format: date-time` in the document: generated clients read it as a date. */
const timestamp = meta(
  v.pipe(v.string(), v.metadata({ format: 'date-time' })),
  'ISO 8601 UTC timestamp',
  '2026-11-21T10:15:30.000Z',
);
const accountNumber = meta(v.string(), '10-digit account number (NUBAN)', '0000014579');

export const bank = v.strictObject({
  code: meta(v.string(), 'CBN bank code', '058'),
  name: meta(v.string(), 'Bank name', 'Guaranty Trust Bank'),
});

export const bankList = v.array(bank);

export const validatedAccount = v.strictObject({
  account_name: meta(
    v.string(),
    "The holder's name, from the partner bank's name enquiry",
    'OKAFOR CHIAMAKA SEGUN',
  ),
  account_number: accountNumber,
  bank,
  session_id: meta(
    v.string(),
    'Stands in for account_number + bank_code in POST /beneficiaries and POST /transfers for 30 minutes, for this merchant',
    'ses_5ab667399f4ce9afb502a6cfaff31c61',
  ),
});

export const balance = v.strictObject({
  account_number: accountNumber,
  account_name: meta(v.string(), 'Wallet account name', 'NAIRAPAY/ACME LTD'),
  balance: kobo,
  currency: v.literal('NGN'),
  updated_at: timestamp,
});

export const beneficiary = v.strictObject({
  id: meta(v.string(), 'Beneficiary id', 'ben_019a4c3e2f1b7d2e9a0c4b5d6e7f8a9b'),
  account_name: v.string(),
  account_number: accountNumber,
  bank,
  nickname: v.nullable(v.string()),
  created_at: timestamp,
});

export const beneficiaryList = v.array(beneficiary);

export const transaction = v.strictObject({
  reference: meta(
    v.string(),
    "The merchant's reference; reversal:<reference> for a reversal, payment:<session_id> for a payment",
    'inv-2026-0042',
  ),
  type: v.picklist(['credit', 'debit']),
  category: v.picklist(['payment', 'transfer', 'reversal']),
  amount: kobo,
  fee: kobo,
  currency: v.literal('NGN'),
  status: v.picklist(['pending', 'success', 'failed', 'reversed']),
  narration: v.nullable(v.string()),
  counterparty: v.strictObject({
    account_name: v.string(),
    account_number: v.string(),
    bank_code: v.string(),
  }),
  balance_after: meta(int(), 'The wallet balance in kobo right after this transaction', 749000),
  reason: meta(
    v.nullable(v.string()),
    'Why a transfer failed or was reversed, in words a merchant can show a customer; null otherwise',
    null,
  ),
  virtual_account_reference: meta(
    v.nullable(v.string()),
    'For a payment credit: the reference of the virtual account it paid (null for wallet top-ups)',
    null,
  ),
  created_at: timestamp,
  updated_at: timestamp,
});

export const transactionList = v.array(transaction);

const PAYMENT_STATUSES = ['pending', 'partially_paid', 'paid', 'overpaid', 'expired'] as const;

export const virtualAccount = v.strictObject({
  reference: v.string(),
  account_number: accountNumber,
  account_name: v.string(),
  bank,
  amount: kobo,
  currency: v.literal('NGN'),
  status: meta(
    v.picklist(PAYMENT_STATUSES),
    '`pending` when created (201); a repeat of the request (200) shows the account as it stands now, as `GET /payments/{reference}` does',
    'pending',
  ),
  expires_at: timestamp,
  created_at: timestamp,
});

const rejectedAttempts = meta(
  v.array(v.strictObject({ amount: kobo, reason: v.string(), received_at: timestamp })),
  'Payments the partner refused and returned to the payer (e.g. a wrong amount): nothing was credited',
  [],
);

/** A virtual account in a list or an event: `GET /payments/{reference}` without `payments`. */
export const virtualAccountSummary = v.strictObject({
  reference: v.string(),
  status: v.picklist(PAYMENT_STATUSES),
  amount: kobo,
  amount_received: kobo,
  currency: v.literal('NGN'),
  account_number: accountNumber,
  bank,
  expires_at: timestamp,
  paid_at: v.nullable(timestamp),
  created_at: timestamp,
  rejected_attempts: rejectedAttempts,
});

/** `GET /payments/{reference}`: the virtual account and every payment it received. */
export const paymentStatus = v.strictObject({
  ...virtualAccountSummary.entries,
  payments: v.array(
    v.strictObject({
      session_id: v.string(),
      amount: kobo,
      sender_name: v.nullable(v.string()),
      sender_account_number: v.nullable(v.string()),
      sender_bank_code: v.nullable(v.string()),
      received_at: timestamp,
    }),
  ),
});

export const virtualAccountList = v.array(virtualAccountSummary);

const eventId = meta(
  v.pipe(v.string(), v.regex(/^evt_[0-9a-f]+$/)),
  'The event id: the same on every delivery',
  'evt_019a4c3e2f1b7d2e9a0c4b5d',
);
const eventBase = { id: eventId, created_at: timestamp };

/** The events merchants receive (API.md §8), one schema per type. */
export const paymentReceivedEvent = v.strictObject({
  ...eventBase,
  type: v.literal('payment.received'),
  data: v.strictObject({ transaction, virtual_account: v.nullable(virtualAccountSummary) }),
});
export const virtualAccountPaidEvent = v.strictObject({
  ...eventBase,
  type: v.literal('virtual_account.paid'),
  data: v.strictObject({ virtual_account: virtualAccountSummary }),
});
export const transferEvent = v.strictObject({
  ...eventBase,
  type: v.picklist(['transfer.success', 'transfer.failed', 'transfer.reversed']),
  data: v.strictObject({ transaction }),
});
export const merchantEvent = v.union([paymentReceivedEvent, virtualAccountPaidEvent, transferEvent]);
export const eventList = v.array(merchantEvent);

const deliveryAttempt = v.strictObject({
  at: timestamp,
  status_code: v.nullable(int()),
  error: v.nullable(v.string()),
  duration_ms: int(),
});
const deliveries = {
  deliveries: v.array(
    v.strictObject({
      endpoint_id: v.string(),
      status: v.picklist(['pending', 'delivered', 'failed']),
      attempts: v.array(deliveryAttempt),
    }),
  ),
};
/** `GET /events/{id}`: the event and every delivery of it, with each attempt. */
export const eventWithDeliveries = v.union([
  v.strictObject({ ...paymentReceivedEvent.entries, ...deliveries }),
  v.strictObject({ ...virtualAccountPaidEvent.entries, ...deliveries }),
  v.strictObject({ ...transferEvent.entries, ...deliveries }),
]);

const endpointFields = {
  id: meta(v.string(), 'The endpoint id', 'we_4f1c2d3e4f5a6b7c8d9e0f1a'),
  url: v.string(),
  events: v.array(
    v.picklist([
      'payment.received',
      'virtual_account.paid',
      'transfer.success',
      'transfer.failed',
      'transfer.reversed',
    ]),
  ),
  description: v.nullable(v.string()),
  status: v.picklist(['enabled', 'deleted']),
  created_at: timestamp,
};
/** A webhook endpoint; its secret is shown on creation and rotation only. */
export const webhookEndpoint = v.strictObject(endpointFields);
export const webhookEndpointWithSecret = v.strictObject({
  ...endpointFields,
  secret: meta(
    v.string(),
    'whsec_ + base64: verify deliveries with it (Standard Webhooks). Shown once.',
    'whsec_…',
  ),
});
export const webhookEndpointList = v.array(webhookEndpoint);

/** `POST /events/{id}/redeliver`: the new deliveries, queued. */
export const redelivery = v.strictObject({
  event_id: v.string(),
  deliveries: v.array(
    v.strictObject({
      endpoint_id: v.string(),
      status: v.literal('pending'),
      attempts: v.array(deliveryAttempt),
    }),
  ),
});

/** The success envelope around `data`; lists add `meta.next_cursor`. */
export function successEnvelope(data: v.GenericSchema, list = false) {
  return v.strictObject({
    status: v.literal('success'),
    message: v.string(),
    data,
    ...(list ? { meta: v.strictObject({ next_cursor: v.nullable(v.string()) }) } : {}),
  });
}

/** The webhook's bare acknowledgement. */
export const accepted = v.strictObject({ status: v.literal('success'), message: v.literal('Accepted') });

/** Every error but 401: a code from API.md §3, plus field errors on validation failures. */
export const errorEnvelope = v.strictObject({
  status: v.literal('error'),
  message: v.string(),
  code: v.picklist(
    Object.keys(STATUS_BY_CODE).filter((code) => code !== 'unauthorized') as [ErrorCode, ...ErrorCode[]],
  ),
  errors: v.optional(v.array(v.strictObject({ field: v.string(), message: v.string() }))),
});

/** The exact 401 body. */
export const unauthorizedEnvelope = v.strictObject({
  status: v.literal('error'),
  message: v.literal('Invalid API credentials'),
});
