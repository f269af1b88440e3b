/**
 * Log messages an operator must act on: the functions write them, and on AWS a metric filter on
 * the `message` of the JSON log raises an alarm (`infra/stack.ts`, README runbook).
 */

/** A payment nobody could be credited for, or held by a bound (kept in `unmatched-payments`). */
export const UNMATCHED_PAYMENT = 'payment kept as unmatched';

/**
 * A partner webhook delivery refused (401 `invalid_signature`). Many in a row mean the partner's
 * deliveries are all refused, so no payment is credited: the webhook secret (or the partner's key)
 * is wrong, after a rotation say. A few may be someone trying the public URL.
 */
export const WEBHOOK_REJECTED = 'webhook rejected';

/** A transfer still pending `TRANSFER_REQUERY_ALERT_HOURS` after it was sent. */
export const OVERDUE_TRANSFER = 'transfer pending past the alert window';

/**
 * The partner's word contradicts how a transfer was settled: paid after it failed and its money
 * was given back, or failed after it succeeded; or it gives another amount than the transfer's.
 * Nothing is changed by guess.
 */
export const CONTRADICTED_SETTLEMENT = 'transfer verdict contradicts its settled status';

/**
 * The partner answered about a transfer, but in a way that settles nothing: about another
 * reference, in another currency, with an amount that cannot be read, or saying its own request
 * failed. The transfer stays pending and is asked again; the same answer every time holds its money
 * until someone reconciles it with the partner.
 */
export const UNREADABLE_TRANSFER_ANSWER = 'partner answered about a transfer in a way that settles nothing';

/**
 * The partner answered a transfer's recipient with another account than the one asked for (the
 * same number at another bank, say), or shows none: never paid. The transfer ends failed and
 * refunded once the partner shows no transfer under its reference; many of them at once mean the
 * partner's answers changed shape, and every transfer to that bank or account fails until fixed.
 */
export const RECIPIENT_NOT_CONFIRMED = 'partner answered with a transfer recipient for another account';

/**
 * An event the fan-out can never fan out (the stream record is malformed, or DynamoDB refuses the
 * request it makes of it): skipped so the events after it are not held up, its deliveries never made.
 */
export const EVENT_NOT_FANNED_OUT = 'event skipped: it can never be fanned out';
