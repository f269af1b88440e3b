import * as v from 'valibot';
import { config, type FeeTier } from '#shared/config.ts';

/** A schema built only in bundles that use it (as `built` in `shared/contract/requests.ts`). */
/* @__NO_SIDE_EFFECTS__ */
function built<T>(build: () => T): T {
  return build();
}

/** NGN 1 = 100 kobo. */
export const KOBO_PER_NAIRA = 100;

/** Smallest and largest amount of a transfer or virtual account: NGN 1 to NGN 10,000,000. */
export const MIN_AMOUNT = 100;
export const MAX_AMOUNT = 10_000_000 * KOBO_PER_NAIRA;

/**
 * An amount in kobo as requests carry it: a JSON integer (never a string, fraction or unsafe
 * number) between NGN 1 and NGN 10,000,000.
 */
export const amountSchema = built(() =>
  v.pipe(
    v.number('Must be an integer number of kobo'),
    v.safeInteger('Must be an integer number of kobo'),
    v.minValue(MIN_AMOUNT, `Must be at least ${MIN_AMOUNT} kobo`),
    v.maxValue(MAX_AMOUNT, `Must be at most ${MAX_AMOUNT} kobo`),
    v.metadata({
      description: 'Amount in kobo (NGN 1 = 100 kobo): 100 (NGN 1) to 1,000,000,000 (NGN 10,000,000)',
      examples: [250000],
    }),
  ),
);

/** The fee (kobo) of a transfer of `amount` kobo under a schedule (default: the configured one). */
export function transferFee(amount: number, tiers: readonly FeeTier[] = config.transferFeeTiers): number {
  const tier = tiers.find((candidate) => amount <= candidate.upTo);
  if (!tier) throw new RangeError(`no fee tier for ${amount}`);
  return tier.fee;
}
