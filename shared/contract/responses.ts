import * as z from 'zod/mini';
import type { ErrorCode } from '#shared/errors.ts';
import { STATUS_BY_CODE } from '#shared/http/errors.ts';

/**
 * What every endpoint answers, as schemas: the OpenAPI document is generated from them and every
 * e2e response is validated against that document. Objects are strict, so a field the contract does
 * not name (an internal one leaking out) fails the check.
 */

function meta<T extends z.ZodMiniType>(schema: T, description: string, example?: unknown): T {
  z.globalRegistry.add(schema, {
    description,
    ...(example === undefined ? {} : { examples: [example] }),
  } as never);
  return schema;
}

export const kobo = meta(z.int(), 'An amount in kobo (NGN 1 = 100 kobo)', 500000);
const timestamp = meta(z.string(), 'ISO 8601 UTC timestamp', '2026-11-21T10:15:30.000Z');
const accountNumber = meta(z.string(), '10-digit account number (NUBAN)', '0000014579');

export const bank = z.strictObject({
  code: meta(z.string(), 'CBN bank code', '058'),
  name: meta(z.string(), 'Bank name', 'Guaranty Trust Bank'),
});

export const bankList = z.array(bank);

export const validatedAccount = z.strictObject({
  account_name: meta(
    z.string(),
    "The holder's name, from the partner bank's name enquiry",
    'OKAFOR CHIAMAKA SEGUN',
  ),
  account_number: accountNumber,
  bank,
  session_id: meta(
    z.string(),
    'Stands in for account_number + bank_code in POST /beneficiaries and POST /transfers for 30 minutes, for this merchant',
    'ses_5ab667399f4ce9afb502a6cfaff31c61',
  ),
});

export const balance = z.strictObject({
  account_number: accountNumber,
  account_name: meta(z.string(), 'Wallet account name', 'NAIRAPAY/ACME LTD'),
  balance: kobo,
  currency: z.literal('NGN'),
  updated_at: timestamp,
});

export const beneficiary = z.strictObject({
  id: meta(z.string(), 'Beneficiary id', 'ben_019a4c3e2f1b7d2e9a0c4b5d6e7f8a9b'),
  account_name: z.string(),
  account_number: accountNumber,
  bank,
  nickname: z.nullable(z.string()),
  created_at: timestamp,
});

export const beneficiaryList = z.array(beneficiary);

export const transaction = z.strictObject({
  reference: meta(
    z.string(),
    "The merchant's reference; reversal:<reference> for a reversal, payment:<session_id> for a payment",
    'inv-2026-0042',
  ),
  type: z.enum(['credit', 'debit']),
  category: z.enum(['payment', 'transfer', 'reversal']),
  amount: kobo,
  fee: kobo,
  currency: z.literal('NGN'),
  status: z.enum(['pending', 'success', 'failed', 'reversed']),
  narration: z.nullable(z.string()),
  counterparty: z.strictObject({
    account_name: z.string(),
    account_number: z.string(),
    bank_code: z.string(),
  }),
  balance_after: meta(z.int(), 'The wallet balance in kobo right after this transaction', 749000),
  reason: meta(
    z.nullable(z.string()),
    'Why a transfer failed or was reversed, in words a merchant can show a customer; null otherwise',
    null,
  ),
  virtual_account_reference: meta(
    z.nullable(z.string()),
    'For a payment credit: the reference of the virtual account it paid (null for wallet top-ups)',
    null,
  ),
  created_at: timestamp,
  updated_at: timestamp,
});

export const transactionList = z.array(transaction);

export const virtualAccount = z.strictObject({
  reference: z.string(),
  account_number: accountNumber,
  account_name: z.string(),
  bank,
  amount: kobo,
  currency: z.literal('NGN'),
  status: z.literal('pending'),
  expires_at: timestamp,
  created_at: timestamp,
});

const rejectedAttempts = meta(
  z.array(z.strictObject({ amount: kobo, reason: z.string(), received_at: timestamp })),
  'Payments the partner refused and returned to the payer (e.g. a wrong amount): nothing was credited',
  [],
);

/** A virtual account in a list or an event: `GET /payments/{reference}` without `payments`. */
export const virtualAccountSummary = z.strictObject({
  reference: z.string(),
  status: z.enum(['pending', 'partially_paid', 'paid', 'overpaid', 'expired']),
  amount: kobo,
  amount_received: kobo,
  currency: z.literal('NGN'),
  account_number: accountNumber,
  bank,
  expires_at: timestamp,
  paid_at: z.nullable(timestamp),
  created_at: timestamp,
  rejected_attempts: rejectedAttempts,
});

