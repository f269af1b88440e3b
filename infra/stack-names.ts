/*
 * Names the stack and the operator CLI share: what one writes at deploy, the other reads.
 */

/** The usage plan that limits each API key of a stage (the dashboard's key routes find it by name). */
export const usagePlanName = (stage: string) => `naira-${stage}-per-key`;

/** Where the operator CLI finds a stage's resources (an SSM parameter the stack writes). */
export const operatorConfigParameter = (stage: string) => `/naira/${stage}/operator-config`;

/**
 * The service settings a stage may set at deploy, by their variable's name (`-c MAX_BALANCE=…`),
 * checked at synth as the functions read them (`shared/config-schema.ts`): a mistake fails the
 * synth, not a function's cold start. The operator CLI's `--stage` runs with the same values. Not
 * the local-only ones, those the stack sets itself, nor those its timeouts and the contract's
 * deadlines assume (partner timeout, auth cache, webhook retries).
 */
export const DEPLOY_SETTINGS = [
  'TRANSFER_FEE_TIERS',
  'MAX_PAYMENT_AMOUNT',
  'MAX_BALANCE',
  'PAYSTACK_EMAIL_DOMAIN',
  'PAYSTACK_DVA_BANK',
  'TRANSFER_REQUERY_AFTER_SECONDS',
  'TRANSFER_REQUERY_ALERT_HOURS',
  'NAME_ENQUIRY_CACHE_SECONDS',
  'LOG_LEVEL',
] as const;
