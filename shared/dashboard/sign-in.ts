import type { AuthenticationResultType, ChallengeNameType } from '@aws-sdk/client-cognito-identity-provider';
import type * as v from 'valibot';
import type { answerDashboardChallengeRequest } from '#shared/contract/requests.ts';
import { appClientId, cognito } from '#shared/dashboard/cognito.ts';
import { DASHBOARD_USER_POOL } from '#shared/dashboard/user-pool.ts';
import { ApiError, Unauthorized, ValidationError } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';

/**
 * Signing in to the dashboard (API.md §10) at Cognito: email and password, then any challenge
 * Cognito sets (an invited user's new password, a TOTP code). The session routes accept the ID
 * token only; the access token is for Cognito's own user calls (TOTP enrolment), which cannot
 * change the user's merchant: that attribute is immutable and not writable by the app client.
 */

export type Challenge = 'NEW_PASSWORD_REQUIRED' | 'SOFTWARE_TOKEN_MFA';

export type SignInResult =
  | { id_token: string; access_token: string; expires_in: number; email: string; merchant_id: string }
  | { challenge: Challenge; session: string };

/** Cognito's refusals of a sign-in: all the one 401, whichever it was (no hint which part was wrong). */
const REFUSALS = new Set([
  'NotAuthorizedException',
  'UserNotFoundException',
  'UserNotConfirmedException',
  'PasswordResetRequiredException',
  // The local stand-in's answer to a wrong password.
  'InvalidPasswordException',
  'CodeMismatchException',
  'ExpiredCodeException',
]);

const THROTTLED = new Set([
  'TooManyRequestsException',
  'LimitExceededException',
  'TooManyFailedAttemptsException',
]);

/**
 * Cognito's refusal of `email`'s sign-in (or challenge answer) as the API's answer. A refusal is
 * logged with Cognito's reason and the email, what on-call needs to answer "why can't I sign in?"
 * (the answer itself says neither); the email is one the schema took as an address, never a
 * password typed into the wrong field.
 */
const refusalOf =
  (email: string, step: 'password' | Challenge) =>
  (error: unknown): never => {
    const name = (error as Error)?.name ?? '';
    if (REFUSALS.has(name) || THROTTLED.has(name)) {
      // Cognito's message tells apart what its one name covers ("Incorrect username or password.",
      // "User is disabled.", "Password attempts exceeded").
      const detail = String((error as Error).message ?? '').slice(0, 200);
      logger.warn('dashboard sign-in refused', { reason: name, detail, email, step });
    }
    if (REFUSALS.has(name)) throw new Unauthorized(`sign-in refused: ${name}`);
    if (THROTTLED.has(name)) {
      throw new ApiError('rate_limited', 'Too many sign-in attempts: try again in a minute', {
        headers: { 'Retry-After': '60' },
      });
    }
    throw error;
  };

function claimsOf(idToken: string): Record<string, unknown> {
  const [, payload = ''] = idToken.split('.');
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}

function resultOf(
  email: string,
  result: AuthenticationResultType | undefined,
  challenge: ChallengeNameType | undefined,
  session: string | undefined,
): SignInResult {
  if (result?.IdToken) {
    // From Cognito itself over TLS: read, not verified again (every session route verifies it).
    const claims = claimsOf(result.IdToken);
    const merchantId = claims[`custom:${DASHBOARD_USER_POOL.merchantAttribute}`];
    if (typeof merchantId !== 'string' || !merchantId) {
      logger.warn('dashboard user without a merchant signed in', { email });
      throw new Unauthorized('user has no merchant');
    }
    return {
      id_token: result.IdToken,
      access_token: result.AccessToken ?? '',
      // The ID token's own lifetime, which the session routes check (an hour, the app client's
      // setting, on AWS and locally alike); Cognito's ExpiresIn only if the token has none.
      expires_in:
        typeof claims.exp === 'number' && claims.exp * 1000 > Date.now()
          ? Math.floor(claims.exp - Date.now() / 1000)
          : (result.ExpiresIn ?? DASHBOARD_USER_POOL.tokenValidityMinutes * 60),
      email,
      merchant_id: merchantId,
    };
  }
  if ((challenge === 'NEW_PASSWORD_REQUIRED' || challenge === 'SOFTWARE_TOKEN_MFA') && session) {
    return { challenge, session };
  }
  logger.error('unexpected Cognito sign-in answer', { challenge });
  throw new Unauthorized(`unsupported challenge ${challenge ?? 'none'}`);
}

