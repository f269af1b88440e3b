import { config } from '#shared/config.ts';

/** The CloudWatch namespace of the service's own metrics. */
export const METRICS_NAMESPACE = 'NairaPay';

/** Items a queue or stream consumer reported as failed (per `FunctionName`). */
export const FAILED_ITEMS_METRIC = 'FailedItems';

/**
 * The CloudWatch Embedded Metric Format record of `count` failed items of one batch: a JSON log
 * line CloudWatch Logs turns into the metric `NairaPay/FailedItems` with the dimension `FunctionName`.
 */
export function failedItemsRecord(functionName: string, count: number, timestamp: number) {
  return {
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: METRICS_NAMESPACE,
          Dimensions: [['FunctionName']],
          Metrics: [{ Name: FAILED_ITEMS_METRIC, Unit: 'Count' }],
        },
      ],
    },
    FunctionName: functionName,
    [FAILED_ITEMS_METRIC]: count,
  };
}

/**
 * Counts a batch's failed items as a metric. A consumer returns them (partial batch response),
 * it does not throw, so Lambda's `Errors` never sees them: without this a failing payment would
 * alert only when it reached the dead-letter queue. Written straight to stdout (one line, whatever
 * the log level, outside the logger's format) on Lambda only: locally there is no CloudWatch.
 */
export function countFailedItems(count: number): void {
  if (count === 0 || !config.functionName) return;
  process.stdout.write(`${JSON.stringify(failedItemsRecord(config.functionName, count, Date.now()))}\n`);
}
