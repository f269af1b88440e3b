import { config } from '#shared/config.ts';
import type { PartnerMemo } from '#shared/partners/memo.ts';
import type { BankingPartner, PartnerName } from '#shared/partners/partner.ts';
import { createPaystackPartner } from '#shared/partners/paystack.ts';
import { createSandboxPartner } from '#shared/partners/sandbox.ts';
import { paystackSecretKey, webhookKeys } from '#shared/secrets.ts';

/**
 * Each partner's adapter, made from this deployment's configuration: one entry per name of
 * `PARTNER_NAMES`, so a partner named there and not here does not compile.
 */
const ADAPTERS: Record<PartnerName, (memo: PartnerMemo) => BankingPartner> = {
  sandbox: () =>
    createSandboxPartner({
      baseUrl: config.partner.baseUrl,
      timeoutMs: config.partner.timeoutMs,
      webhookKeys,
    }),
  paystack: (memo) =>
    createPaystackPartner({
      baseUrl: config.paystack.baseUrl,
      secretKey: paystackSecretKey,
      timeoutMs: config.partner.timeoutMs,
      webhookIps: config.paystack.webhookIps,
      emailDomain: config.paystack.emailDomain,
      dvaBank: config.paystack.dvaBank,
      memo,
    }),
};

/**
 * The banking partner this deployment is configured with (`PARTNER`), keeping partner ids in `memo`.
 * Callers keep one per container: `partner()` of `registry.ts`, or the webhook's `deliveryReader()`.
 */
export function configuredPartner(memo: PartnerMemo): BankingPartner {
  return ADAPTERS[config.partner.name](memo);
}
