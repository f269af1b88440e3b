import { config } from '#shared/config.ts';
import { dynamoMemo } from '#shared/partners/memo.ts';
import type { BankingPartner } from '#shared/partners/partner.ts';
import { createPaystackPartner } from '#shared/partners/paystack.ts';
import { createSandboxPartner } from '#shared/partners/sandbox.ts';
import { paystackSecretKey, webhookKeys } from '#shared/secrets.ts';

let configured: BankingPartner | undefined;

/** The banking partner this deployment is configured with (`PARTNER`), made once per container. */
export function partner(): BankingPartner {
  configured ??=
    config.partner.name === 'paystack'
      ? createPaystackPartner({
          baseUrl: config.paystack.baseUrl,
          secretKey: paystackSecretKey,
          timeoutMs: config.partner.timeoutMs,
          webhookIps: config.paystack.webhookIps,
          emailDomain: config.paystack.emailDomain,
          dvaBank: config.paystack.dvaBank,
          memo: dynamoMemo('paystack'),
        })
      : createSandboxPartner({
          baseUrl: config.partner.baseUrl,
          timeoutMs: config.partner.timeoutMs,
          webhookKeys,
        });
  return configured;
}
