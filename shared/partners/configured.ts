import { config } from '#shared/config.ts';
import type { PartnerMemo } from '#shared/partners/memo.ts';
import type { BankingPartner } from '#shared/partners/partner.ts';
import { createPaystackPartner } from '#shared/partners/paystack.ts';
import { createSandboxPartner } from '#shared/partners/sandbox.ts';
import { paystackSecretKey, webhookKeys } from '#shared/secrets.ts';

/**
 * The banking partner this deployment is configured with (`PARTNER`), keeping partner ids in `memo`.
 * Callers keep one per container: `partner()` of `registry.ts`, or the webhook's `deliveryReader()`.
 */
export function configuredPartner(memo: PartnerMemo): BankingPartner {
  return config.partner.name === 'paystack'
    ? createPaystackPartner({
        baseUrl: config.paystack.baseUrl,
        secretKey: paystackSecretKey,
        timeoutMs: config.partner.timeoutMs,
        webhookIps: config.paystack.webhookIps,
        emailDomain: config.paystack.emailDomain,
        dvaBank: config.paystack.dvaBank,
        memo,
      })
    : createSandboxPartner({
        baseUrl: config.partner.baseUrl,
        timeoutMs: config.partner.timeoutMs,
        webhookKeys,
      });
}
