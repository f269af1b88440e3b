/**
 * The child process of the local Cognito (`infra/local/cognito.ts`): `cognito-local`'s own server,
 * made as strict as Cognito where it is laxer, because a sign-in stand-in laxer than Cognito lets
 * anyone into the local dashboard and hides what Cognito would refuse:
 * - `InitiateAuth` of an invited user (`FORCE_CHANGE_PASSWORD`) checks the temporary password,
 *   and refuses it once the pool's `TemporaryPasswordValidityDays` have passed since it was set
 *   (by the invitation, or an administrator's new one); cognito-local answers the new-password
 *   challenge to any password, however old.
 * - `RespondToAuthChallenge` accepts only a session that `InitiateAuth` (or a previous answer) gave
 *   for that user and that challenge, once (a wrong answer spends it too), within 3 minutes;
 *   cognito-local accepts any string, so an email alone could set a user's password or skip the
 *   password before a TOTP code, and it let one session try every code.
 * - A TOTP code that signed a user in is refused for that user for the rest of its validity
 *   (`ExpiredCodeException`), also when several sessions answer with it at once; cognito-local
 *   takes it again.
 * - `SignUp` is refused (`NotAuthorizedException`) in a pool where only administrators create
 *   users, as the stack's; cognito-local let anyone sign up with any attributes, a merchant id too.
 * - An operation a user calls with an access token (`GetUser`, `UpdateUserAttributes`,
 *   `AssociateSoftwareToken`, `DeleteUser`…) takes only an unexpired access token signed with the
 *   stand-in's key; cognito-local only decodes it, so an unsigned token acted as any user.
 * - `UpdateUserAttributes` and `DeleteUserAttributes` touch only the writable attributes of the
 *   token's app client (the stack's: `locale`); cognito-local let users change their sign-in email
 *   to another user's.
 * - A disabled user is refused at sign-in (`NotAuthorizedException`, "User is disabled."), as by
 *   Cognito; cognito-local signed them in.
 * - A user with an authenticator who answers the new-password challenge (a temporary password
 *   from the operator's `keys reset-password`) is then asked for a code (`SOFTWARE_TOKEN_MFA`), as
 *   Cognito asks; cognito-local signed them in without one.
 * Cognito's refusals are its own types (`NotAuthorizedException`, `ExpiredCodeException`). Two
 * operations cognito-local lacks are added, as Cognito does them, for the operator's
 * `keys reset-mfa` and `reset-password`: `AdminSetUserMFAPreference` (the user's MFA methods and preference changed) and
 * `AdminUserGlobalSignOut` (the user's access tokens refused from then on, their refresh tokens
 * cleared); an unknown user is
 * `UserNotFoundException`. Everything else is cognito-local's.
 */
'use strict';

const {
  ExpiredCodeError,
  InvalidParameterError,
  NotAuthorizedError,
  UserNotFoundError,
} = require('cognito-local/lib/errors');
const { createDefaultServer } = require('cognito-local/lib/server');
const { Targets } = require('cognito-local/lib/targets/targets');
// cognito-local's own logger and JWT library, as it resolves them, and the key it signs with.
const fromCognitoLocal = (name) =>
  require(require.resolve(name, { paths: [require.resolve('cognito-local')] }));
const pino = fromCognitoLocal('pino');
const jwt = fromCognitoLocal('jsonwebtoken');
const { createPublicKey, randomUUID } = require('node:crypto');
const signingKey = createPublicKey(require('cognito-local/lib/keys/cognitoLocal.private.json').pem);

/**
 * The claims of an access token signed with the stand-in's key (every local pool shares it) that
 * has not expired, or Cognito's refusal.
 */
function accessClaims(token) {
  try {
    const claims = jwt.verify(String(token), signingKey, { algorithms: ['RS256'] });
    if (claims.token_use === 'access') return claims;
  } catch {
    // Refused below, as Cognito refuses it.
  }
  throw new NotAuthorizedError('Invalid Access Token');
}

