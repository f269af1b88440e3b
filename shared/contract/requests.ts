import * as v from 'valibot';
import { EVENT_TYPES } from '#shared/events/types.ts';
import { amountSchema } from '#shared/money.ts';
import { bankLimitSchema, cursorSchema, limitSchema } from '#shared/pagination.ts';
import {
  accountNumberSchema,
  bankCodeSchema,
  EMAIL,
  EMAIL_MAX,
  isIsoDate,
  isIsoDateTime,
  namingTextSchema,
  opaqueIdSchema,
  referenceSchema,
  strictObject,
  textSchema,
} from '#shared/schemas.ts';

/**
 * The request schemas of every endpoint: what the handlers validate, and what the OpenAPI document
 * shows. One named export per endpoint, so a handler's bundle carries only its own.
 */

/**
 * Builds a schema at module load only if the bundle uses it: esbuild drops a `built` call whose
 * result nothing reads (`@__NO_SIDE_EFFECTS__`, honoured within this file), so each handler's
 * bundle carries and builds only its own schemas, and valibot only as far as they need it.
 */
/* @__NO_SIDE_EFFECTS__ */
function built<T>(build: () => T): T {
  return build();
}

/** The first and last millisecond a four-digit year holds: bounds beyond them are these. */
const FIRST_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * A date-time bound in the millisecond times are kept in: a fraction finer than that is cut for an
 * end (`to` 10:15:30.1239 keeps .123) and rounded up for a start (`from` 10:15:30.1231 starts at
 * .124), so nothing outside the bound given is listed.
 */
function toMillisecondBound(value: string, end: 'start' | 'end'): string {
  const ms = Date.parse(value);
  const finer = /\.\d{3}(\d+)/.exec(value)?.[1] ?? '';
  const bound = end === 'start' && /[1-9]/.test(finer) ? ms + 1 : ms;
  // Times are compared as strings: an offset can carry a time of the year 9999 into 10000
  // (`+010000-…`) or of the year 0000 into -1, which would sort before every four-digit year.
  return new Date(Math.min(Math.max(bound, FIRST_MS), LAST_MS)).toISOString();
}

/** An ISO date or date-time; a bare date means the start (`from`) or the end (`to`) of that day. */
const dateBound = (end: 'start' | 'end') =>
  v.optional(
    v.pipe(
      v.string(),
      v.check(
        (value) => isIsoDate(value) || isIsoDateTime(value),
        (issue) =>
          // `+01:00` typed into a URL as it is arrives as ` 01:00`: `+` is a space in a query.
          /T[\d:.]+ \d{2}:\d{2}$/.test(String(issue.input))
            ? 'Must be a real ISO 8601 date or date-time; a "+" in a URL query reads as a space: write an offset as %2B01:00'
            : 'Must be a real ISO 8601 date or date-time (2026-11-30 or 2026-11-30T10:15:00Z)',
      ),
      v.metadata({
        description: `ISO 8601 date or date-time (UTC); a bare date covers the whole day (inclusive ${end === 'start' ? 'start' : 'end'})`,
        examples: [end === 'start' ? '2026-11-01' : '2026-11-30'],
      }),
      v.transform((value) =>
        isIsoDate(value)
          ? `${value}T${end === 'start' ? '00:00:00.000' : '23:59:59.999'}Z`
          : toMillisecondBound(value, end),
      ),
    ),
  );

const page = { limit: limitSchema, cursor: cursorSchema };
const referenceParam = built(() => v.object({ reference: v.string() }));

/**
 * The whole bank list without `limit` and `cursor` (API.md §4); a page of it, as every list pages
 * (API.md §1), with either.
 */
export const listBanksRequest = built(() => ({
  query: strictObject({ limit: bankLimitSchema, cursor: cursorSchema }),
}));

export const validateAccountRequest = built(() => ({
  body: strictObject({ account_number: accountNumberSchema, bank_code: bankCodeSchema }),
}));

export const getBalanceRequest = {};

export const createBeneficiaryRequest = built(() => ({
  body: strictObject({
    session_id: v.optional(opaqueIdSchema),
    account_number: v.optional(accountNumberSchema),
    bank_code: v.optional(bankCodeSchema),
    // Left out for none: an empty or blank one would show as a nickname that says nothing.
    nickname: v.optional(namingTextSchema(50)),
  }),
}));

export const listBeneficiariesRequest = built(() => ({ query: strictObject(page) }));

export const createTransferRequest = built(() => ({
  body: strictObject({
    reference: referenceSchema,
    amount: amountSchema,
    beneficiary_id: v.optional(opaqueIdSchema),
    session_id: v.optional(opaqueIdSchema),
    account_number: v.optional(accountNumberSchema),
    bank_code: v.optional(bankCodeSchema),
    narration: v.optional(textSchema(100)),
  }),
}));

export const listTransactionsRequest = built(() => ({
  query: strictObject({
    type: v.optional(v.picklist(['credit', 'debit'])),
    status: v.optional(v.picklist(['pending', 'success', 'failed', 'reversed'])),
    from: dateBound('start'),
    to: dateBound('end'),
    ...page,
  }),
}));

export const getTransactionRequest = { params: referenceParam };

export const createVirtualAccountRequest = built(() => ({
  body: strictObject({
    amount: amountSchema,
    reference: v.optional(referenceSchema),
    expires_in_minutes: v.optional(
      v.pipe(
        v.number('Must be a whole number of minutes'),
        v.safeInteger('Must be a whole number of minutes'),
        v.minValue(5, 'Must be at least 5'),
        v.maxValue(1440, 'Must be at most 1440'),
      ),
      30,
    ),
    customer: v.optional(
      strictObject({
        // A name of spaces only would reach the partner as an empty first and last name.
        name: namingTextSchema(100),
        email: v.pipe(
          v.string(),
          v.regex(EMAIL, 'Must be an email address'),
          v.maxLength(EMAIL_MAX, 'Too long'),
        ),
      }),
    ),
  }),
}));

