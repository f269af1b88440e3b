import '#shared/aws/node-version.ts';
import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { requestHandler } from '#shared/aws/clients.ts';
import { config } from '#shared/config.ts';

let client: CognitoIdentityProviderClient | undefined;

/**
 * The Cognito client of this process, created on first use (only the sign-in functions and the
 * operator CLI need it): the regional endpoint on AWS, the local stand-in under `npm start`.
 */
export function cognito(): CognitoIdentityProviderClient {
  client ??= new CognitoIdentityProviderClient({
    region: config.region,
    endpoint: config.dashboard.cognitoEndpoint,
    requestHandler,
  });
  return client;
}

/** The dashboard's user pool, or a clear error where it is not configured. */
export function userPoolId(): string {
  const { userPoolId } = config.dashboard;
  if (!userPoolId) throw new Error('USER_POOL_ID is not set');
  return userPoolId;
}

/** The dashboard's app client (sign-in), or a clear error where it is not configured. */
export function appClientId(): string {
  const { clientId } = config.dashboard;
  if (!clientId) throw new Error('USER_POOL_CLIENT_ID is not set');
  return clientId;
}
