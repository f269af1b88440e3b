import { configuredPartner } from '#shared/partners/configured.ts';
import { dynamoMemo } from '#shared/partners/memo.ts';
import type { BankingPartner } from '#shared/partners/partner.ts';

let configured: BankingPartner | undefined;

/** The banking partner this deployment is configured with (`PARTNER`), made once per container. */
export function partner(): BankingPartner {
  configured ??= configuredPartner(dynamoMemo('paystack'));
  return configured;
}
