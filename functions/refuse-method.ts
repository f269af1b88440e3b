import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { allowedMethods } from '#shared/definitions/routes.ts';
import { MethodNotAllowed } from '#shared/errors.ts';
import { errorResult } from '#shared/http/errors.ts';

/**
 * Any other method on a served path (API Gateway's `ANY` there): 405 with `Allow`, whatever the
 * request's content type or body. A Lambda proxy integration reads neither, where a mock
 * integration needs a mapping template per content type and answers 415 to any other.
 */
export const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> =>
  errorResult(new MethodNotAllowed(allowedMethods(event.resource)), event.requestContext.requestId);
