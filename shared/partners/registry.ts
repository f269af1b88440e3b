import { config } from '#shared/config.ts';
import { configuredPartner } from '#shared/partners/configured.ts';
import { dynamoMemo } from '#shared/partners/memo.ts';
import type { BankingPartner } from '#shared/partners/partner.ts';

let configured: BankingPartner | undefined;

/**
 * The banking partner this deployment is configured with (`PARTNER`), made once per container,
 * keeping its partner ids under its own name in `partner-memos` (another partner's are not its).
 */
export function partner(): BankingPartner {
  configured ??= configuredPartner(dynamoMemo(config.partner.name));
  return configured;
}
