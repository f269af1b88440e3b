import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { authorizeRequest } from '#shared/api-keys/authorizer.ts';
import { logger } from '#shared/logger.ts';

/** `arn:…:execute-api:<region>:<account>:<api>/<stage>/<method>/<path>` → every method and path of the stage. */
function wholeStage(methodArn: string): string {
  const [arnPrefix = '', stage = '*'] = methodArn.split('/');
  return `${arnPrefix}/${stage}/*/*`;
}

function policy(effect: 'Allow' | 'Deny', resource: string): APIGatewayAuthorizerResult['policyDocument'] {
  return {
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }],
  };
}

/**
 * The REQUEST authorizer of every `api_key` route (DESIGN.md "Who is calling"). Valid credentials:
 * Allow for the whole stage (API Gateway caches the verdict per key, secret and client IP), the key
 * handed to the usage plan, the merchant to the handler. Invalid: `Unauthorized` (the 401), or a
 * Deny (the gateway's 429) once the client IP has spent its failed attempts.
 */
export const handler = async (
  event: APIGatewayRequestAuthorizerEvent,
): Promise<APIGatewayAuthorizerResult> => {
  logger.resetKeys();
  logger.appendKeys({ request_id: event.requestContext?.requestId });
  const verdict = await authorizeRequest(event);
  const resource = wholeStage(event.methodArn);
  switch (verdict.outcome) {
    case 'unauthorized':
      // The one error API Gateway turns into its UNAUTHORIZED response (401).
      throw new Error('Unauthorized');
    case 'limited':
      return {
        principalId: 'rate-limited',
        policyDocument: policy('Deny', resource),
        context: { retryAfterSeconds: verdict.retryAfterSeconds },
      };
    case 'allow':
      return {
        principalId: verdict.caller.merchantId,
        policyDocument: policy('Allow', resource),
        usageIdentifierKey: verdict.caller.apiKey,
        context: { merchantId: verdict.caller.merchantId, apiKey: verdict.caller.apiKey },
      };
  }
};