/** Email and password: a session, or the challenge to answer first. */
export async function signIn(email: string, password: string): Promise<SignInResult> {
  const normalized = email.trim().toLowerCase();
  const answer = await cognito('InitiateAuth', {
    ClientId: appClientId(),
    AuthFlow: 'USER_PASSWORD_AUTH',
    AuthParameters: { USERNAME: normalized, PASSWORD: password },
  }).catch(refusalOf(normalized, 'password'));
  return resultOf(normalized, answer.AuthenticationResult, answer.ChallengeName, answer.Session);
}

/** The characters Cognito counts as symbols in a password (its developer guide's set). */
const COGNITO_SYMBOLS = [...'^$*.[]{}()?"!@#%&/\\,><\':;|_~`=+-'];
/** One of them, or a space (inside: the ends are refused first). */
const COGNITO_SYMBOL = new RegExp(`[${COGNITO_SYMBOLS.map((symbol) => `\\${symbol}`).join('')} ]`);

/** Why a new password breaks the pool's policy, or nothing (checked here, for a clear 400). */
export function passwordProblem(password: string): string | undefined {
  const policy = DASHBOARD_USER_POOL.passwordPolicy;
  // Cognito refuses a password that starts or ends with a space, and counts as symbols only its own
  // set and a space inside: the same rules here, so one taken locally is taken on AWS.
  // Cognito's own pattern is `^[\S]+.*[\S]+$`, white space as Java reads it: ASCII only.
  if (/^[ \t\n\v\f\r]|[ \t\n\v\f\r]$/.test(password)) return 'Must not start or end with a space';
  const missing = [
    password.length < policy.MinimumLength && `at least ${policy.MinimumLength} characters`,
    !/[A-Z]/.test(password) && 'an upper-case letter',
    !/[a-z]/.test(password) && 'a lower-case letter',
    !/\d/.test(password) && 'a digit',
    !COGNITO_SYMBOL.test(password) && `a symbol (${COGNITO_SYMBOLS.join(' ')} or a space inside)`,
  ].filter(Boolean);
  return missing.length > 0 ? `Must have ${missing.join(', ')}` : undefined;
}

/** A challenge's answer, as its request schema reads it (each challenge with its own field). */
export type ChallengeAnswer = v.InferOutput<(typeof answerDashboardChallengeRequest)['body']>;

/** Answers a challenge of `signIn`: the new password, or the TOTP code. */
export async function answerChallenge(answer: ChallengeAnswer): Promise<SignInResult> {
  const email = answer.email.trim().toLowerCase();
  const responses: Record<string, string> = { USERNAME: email };
  if (answer.challenge === 'NEW_PASSWORD_REQUIRED') {
    const problem = passwordProblem(answer.new_password);
    if (problem) throw new ValidationError([{ field: 'new_password', message: problem }]);
    responses.NEW_PASSWORD = answer.new_password;
  } else {
    responses.SOFTWARE_TOKEN_MFA_CODE = answer.code;
  }
  const result = await cognito('RespondToAuthChallenge', {
    ClientId: appClientId(),
    ChallengeName: answer.challenge,
    Session: answer.session,
    ChallengeResponses: responses,
  }).catch((error: unknown) => {
    // A new password Cognito itself refuses (its policy is the pool's): the same 400.
    if (
      (error as Error)?.name === 'InvalidPasswordException' &&
      answer.challenge === 'NEW_PASSWORD_REQUIRED'
    ) {
      throw new ValidationError([{ field: 'new_password', message: (error as Error).message }]);
    }
    return refusalOf(email, answer.challenge)(error);
  });
  return resultOf(email, result.AuthenticationResult, result.ChallengeName, result.Session);
}
