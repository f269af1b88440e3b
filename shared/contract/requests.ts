import * as z from 'zod/mini';
import { EVENT_TYPES } from '#shared/events/events.ts';
import { amountSchema } from '#shared/money.ts';
import { cursorSchema, limitSchema } from '#shared/pagination.ts';
import {
  accountNumberSchema,
  bankCodeSchema,
  isIsoDate,
  isIsoDateTime,
  opaqueIdSchema,
  referenceSchema,
  textSchema,
} from '#shared/schemas.ts';

/**
 * The request schemas of every endpoint: what the handlers validate, and what the OpenAPI document
 * shows. One named export per endpoint, so a handler's bundle carries only its own.
 */

/**
 * Builds a schema at module load only if the bundle uses it: esbuild drops a `built` call whose
 * result nothing reads (`@__NO_SIDE_EFFECTS__`, honoured within this file), so each handler's
 * bundle carries and builds only its own schemas, and zod only as far as they need it.
 */
/* @__NO_SIDE_EFFECTS__ */
function built<T>(build: () => T): T {
  return build();
}

/** An ISO date or date-time; a bare date means the start (`from`) or the end (`to`) of that day. */
const dateBound = (end: 'start' | 'end') =>
  z.optional(
    z.pipe(
      z
        .string()
        .check(
          z.refine((value) => isIsoDate(value) || isIsoDateTime(value), {
            message: 'Must be a real ISO 8601 date or date-time (2026-11-30 or 2026-11-30T10:15:00Z)',
          }),
        )
        .register(z.globalRegistry, {
          description: `ISO 8601 date or date-time (UTC); a bare date covers the whole day (inclusive ${end === 'start' ? 'start' : 'end'})`,
          examples: [end === 'start' ? '2026-11-01' : '2026-11-30'],
        }),
      z.transform((value) =>
        isIsoDate(value)
          ? `${value}T${end === 'start' ? '00:00:00.000' : '23:59:59.999'}Z`
          : new Date(value).toISOString(),
      ),
    ),
  );

const page = { limit: limitSchema, cursor: cursorSchema };
const referenceParam = built(() => z.object({ reference: z.string() }));

export const listBanksRequest = {};

export const validateAccountRequest = built(() => ({
  body: z.strictObject({ account_number: accountNumberSchema, bank_code: bankCodeSchema }),
}));

export const getBalanceRequest = {};

export const createBeneficiaryRequest = built(() => ({
  body: z.strictObject({
    session_id: z.optional(opaqueIdSchema),
    account_number: z.optional(accountNumberSchema),
    bank_code: z.optional(bankCodeSchema),
    nickname: z.optional(textSchema(50)),
  }),
}));

export const listBeneficiariesRequest = built(() => ({ query: z.strictObject(page) }));

export const createTransferRequest = built(() => ({
  body: z.strictObject({
    reference: referenceSchema,
    amount: amountSchema,
    beneficiary_id: z.optional(opaqueIdSchema),
    session_id: z.optional(opaqueIdSchema),
    account_number: z.optional(accountNumberSchema),
    bank_code: z.optional(bankCodeSchema),
    narration: z.optional(textSchema(100)),
  }),
}));

export const listTransactionsRequest = built(() => ({
  query: z.strictObject({
    type: z.optional(z.enum(['credit', 'debit'])),
    status: z.optional(z.enum(['pending', 'success', 'failed', 'reversed'])),
    from: dateBound('start'),
    to: dateBound('end'),
    ...page,
  }),
}));

export const getTransactionRequest = { params: referenceParam };

export const createVirtualAccountRequest = built(() => ({
  body: z.strictObject({
    amount: amountSchema,
    reference: z.optional(referenceSchema),
    expires_in_minutes: z._default(
      z
        .int('Must be a whole number of minutes')
        .check(z.gte(5, 'Must be at least 5'), z.lte(1440, 'Must be at most 1440')),
      30,
    ),
    customer: z.optional(
      z.strictObject({
        name: textSchema(100).check(z.minLength(1, 'Must not be empty')),
        email: z.email('Must be an email address').check(z.maxLength(254)),
      }),
    ),
  }),
}));

export const getPaymentRequest = { params: referenceParam };

export const listVirtualAccountsRequest = built(() => ({
  query: z.strictObject({
    status: z.optional(z.enum(['pending', 'partially_paid', 'paid', 'overpaid', 'expired'])),
    ...page,
  }),
}));

export const listEventsRequest = built(() => ({
  query: z.strictObject({ type: z.optional(z.enum(EVENT_TYPES)), ...page }),
}));

