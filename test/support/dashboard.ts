import { randomUUID } from 'node:crypto';
import { InitiateAuthCommand } from '@aws-sdk/client-cognito-identity-provider';
import { appClientId, cognito } from '#shared/dashboard/cognito.ts';
import { createDashboardUser } from '#shared/dashboard/users.ts';

/** A password the pool's policy accepts. */
export const aPassword = () => `Pw-${randomUUID()}-Aa1!`;

/**
 * A signed-in dashboard user of a merchant, made in the test run's local Cognito: its ID token and
 * the header that authenticates as it on `session` routes.
 */
export async function aDashboardUser(merchantId: string) {
  const email = `user-${randomUUID().slice(0, 8)}@example.ng`;
  const password = aPassword();
  const { sub } = await createDashboardUser({ merchantId, email, password, permanent: true });
  const idToken = await signInAt(email, password);
  return { email, password, sub, idToken, headers: { Authorization: `Bearer ${idToken}` } };
}

/** Signs in at Cognito directly (the way the sign-in route does), returning the ID token. */
export async function signInAt(email: string, password: string): Promise<string> {
  const result = await cognito().send(
    new InitiateAuthCommand({
      ClientId: appClientId(),
      AuthFlow: 'USER_PASSWORD_AUTH',
      AuthParameters: { USERNAME: email, PASSWORD: password },
    }),
  );
  const token = result.AuthenticationResult?.IdToken;
  if (!token) throw new Error(`no ID token for ${email}: ${result.ChallengeName ?? 'no challenge'}`);
  return token;
}
