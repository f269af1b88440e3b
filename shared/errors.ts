/** Machine-readable error codes of API.md §3. */
export type ErrorCode =
  | 'validation_error'
  | 'unknown_bank'
  | 'invalid_account_number'
  | 'unauthorized'
  | 'invalid_signature'
  | 'not_found'
  | 'route_not_found'
  | 'method_not_allowed'
  | 'duplicate_reference'
  | 'payload_too_large'
  | 'request_timeout'
  | 'unsupported_media_type'
  | 'account_not_found'
  | 'insufficient_funds'
  | 'beneficiary_not_found'
  | 'session_expired'
  | 'bank_not_supported'
  | 'limit_reached'
  | 'invalid_url'
  | 'rate_limited'
  | 'internal_error'
  | 'partner_unavailable';

/** One field-level problem of a rejected request. */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * An error the API reports to its caller: domain code throws these, and the HTTP stack turns them
 * into the envelope with the status that belongs to `code` (see `shared/http/errors.ts`).
 */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: details.cause });
    this.name = new.target.name;
  }
}

export class ValidationError extends ApiError {
  constructor(errors: FieldError[], message = 'Request validation failed') {
    super('validation_error', message, { errors });
  }
}

export class Unauthorized extends ApiError {
  constructor(reason: string) {
    // The reason is for logs only: every authentication failure answers the same body.
    super('unauthorized', 'Invalid API credentials', { cause: reason });
  }
}

export class NotFound extends ApiError {
  constructor(what = 'Resource') {
    super('not_found', `${what} not found`);
  }
}

/** Another method than the path serves: 405 with `Allow` naming the ones it does. */
export class MethodNotAllowed extends ApiError {
  constructor(allowed: readonly string[]) {
    super('method_not_allowed', 'Method not allowed', { headers: { Allow: allowed.join(', ') } });
  }
}

export class UnknownBank extends ApiError {
  constructor() {
    super('unknown_bank', 'bank_code is not a supported bank');
  }
}

export class InvalidAccountNumber extends ApiError {
  constructor() {
    super('invalid_account_number', 'account_number is not a valid NUBAN for this bank');
  }
}

export class PartnerUnavailable extends ApiError {
  constructor(retryAfterSeconds: number, cause?: unknown) {
    super('partner_unavailable', 'The banking partner is unavailable, please retry', {
      headers: { 'Retry-After': String(retryAfterSeconds) },
      cause,
    });
  }
}

/**
 * The partner was not called at all: the invocation had no time left for the call
 * (`shared/deadline.ts`). Nothing reached it.
 */
export class PartnerNotCalled extends PartnerUnavailable {}

/**
 * The partner answered, but its answer about a transfer settles nothing (another reference, another
 * currency, an amount that cannot be read): no verdict, as if it had not answered, with `problem`
 * saying why, for whoever reports the transfer.
 */
export class PartnerAnswerUnreadable extends PartnerUnavailable {
  constructor(
    retryAfterSeconds: number,
    readonly problem: string,
  ) {
    super(retryAfterSeconds, problem);
  }
}

/**
 * The partner was never given a transfer: no request carrying it was made (no time left, a step
 * before it failed, the partner's key changed since the hand-over was counted). A hand-over that
 * ends so is marked as never sent (`markUnposted`): the next send is what this one would have been.
 */
export class TransferNotSent extends PartnerUnavailable {}

/** Over a rate limit: 429 with `Retry-After` (seconds). */
export class RateLimited extends ApiError {
  constructor(retryAfterSeconds: number) {
    super('rate_limited', 'Rate limit exceeded', { headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}

export class DuplicateReference extends ApiError {
  constructor() {
    super('duplicate_reference', 'This reference was already used with different parameters');
  }
}

/** An `Idempotency-Key` sent again within its 24 hours with another request (Stripe answers so too). */
export class IdempotencyKeyReused extends ApiError {
  constructor() {
    super('duplicate_reference', 'This Idempotency-Key was already used with a different request');
  }
}

export class AccountNotFound extends ApiError {
  constructor() {
    super('account_not_found', 'The bank reports that this account does not exist');
  }
}

export class BankNotSupported extends ApiError {
  constructor() {
    super('bank_not_supported', 'The banking partner cannot pay accounts at this bank');
  }
}

export class InvalidUrl extends ApiError {
  constructor(reason: string) {
    super('invalid_url', `Invalid webhook URL: ${reason}`);
  }
}

export class LimitReached extends ApiError {
  constructor(message: string) {
    super('limit_reached', message);
  }
}