export const getPaymentRequest = { params: referenceParam };

export const listVirtualAccountsRequest = built(() => ({
  query: strictObject({
    status: v.optional(v.picklist(['pending', 'partially_paid', 'paid', 'overpaid', 'expired'])),
    ...page,
  }),
}));

export const listEventsRequest = built(() => ({
  query: strictObject({ type: v.optional(v.picklist(EVENT_TYPES)), ...page }),
}));

export const getEventRequest = built(() => ({ params: v.object({ id: v.string() }) }));

export const createWebhookEndpointRequest = built(() => ({
  idempotencyKey: true,
  body: strictObject({
    url: v.pipe(v.string(), v.minLength(1, 'Must not be empty'), v.maxLength(2048, 'Too long')),
    events: v.optional(
      v.pipe(v.array(v.picklist(EVENT_TYPES)), v.minLength(1, 'Give at least one type, or leave out')),
    ),
    description: v.optional(textSchema(200)),
  }),
}));

export const listWebhookEndpointsRequest = built(() => ({ query: strictObject(page) }));

const endpointParam = built(() => v.object({ id: v.string() }));

/**
 * An endpoint's id, and no body or `{}`: a body that is sent is held to API.md §1 and §3 like any
 * other (unknown fields 400, malformed JSON 400, another content type 415, over 16 KiB 413).
 */
const endpointOnly = built(
  () =>
    ({
      params: endpointParam,
      body: v.optional(strictObject({})),
      bodyOptional: true,
    }) as const,
);

export const deleteWebhookEndpointRequest = endpointOnly;

export const rotateWebhookSecretRequest = built(() => ({ ...endpointOnly, idempotencyKey: true }) as const);

/** No body, `{}`, or one endpoint. */
export const redeliverEventRequest = built(
  () =>
    ({
      params: v.object({ id: v.string() }),
      body: v.optional(strictObject({ endpoint_id: v.optional(opaqueIdSchema) })),
      bodyOptional: true,
    }) as const,
);

const emailSchema = built(() =>
  v.pipe(
    v.string(),
    v.maxLength(EMAIL_MAX, 'Too long'),
    v.regex(EMAIL, 'Must be an email address'),
    v.metadata({ description: "The dashboard user's email", examples: ['ada@acme.ng'] }),
  ),
);
const passwordSchema = built(() =>
  v.pipe(v.string(), v.minLength(1, 'Must not be empty'), v.maxLength(256, 'Too long')),
);

export const createDashboardSessionRequest = built(() => ({
  body: strictObject({ email: emailSchema, password: passwordSchema }),
}));

/** Each challenge with its own answer: the other challenge's field is as unknown as any other. */
export const answerDashboardChallengeRequest = built(() => {
  const session = v.pipe(v.string(), v.minLength(1, 'Must not be empty'), v.maxLength(4096, 'Too long'));
  return {
    body: v.variant('challenge', [
      strictObject({
        email: emailSchema,
        challenge: v.literal('NEW_PASSWORD_REQUIRED'),
        session,
        new_password: passwordSchema,
      }),
      strictObject({
        email: emailSchema,
        challenge: v.literal('SOFTWARE_TOKEN_MFA'),
        session,
        code: v.pipe(v.string(), v.regex(/^[0-9]{6}$/, 'Must be the 6-digit code of your authenticator app')),
      }),
    ]),
  };
});

const accessTokenSchema = built(() =>
  v.pipe(v.string(), v.minLength(1, 'Must not be empty'), v.maxLength(8192, 'Too long')),
);

export const startTotpEnrolmentRequest = built(() => ({
  body: strictObject({ access_token: accessTokenSchema }),
}));

export const confirmTotpEnrolmentRequest = built(() => ({
  body: strictObject({
    access_token: accessTokenSchema,
    code: v.pipe(v.string(), v.regex(/^[0-9]{6}$/, 'Must be the 6-digit code of your authenticator app')),
  }),
}));

const allowedIpsSchema = built(() =>
  v.pipe(
    v.array(v.pipe(v.string(), v.minLength(1, 'Must not be empty'), v.maxLength(64, 'Too long'))),
    v.maxLength(20, 'At most 20 entries'),
    v.metadata({
      description: 'IPv4 or IPv6 addresses or CIDR blocks the key may be used from; empty: any address',
      examples: [['203.0.113.0/24']],
    }),
  ),
);
const apiKeyParam = built(() => v.object({ api_key: v.string() }));

export const getDashboardOverviewRequest = {};

export const listApiKeysRequest = built(() => ({ query: strictObject(page) }));

export const createApiKeyRequest = built(
  () =>
    ({
      body: v.optional(strictObject({ allowed_ips: v.optional(allowedIpsSchema) })),
      bodyOptional: true,
    }) as const,
);

export const rollApiKeyRequest = built(() => ({
  params: apiKeyParam,
  body: strictObject({
    old_key_expires_at: v.pipe(
      v.string(),
      v.check((value) => isIsoDateTime(value), 'Must be an ISO 8601 date-time (2026-11-30T10:15:00Z)'),
    ),
  }),
}));

/** No body, or `{}`. */
export const revokeApiKeyRequest = built(
  () => ({ params: apiKeyParam, body: v.optional(strictObject({})), bodyOptional: true }) as const,
);

export const setApiKeyIpsRequest = built(() => ({
  params: apiKeyParam,
  body: strictObject({ allowed_ips: allowedIpsSchema }),
}));
