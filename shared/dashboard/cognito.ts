import type {
  AdminCreateUserRequest,
  AdminCreateUserResponse,
  AdminDeleteUserRequest,
  AdminGetUserRequest,
  AdminGetUserResponse,
  AdminSetUserMFAPreferenceRequest,
  AdminSetUserMFAPreferenceResponse,
  AdminSetUserPasswordRequest,
  AdminSetUserPasswordResponse,
  AdminUserGlobalSignOutRequest,
  AdminUserGlobalSignOutResponse,
  AssociateSoftwareTokenRequest,
  AssociateSoftwareTokenResponse,
  GetUserRequest,
  GetUserResponse,
  InitiateAuthRequest,
  InitiateAuthResponse,
  RespondToAuthChallengeRequest,
  RespondToAuthChallengeResponse,
  SetUserMFAPreferenceRequest,
  SetUserMFAPreferenceResponse,
  VerifySoftwareTokenRequest,
  VerifySoftwareTokenResponse,
} from '@aws-sdk/client-cognito-identity-provider';
import { awsService, jsonTargetCall } from '#shared/aws/service.ts';
import { config } from '#shared/config.ts';

/** The Cognito operations the dashboard calls: request and answer (the SDK's types of them). */
interface Operations {
  InitiateAuth: [InitiateAuthRequest, InitiateAuthResponse];
  RespondToAuthChallenge: [RespondToAuthChallengeRequest, RespondToAuthChallengeResponse];
  GetUser: [GetUserRequest, GetUserResponse];
  AssociateSoftwareToken: [AssociateSoftwareTokenRequest, AssociateSoftwareTokenResponse];
  VerifySoftwareToken: [VerifySoftwareTokenRequest, VerifySoftwareTokenResponse];
  SetUserMFAPreference: [SetUserMFAPreferenceRequest, SetUserMFAPreferenceResponse];
  AdminCreateUser: [AdminCreateUserRequest, AdminCreateUserResponse];
  AdminSetUserPassword: [AdminSetUserPasswordRequest, AdminSetUserPasswordResponse];
  AdminSetUserMFAPreference: [AdminSetUserMFAPreferenceRequest, AdminSetUserMFAPreferenceResponse];
  AdminDeleteUser: [AdminDeleteUserRequest, object];
  AdminGetUser: [AdminGetUserRequest, AdminGetUserResponse];
  AdminUserGlobalSignOut: [AdminUserGlobalSignOutRequest, AdminUserGlobalSignOutResponse];
}

/** The name of each Cognito operation the dashboard and the operator CLI call. */
export type CognitoOperation = keyof Operations;

let send: ReturnType<typeof awsService> | undefined;

/**
 * Calls Cognito's user pool API (AWS JSON 1.1) as the SDK's client does, without the client
 * (`shared/aws/service.ts`: it was 30 KB of each sign-in function): the regional endpoint on AWS,
 * the local stand-in under `npm start`. The user calls (sign-in, challenges, TOTP) are not signed,
 * as the SDK sends them: the session or access token is the proof; the operator's Admin calls are.
 * A refusal is thrown with Cognito's error type as its name (`NotAuthorizedException`).
 */
export async function cognito<K extends keyof Operations>(
  operation: K,
  input: Operations[K][0],
): Promise<Operations[K][1]> {
  send ??= awsService({
    service: 'cognito-idp',
    region: config.region,
    endpoint: config.dashboard.cognitoEndpoint,
  });
  return (await send(
    jsonTargetCall(`AWSCognitoIdentityProviderService.${operation}`, input, operation.startsWith('Admin')),
  )) as Operations[K][1];
}

function missing(name: string): never {
  throw new Error(`${name} is not set`);
}

/** The dashboard's user pool, or a clear error where it is not configured. */
export function userPoolId(): string {
  return config.dashboard.userPoolId ?? missing('USER_POOL_ID');
}

/** The dashboard's app client (sign-in), or a clear error where it is not configured. */
export function appClientId(): string {
  return config.dashboard.clientId ?? missing('USER_POOL_CLIENT_ID');
}
