/** AWS error names that mean "too many requests": they pass once the load falls. */
const THROTTLING = new Set([
  'ThrottlingException',
  'Throttling',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
]);

/**
 * Whether a failure may pass by itself, so that trying the same input again later can succeed: a
 * service's own fault, throttling, or the network (a timeout, a reset). Not: a request the service
 * refused as it was sent (a validation error, a missing key), nor a programming error on the input
 * (a `TypeError` or `SyntaxError` reading it), which fail again however often they are tried.
 */
export function isTransient(error: unknown): boolean {
  const failure = error as { $fault?: string; $retryable?: unknown; name?: string } | null | undefined;
  if (failure?.$fault !== undefined) {
    return (
      failure.$fault === 'server' || failure.$retryable !== undefined || THROTTLING.has(failure.name ?? '')
    );
  }
  return !(error instanceof TypeError || error instanceof SyntaxError || error instanceof RangeError);
}
