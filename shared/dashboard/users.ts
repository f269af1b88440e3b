import { cognito, userPoolId } from '#shared/dashboard/cognito.ts';
import { DASHBOARD_USER_POOL } from '#shared/dashboard/user-pool.ts';

/**
 * Dashboard users (API.md §10): made by the operator, never by sign-up. Each belongs to one
 * merchant for good: the `custom:merchant_id` attribute is immutable and users cannot write it.
 */

export class DuplicateUser extends Error {
  constructor(readonly email: string) {
    super(`A dashboard user with email ${email} already exists`);
    this.name = 'DuplicateUser';
  }
}

export class UnknownUser extends Error {
  constructor(readonly email: string) {
    super(`No dashboard user with email ${email}`);
    this.name = 'UnknownUser';
  }
}

export interface NewUser {
  merchantId: string;
  email: string;
  /**
   * Without one, Cognito emails the user a temporary password (on AWS). Given, it is the user's
   * password: `permanent` skips the change at first sign-in (the local demo user only).
   */
  password?: string;
  permanent?: boolean;
}

/** Creates a dashboard user of a merchant; an email already in use is refused (`DuplicateUser`). */
export async function createDashboardUser(user: NewUser): Promise<{ email: string; sub: string }> {
  const email = user.email.trim().toLowerCase();
  try {
    const created = await cognito('AdminCreateUser', {
      UserPoolId: userPoolId(),
      Username: email,
      UserAttributes: [
        { Name: 'email', Value: email },
        { Name: 'email_verified', Value: 'true' },
        { Name: `custom:${DASHBOARD_USER_POOL.merchantAttribute}`, Value: user.merchantId },
      ],
      // With a password chosen here, nothing is emailed; without, Cognito sends the invitation.
      ...(user.password === undefined
        ? { DesiredDeliveryMediums: ['EMAIL'] }
        : { TemporaryPassword: user.password, MessageAction: 'SUPPRESS' }),
    });
    if (user.password !== undefined && user.permanent) {
      await cognito('AdminSetUserPassword', {
        UserPoolId: userPoolId(),
        Username: email,
        Password: user.password,
        Permanent: true,
      });
    }
    const sub = created.User?.Attributes?.find((attribute) => attribute.Name === 'sub')?.Value;
    return { email, sub: sub ?? created.User?.Username ?? email };
  } catch (error) {
    if ((error as Error).name === 'UsernameExistsException') {
      throw new DuplicateUser(email);
    }
    throw error;
  }
}

/** A dashboard user as the operator sees one: whose, since when, and whether they have signed in. */
export interface DashboardUser {
  email: string;
  merchantId: string | undefined;
  /** Cognito's status: `FORCE_CHANGE_PASSWORD` until the first sign-in, then `CONFIRMED`. */
  status: string;
  /** False once an operator disabled the user in Cognito. */
  enabled: boolean;
  createdAt: string | undefined;
}

/** The dashboard user with this email, or undefined. */
export async function getDashboardUser(email: string): Promise<DashboardUser | undefined> {
  const username = email.trim().toLowerCase();
  try {
    const user = await cognito('AdminGetUser', { UserPoolId: userPoolId(), Username: username });
    const attribute = (name: string) => user.UserAttributes?.find((item) => item.Name === name)?.Value;
    // Epoch seconds from Cognito's JSON; a date string from the local stand-in.
    const created = user.UserCreateDate as unknown as number | string | undefined;
    const createdAt =
      created === undefined
        ? undefined
        : new Date(typeof created === 'number' ? created * 1000 : created).toISOString();
    return {
      email: attribute('email') ?? username,
      merchantId: attribute(`custom:${DASHBOARD_USER_POOL.merchantAttribute}`),
      status: user.UserStatus ?? 'UNKNOWN',
      enabled: user.Enabled !== false,
      createdAt,
    };
  } catch (error) {
    if ((error as Error).name === 'UserNotFoundException') return undefined;
    throw error;
  }
}

/**
 * Gives a user a new temporary password, to be changed at their next sign-in: one who never signed
 * in, locally, where no invitation is emailed (what Cognito's `RESEND` is on AWS: the one printed
 * at the invitation may be lost); or one who forgot their password (`keys reset-password`).
 */
export async function setTemporaryPassword(email: string, password: string): Promise<void> {
  await cognito('AdminSetUserPassword', {
    UserPoolId: userPoolId(),
    Username: email.trim().toLowerCase(),
    Password: password,
    Permanent: false,
  });
}

/** Signs a user out everywhere: their access and refresh tokens are refused from now on. */
export async function signOutEverywhere(email: string): Promise<void> {
  await cognito('AdminUserGlobalSignOut', { UserPoolId: userPoolId(), Username: email.trim().toLowerCase() });
}

/** Deletes a dashboard user (by email); the local demo user's reset only: operators disable users in Cognito. */
export async function deleteDashboardUser(email: string): Promise<void> {
  await cognito('AdminDeleteUser', { UserPoolId: userPoolId(), Username: email.trim().toLowerCase() });
}

/**
 * Turns a user's TOTP off, for one who lost their authenticator (the operator makes sure who is
 * asking first, out of band): the next sign-in asks for the password alone, and the user can set up
 * a new authenticator in the dashboard. An unknown email is refused (`UnknownUser`).
 * The user is signed out everywhere first: an authenticator someone else turned on with a stolen
 * session's access token is the other way to be locked out, and that token, revoked, can no longer
 * turn one on again once this one is off (ID tokens still pass the dashboard's routes until their
 * hour is up: Cognito does not revoke them).
 */
export async function turnOffTotp(email: string): Promise<void> {
  const username = email.trim().toLowerCase();
  try {
    await signOutEverywhere(username);
    await cognito('AdminSetUserMFAPreference', {
      UserPoolId: userPoolId(),
      Username: username,
      SoftwareTokenMfaSettings: { Enabled: false, PreferredMfa: false },
    });
  } catch (error) {
    if ((error as Error).name === 'UserNotFoundException') throw new UnknownUser(username);
    throw error;
  }
}
