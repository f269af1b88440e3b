import type { Context } from 'aws-lambda';

/**
 * The context Lambda gives an invocation, as the local runtime gives it: the function's name, the
 * request id, and the time left of `timeoutMs` from now (`getRemainingTimeInMillis`, which sets the
 * outside calls' deadline, `shared/deadline.ts`).
 */
export function localLambdaContext(functionName: string, requestId: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