/** `GET /payments/{reference}`: the virtual account and every payment it received. */
export const paymentStatus = z.extend(virtualAccountSummary, {
  payments: z.array(
    z.strictObject({
      session_id: z.string(),
      amount: kobo,
      sender_name: z.nullable(z.string()),
      sender_account_number: z.nullable(z.string()),
      sender_bank_code: z.nullable(z.string()),
      received_at: timestamp,
    }),
  ),
});

export const virtualAccountList = z.array(virtualAccountSummary);

const eventId = meta(
  z.string().check(z.regex(/^evt_[0-9a-f]+$/)),
  'The event id: the same on every delivery',
  'evt_019a4c3e2f1b7d2e9a0c4b5d',
);
const eventBase = { id: eventId, created_at: timestamp };

/** The events merchants receive (API.md §8), one schema per type. */
export const paymentReceivedEvent = z.strictObject({
  ...eventBase,
  type: z.literal('payment.received'),
  data: z.strictObject({ transaction, virtual_account: z.nullable(virtualAccountSummary) }),
});
export const virtualAccountPaidEvent = z.strictObject({
  ...eventBase,
  type: z.literal('virtual_account.paid'),
  data: z.strictObject({ virtual_account: virtualAccountSummary }),
});
export const transferEvent = z.strictObject({
  ...eventBase,
  type: z.enum(['transfer.success', 'transfer.failed', 'transfer.reversed']),
  data: z.strictObject({ transaction }),
});
export const merchantEvent = z.union([paymentReceivedEvent, virtualAccountPaidEvent, transferEvent]);
export const eventList = z.array(merchantEvent);

const deliveryAttempt = z.strictObject({
  at: timestamp,
  status_code: z.nullable(z.int()),
  error: z.nullable(z.string()),
  duration_ms: z.int(),
});
const deliveries = {
  deliveries: z.array(
    z.strictObject({
      endpoint_id: z.string(),
      status: z.enum(['pending', 'delivered', 'failed']),
      attempts: z.array(deliveryAttempt),
    }),
  ),
};
/** `GET /events/{id}`: the event and every delivery of it, with each attempt. */
export const eventWithDeliveries = z.union([
  z.extend(paymentReceivedEvent, deliveries),
  z.extend(virtualAccountPaidEvent, deliveries),
  z.extend(transferEvent, deliveries),
]);

const endpointFields = {
  id: meta(z.string(), 'The endpoint id', 'we_4f1c2d3e4f5a6b7c8d9e0f1a'),
  url: z.string(),
  events: z.array(
    z.enum([
      'payment.received',
      'virtual_account.paid',
      'transfer.success',
      'transfer.failed',
      'transfer.reversed',
    ]),
  ),
  description: z.nullable(z.string()),
  status: z.enum(['enabled', 'deleted']),
  created_at: timestamp,
};
/** A webhook endpoint; its secret is shown on creation and rotation only. */
export const webhookEndpoint = z.strictObject(endpointFields);
export const webhookEndpointWithSecret = z.strictObject({
  ...endpointFields,
  secret: meta(
    z.string(),
    'whsec_ + base64: verify deliveries with it (Standard Webhooks). Shown once.',
    'whsec_…',
  ),
});
export const webhookEndpointList = z.array(webhookEndpoint);

/** `POST /events/{id}/redeliver`: the new deliveries, queued. */
export const redelivery = z.strictObject({
  event_id: z.string(),
  deliveries: z.array(
    z.strictObject({
      endpoint_id: z.string(),
      status: z.literal('pending'),
      attempts: z.array(deliveryAttempt),
    }),
  ),
});

/** The success envelope around `data`; lists add `meta.next_cursor`. */
export function successEnvelope(data: z.ZodMiniType, list = false) {
  return z.strictObject({
    status: z.literal('success'),
    message: z.string(),
    data,
    ...(list ? { meta: z.strictObject({ next_cursor: z.nullable(z.string()) }) } : {}),
  });
}

/** The webhook's bare acknowledgement. */
export const accepted = z.strictObject({ status: z.literal('success'), message: z.literal('Accepted') });

/** Every error but 401: a code from API.md §3, plus field errors on validation failures. */
export const errorEnvelope = z.strictObject({
  status: z.literal('error'),
  message: z.string(),
  code: z.enum(
    Object.keys(STATUS_BY_CODE).filter((code) => code !== 'unauthorized') as [ErrorCode, ...ErrorCode[]],
  ),
  errors: z.optional(z.array(z.strictObject({ field: z.string(), message: z.string() }))),
});

/** The exact 401 body. */
export const unauthorizedEnvelope = z.strictObject({
  status: z.literal('error'),
  message: z.literal('Invalid API credentials'),
});
