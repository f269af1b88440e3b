import type { Context } from 'aws-lambda';
import { config } from '#shared/config.ts';
import { ANSWER_RESERVE_MS, withinInvocation } from '#shared/deadline.ts';
import { logger } from '#shared/logger.ts';
import { requeryPendingTransfers } from '#shared/transfers/requery.ts';

/**
 * The scheduled requery (API.md §7): EventBridge on AWS, the local runtime's timer locally. Settles
 * pending transfers whose webhook never came; a failure throws, so the errors alarm fires. It asks
 * nothing new once less than one partner call (and a margin) of its time is left.
 */
export const handler = async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
  logger.resetKeys();
  const round = async () => {
    const deadline = context
      ? Date.now() + context.getRemainingTimeInMillis() - config.partner.timeoutMs - ANSWER_RESERVE_MS
      : undefined;
    const summary = await requeryPendingTransfers(Date.now(), { deadline });
    if (summary.checked + summary.notAsked > 0) logger.info('requery round', { ...summary });
  };
  await withinInvocation(context, round);
};
