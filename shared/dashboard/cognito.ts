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

/** The dashboard's user pool and app client, or a clear error where they are not configured. */
export function dashboardPool(): { userPoolId: string; clientId: string } {
  const { userPoolId, clientId } = config.dashboard;
  if (!userPoolId || !clientId) throw new Error('USER_POOL_ID and USER_POOL_CLIENT_ID are not set');
  return { userPoolId, clientId };
}