/** Cognito's sessions last 3 minutes. */
const SESSION_MS = 3 * 60_000;
/** Open sessions: the user and the challenge each was given for. */
const sessions = new Map();
/** A TOTP code is good for its 30 s step and one step either side: spent codes are kept that long. */
const CODE_MS = 90_000;
/** TOTP codes that signed a user in (`username code` → when they may be forgotten). */
const spentCodes = new Map();

/** Remembers the session of an answer that sets a challenge. */
function remember(answer, username) {
  if (answer?.Session && answer.ChallengeName) {
    for (const [session, open] of sessions) if (open.expires <= Date.now()) sessions.delete(session);
    sessions.set(answer.Session, {
      username,
      challenge: answer.ChallengeName,
      expires: Date.now() + SESSION_MS,
    });
  }
  return answer;
}

/** The user a request names, as cognito-local resolves it (an email finds its user). */
async function userOf(services, ctx, clientId, username) {
  const pool = await services.cognito.getUserPoolForClientId(ctx, clientId);
  return username ? pool.getUserByUsername(ctx, username) : undefined;
}

const DAY_MS = 24 * 3_600_000;

/**
 * Whether an invited user's temporary password has outlived the pool's validity (Cognito's default
 * 7 days), counted from the user's last change: the invitation or an administrator's new temporary
 * password, the only changes the service makes to an invited user. (cognito-local also dates an
 * attribute change, a disabling or an enabling so, which Cognito does not count: none is made here.)
 */
async function temporaryPasswordExpired(services, ctx, clientId, user) {
  const pool = await services.cognito.getUserPoolForClientId(ctx, clientId);
  const days = pool.options.Policies?.PasswordPolicy?.TemporaryPasswordValidityDays ?? 7;
  return services.clock.get().getTime() - new Date(user.UserLastModifiedDate).getTime() > days * DAY_MS;
}

/**
 * Waits out the second of the user's last global sign-out, if it is this one: a token's `iat` is in
 * whole seconds, so one issued in that second could not be told from those the sign-out revoked.
 */