export const getEventRequest = built(() => ({ params: z.object({ id: z.string() }) }));

export const createWebhookEndpointRequest = built(() => ({
  body: z.strictObject({
    url: z.string().check(z.minLength(1, 'Must not be empty'), z.maxLength(2048, 'Too long')),
    events: z.optional(
      z.array(z.enum(EVENT_TYPES)).check(z.minLength(1, 'Give at least one type, or leave out')),
    ),
    description: z.optional(textSchema(200)),
  }),
}));

export const listWebhookEndpointsRequest = built(() => ({ query: z.strictObject(page) }));

const endpointParam = built(() => z.object({ id: z.string() }));

export const deleteWebhookEndpointRequest = { params: endpointParam };

/** No body, or `{}`. */
export const rotateWebhookSecretRequest = built(
  () =>
    ({
      params: endpointParam,
      body: z.optional(z.strictObject({})),
      bodyOptional: true,
    }) as const,
);

/** No body, `{}`, or one endpoint. */
export const redeliverEventRequest = built(
  () =>
    ({
      params: z.object({ id: z.string() }),
      body: z.optional(z.strictObject({ endpoint_id: z.optional(opaqueIdSchema) })),
      bodyOptional: true,
    }) as const,
);

const emailSchema = built(() =>
  z
    .string()
    .check(z.maxLength(254, 'Too long'), z.email('Must be an email address'))
    .register(z.globalRegistry, { description: "The dashboard user's email", examples: ['ada@acme.ng'] }),
);
const passwordSchema = built(() =>
  z.string().check(z.minLength(1, 'Must not be empty'), z.maxLength(256, 'Too long')),
);

export const createDashboardSessionRequest = built(() => ({
  body: z.strictObject({ email: emailSchema, password: passwordSchema }),
}));

export const answerDashboardChallengeRequest = built(() => ({
  body: z.strictObject({
    email: emailSchema,
    challenge: z.enum(['NEW_PASSWORD_REQUIRED', 'SOFTWARE_TOKEN_MFA']),
    session: z.string().check(z.minLength(1, 'Must not be empty'), z.maxLength(4096, 'Too long')),
    new_password: z.optional(passwordSchema),
    code: z.optional(
      z.string().check(z.regex(/^\d{6}$/, 'Must be the 6-digit code of your authenticator app')),
    ),
  }),
}));

const accessTokenSchema = built(() =>
  z.string().check(z.minLength(1, 'Must not be empty'), z.maxLength(8192, 'Too long')),
);

export const startTotpEnrolmentRequest = built(() => ({
  body: z.strictObject({ access_token: accessTokenSchema }),
}));

export const confirmTotpEnrolmentRequest = built(() => ({
  body: z.strictObject({
    access_token: accessTokenSchema,
    code: z.string().check(z.regex(/^\d{6}$/, 'Must be the 6-digit code of your authenticator app')),
  }),
}));

const allowedIpsSchema = built(() =>
  z
    .array(z.string().check(z.minLength(1, 'Must not be empty'), z.maxLength(64, 'Too long')))
    .check(z.maxLength(20, 'At most 20 entries'))
    .register(z.globalRegistry, {
      description: 'IPv4 or IPv6 addresses or CIDR blocks the key may be used from; empty: any address',
      examples: [['203.0.113.0/24']],
    }),
);
const apiKeyParam = built(() => z.object({ api_key: z.string() }));

export const getDashboardOverviewRequest = {};

export const listApiKeysRequest = built(() => ({ query: z.strictObject(page) }));

export const createApiKeyRequest = built(
  () =>
    ({
      body: z.optional(z.strictObject({ allowed_ips: z.optional(allowedIpsSchema) })),
      bodyOptional: true,
    }) as const,
);

export const rollApiKeyRequest = built(() => ({
  params: apiKeyParam,
  body: z.strictObject({
    old_key_expires_at: z.string().check(
      z.refine((value) => isIsoDateTime(value), {
        message: 'Must be an ISO 8601 date-time (2026-11-30T10:15:00Z)',
      }),
    ),
  }),
}));

/** No body, or `{}`. */
export const revokeApiKeyRequest = built(
  () => ({ params: apiKeyParam, body: z.optional(z.strictObject({})), bodyOptional: true }) as const,
);

export const setApiKeyIpsRequest = built(() => ({
  params: apiKeyParam,
  body: z.strictObject({ allowed_ips: allowedIpsSchema }),
}));
