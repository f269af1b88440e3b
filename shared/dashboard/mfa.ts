import { cognito } from '#shared/dashboard/cognito.ts';
import { Unauthorized, ValidationError } from '#shared/errors.ts';

/**
 * TOTP second factor for dashboard users (API.md §10: available, not required). Cognito's own
 * enrolment, on the user's access token: a secret for the authenticator app, then a first code
 * that proves it and turns TOTP on. From then on every sign-in asks for a code.
 */

/** The access token must be the signed-in user's own: the session's `sub` and the token's agree. */
function ownAccessToken(accessToken: string, sub: string): string {
  let claims: Record<string, unknown> = {};
  try {
    claims = JSON.parse(Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString('utf8'));
  } catch {
    // Not a JWT at all: refused below.
  }
  if (claims.sub !== sub || claims.token_use !== 'access')
    throw new Unauthorized('access token of another user');
  return accessToken;
}

const refused = (error: unknown): never => {
  const name = (error as Error)?.name ?? '';
  if (name === 'NotAuthorizedException' || name === 'InvalidParameterException') {
    throw new Unauthorized(`MFA call refused: ${name}`);
  }
  if (name === 'CodeMismatchException' || name === 'EnableSoftwareTokenMFAException') {
    throw new ValidationError([{ field: 'code', message: 'The code does not match: try the next one' }]);
  }
  throw error;
};

/**
 * Starts enrolment: the secret to put in the authenticator app, and an `otpauth://` URI for it.
 * Refused for a user whose TOTP is already on: a new secret replaces the one in use before it is
 * confirmed, which on Cognito turns the second factor off until then (an abandoned enrolment leaves
 * the account on its password alone) and in the local stand-in locks the user out.
 */
export async function startTotpEnrolment(accessToken: string, user: { sub: string; email?: string }) {
  const token = ownAccessToken(accessToken, user.sub);
  const me = await cognito('GetUser', { AccessToken: token }).catch(refused);
  if ((me.UserMFASettingList ?? []).includes('SOFTWARE_TOKEN_MFA')) {
    throw new ValidationError(
      [{ field: 'access_token', message: 'TOTP is already on for this user' }],
      'TOTP is already on for this user: it is not started again',
    );
  }
  const answer = await cognito('AssociateSoftwareToken', { AccessToken: token }).catch(refused);
  const secret = answer.SecretCode ?? '';
  const label = encodeURIComponent(`NairaPay:${user.email ?? user.sub}`);
  return { secret, otpauth_uri: `otpauth://totp/${label}?secret=${secret}&issuer=NairaPay` };
}

/** Finishes enrolment with the app's first code; TOTP is then required at every sign-in. */
export async function confirmTotpEnrolment(accessToken: string, code: string, user: { sub: string }) {
  const token = ownAccessToken(accessToken, user.sub);
  const verified = await cognito('VerifySoftwareToken', {
    AccessToken: token,
    UserCode: code,
    FriendlyDeviceName: 'dashboard',
  }).catch((error: unknown) => {
    // Cognito took the token (a bad one is its NotAuthorizedException) but no secret was associated
    // with the user: enrolment was never started. A 400, not a 401 that would sign the user out of
    // the dashboard.
    if ((error as Error)?.name === 'InvalidParameterException') {
      throw new ValidationError([
        { field: 'code', message: 'No TOTP enrolment was started: start one first, then confirm it' },
      ]);
    }
    return refused(error);
  });
  if (verified.Status !== 'SUCCESS') refused({ name: 'CodeMismatchException' });
  await cognito('SetUserMFAPreference', {
    AccessToken: token,
    SoftwareTokenMfaSettings: { Enabled: true, PreferredMfa: true },
  }).catch(refused);
  return { totp_enabled: true };
}