async function afterSignOutSecond(user) {
  const wait = (user?.SignedOutBefore ?? -1) * 1000 + 1000 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

const { InitiateAuth, RespondToAuthChallenge } = Targets;

Targets.InitiateAuth = (services) => {
  const target = InitiateAuth(services);
  return async (ctx, req) => {
    const user =
      req.AuthFlow === 'USER_PASSWORD_AUTH'
        ? await userOf(services, ctx, req.ClientId, req.AuthParameters?.USERNAME)
        : undefined;
    // Cognito's answer to a disabled user, whatever the password; cognito-local signed them in.
    if (user && user.Enabled === false) throw new NotAuthorizedError('User is disabled.');
    if (user?.UserStatus === 'FORCE_CHANGE_PASSWORD') {
      if (user.Password !== req.AuthParameters?.PASSWORD) {
        throw new NotAuthorizedError('Incorrect username or password.');
      }
      // Cognito's own words for it.
      if (await temporaryPasswordExpired(services, ctx, req.ClientId, user)) {
        throw new NotAuthorizedError('Temporary password has expired and must be reset by an administrator.');
      }
    }
    await afterSignOutSecond(user);
    return remember(await target(ctx, req), user?.Username);
  };
};

Targets.RespondToAuthChallenge = (services) => {
  const target = RespondToAuthChallenge(services);
  return async (ctx, req) => {
    const open = sessions.get(req.Session);
    const user = await userOf(services, ctx, req.ClientId, req.ChallengeResponses?.USERNAME);
    if (
      !open ||
      // Taken by another answer while this one looked its user up.
      sessions.get(req.Session) !== open ||
      open.expires <= Date.now() ||
      !user ||
      open.username !== user.Username ||
      open.challenge !== req.ChallengeName
    ) {
      throw new NotAuthorizedError('Invalid session for the user, session is expired.');
    }
    sessions.delete(req.Session);
    const code =
      req.ChallengeName === 'SOFTWARE_TOKEN_MFA' && req.ChallengeResponses?.SOFTWARE_TOKEN_MFA_CODE;
    const spent = `${user.Username} ${code}`;
    for (const [key, until] of spentCodes) if (until <= Date.now()) spentCodes.delete(key);
    if (code && spentCodes.has(spent)) throw new ExpiredCodeError();
    // Spent before it is checked, so answers of several sessions sent at once with one code sign
    // the user in once; given back if it signs nobody in (a wrong code).
    if (code) spentCodes.set(spent, Date.now() + CODE_MS);
    try {
      await afterSignOutSecond(user);
      const answer = await target(ctx, req);
      // A user with an authenticator, given a temporary password (`keys reset-password`), chooses a
      // new password and is then asked for a code, as Cognito does; cognito-local signed them in.
      if (
        req.ChallengeName === 'NEW_PASSWORD_REQUIRED' &&
        answer?.AuthenticationResult &&
        (user.UserMFASettingList ?? []).includes('SOFTWARE_TOKEN_MFA')
      ) {
        return remember(
          { ChallengeName: 'SOFTWARE_TOKEN_MFA', ChallengeParameters: {}, Session: randomUUID() },
          user.Username,
        );
      }
      return remember(answer, user.Username);
    } catch (error) {
      if (code) spentCodes.delete(spent);
      throw error;
    }
  };
};

// A new password set by an administrator (a re-invite's temporary password) ends the user's open
// sessions: a first sign-in begun with the password it replaces can no longer set a password of its
// own, and lock out the user who got the new one.
const { AdminSetUserPassword } = Targets;
Targets.AdminSetUserPassword = (services) => {
  const target = AdminSetUserPassword(services);
  return async (ctx, req) => {
    const pool = await services.cognito.getUserPool(ctx, req.UserPoolId);
    const user = await pool.getUserByUsername(ctx, req.Username);
    const answer = await target(ctx, req);
    if (user)
      for (const [session, open] of sessions) if (open.username === user.Username) sessions.delete(session);
    return answer;
  };
};

// The stack's pool lets only administrators create users (`AllowAdminCreateUserOnly`): Cognito
// then refuses `SignUp`, which cognito-local would take with any attributes, a merchant id included.
const { SignUp } = Targets;
Targets.SignUp = (services) => {
  const target = SignUp(services);
  return async (ctx, req) => {
    const pool = await services.cognito.getUserPoolForClientId(ctx, req.ClientId);
    if (pool.options.AdminCreateUserConfig?.AllowAdminCreateUserOnly) {
      throw new NotAuthorizedError('SignUp is not permitted for this user pool');
    }
    return target(ctx, req);
  };
};

/** Refuses a write of any attribute the app client of the token does not grant. */
async function checkWritable(services, ctx, claims, names) {
  const app = await services.cognito.getAppClient(ctx, claims.client_id);
  const writable = new Set(app?.WriteAttributes ?? []);
  if (!app || names.some((name) => !writable.has(name))) {
    throw new NotAuthorizedError('A client attempted to write unauthorized attribute');
  }
}

const { UpdateUserAttributes, DeleteUserAttributes } = Targets;

// (The loop at the end checks their token too; these read its claims for the app client.)
Targets.UpdateUserAttributes = (services) => {
  const target = UpdateUserAttributes(services);
  return async (ctx, req) => {
    const names = (req.UserAttributes ?? []).map((attribute) => attribute.Name);
    await checkWritable(services, ctx, accessClaims(req.AccessToken), names);
    return target(ctx, req);
  };
};

Targets.DeleteUserAttributes = (services) => {
  const target = DeleteUserAttributes(services);
  return async (ctx, req) => {
    await checkWritable(services, ctx, accessClaims(req.AccessToken), req.UserAttributeNames ?? []);
    return target(ctx, req);
  };
};

Targets.AdminSetUserMFAPreference = (services) => async (ctx, req) => {
  const pool = await services.cognito.getUserPool(ctx, req.UserPoolId);
  const user = await pool.getUserByUsername(ctx, req.Username);
  if (!user) throw new UserNotFoundError('User does not exist.');
  const methods = new Set(user.UserMFASettingList ?? []);
  const settings = { SMS_MFA: req.SMSMfaSettings, SOFTWARE_TOKEN_MFA: req.SoftwareTokenMfaSettings };
  for (const [method, setting] of Object.entries(settings)) {
    if (setting?.Enabled === true) methods.add(method);
    if (setting?.Enabled === false) methods.delete(method);
  }
  if (methods.has('SOFTWARE_TOKEN_MFA') && !user.SoftwareTokenMfaConfiguration?.Verified) {
    throw new InvalidParameterError('User has not verified software token mfa');
  }
  const preferred = Object.entries(settings).find(([, setting]) => setting?.PreferredMfa)?.[0];
  if (preferred && !methods.has(preferred)) {
    throw new InvalidParameterError(`Cannot set ${preferred} as preferred: it is not enabled`);
  }
  await pool.saveUser(ctx, {
    ...user,
    UserMFASettingList: [...methods],
    PreferredMfaSetting:
      preferred ?? (methods.has(user.PreferredMfaSetting) ? user.PreferredMfaSetting : undefined),
  });
  return {};
};

// `AdminUserGlobalSignOut`, which cognito-local lacks, as Cognito does it: every token issued to
// the user so far is refused from now on for the user's own calls (enrolling an authenticator,
// changing MFA, deleting the user). Kept with the user, so a restart does not forget it.
Targets.AdminUserGlobalSignOut = (services) => async (ctx, req) => {
  const pool = await services.cognito.getUserPool(ctx, req.UserPoolId);
  const user = await pool.getUserByUsername(ctx, req.Username);
  if (!user) throw new UserNotFoundError('User does not exist.');
  // Its refresh tokens go too (the dashboard keeps none, but they would give new access tokens).
  await pool.saveUser(ctx, { ...user, RefreshTokens: [], SignedOutBefore: Math.floor(Date.now() / 1000) });
  return {};
};

/**
 * Cognito's refusal of an access token issued to its user before their last global sign-out (a
 * token's `iat` is in seconds: none is issued in the second of a sign-out, `afterSignOutSecond`).
 */
async function refuseSignedOut(services, ctx, claims) {
  const poolId = String(claims.iss ?? '')
    .split('/')
    .pop();
  const pool = poolId ? await services.cognito.getUserPool(ctx, poolId).catch(() => undefined) : undefined;
  const user = pool ? await pool.getUserByUsername(ctx, claims.username) : undefined;
  if (user?.SignedOutBefore !== undefined && claims.iat <= user.SignedOutBefore) {
    throw new NotAuthorizedError('Access Token has been revoked');
  }
}

// Every operation a user calls with an access token: the token is checked first.
for (const [name, makeTarget] of Object.entries(Targets)) {
  Targets[name] = (services) => {
    const target = makeTarget(services);
    return async (ctx, req) => {
      if (req && 'AccessToken' in req) await refuseSignedOut(services, ctx, accessClaims(req.AccessToken));
      return target(ctx, req);
    };
  };
}

// The process that started this one (npm start, a test run) holds its standard input open: when
// that process ends, however it ended (a kill -9 too), so does this server, instead of holding
// the port for the next start.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();

// As cognito-local's own `bin/start.js`, without its pretty printer: the parent keeps the output.
const logger = pino({ level: process.env.DEBUG ? 'debug' : 'info' });
createDefaultServer(logger)
  .then((server) => server.start())
  .then((server) => {
    const address = server.address();
    logger.info(
      `Cognito Local running on ${typeof address === 'string' ? address : `${address?.address}:${address?.port}`}`,
    );
  })
  .catch((error) => {
    logger.error(error);
    process.exit(1);
  });
