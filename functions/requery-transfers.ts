import { logger } from '#shared/logger.ts';
import { requeryPendingTransfers } from '#shared/transfers/requery.ts';

/**
 * The scheduled requery (API.md §7): EventBridge on AWS, the local runtime's timer locally. Settles
 * pending transfers whose webhook never came; a failure throws, so the errors alarm fires.
 */
export const handler = async (): Promise<void> => {
  logger.resetKeys();
  const summary = await requeryPendingTransfers();
  if (summary.checked > 0) logger.info('requery round', { ...summary });
};
