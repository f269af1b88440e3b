import { config } from '#shared/config.ts';
import type { BankingPartner } from '#shared/partners/partner.ts';
import { createSandboxPartner } from '#shared/partners/sandbox.ts';
import { webhookKeys } from '#shared/secrets.ts';

let configured: BankingPartner | undefined;

/** The banking partner this deployment is configured with (`PARTNER`), made once per container. */
export function partner(): BankingPartner {
  if (config.partner.name !== 'sandbox') throw new Error(`partner ${config.partner.name} has no adapter yet`);
  configured ??= createSandboxPartner({
    baseUrl: config.partner.baseUrl,
    timeoutMs: config.partner.timeoutMs,
    webhookKeys,
  });
  return configured;
}
