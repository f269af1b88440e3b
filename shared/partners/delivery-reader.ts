import { configuredPartner } from '#shared/partners/configured.ts';
import type { PartnerMemo } from '#shared/partners/memo.ts';
import type { BankingPartner } from '#shared/partners/partner.ts';

/** What the partner webhook asks of the partner: who it is, whether a delivery is authentic, what it says. */
export type DeliveryReader = Pick<BankingPartner, 'name' | 'verifyDelivery' | 'eventsOf'>;

/**
 * The webhook never sends anything, so it never reads or writes partner ids: its partner gets a memo
 * that remembers nothing (a memo is an optimisation only; see `PartnerMemo`), and the webhook
 * function loads no DynamoDB client at all (about 56 KB of bundle and the client's construction).
 */
const NO_MEMO: PartnerMemo = {
  get: async () => undefined,
  put: async () => {},
};

let reader: DeliveryReader | undefined;

/** The configured partner as the partner webhook uses it, made once per container. */
export function deliveryReader(): DeliveryReader {
  reader ??= configuredPartner(NO_MEMO);
  return reader;
}
