import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  AdminCreateUserCommand,
  AdminDisableUserCommand,
  AdminEnableUserCommand,
  AdminSetUserPasswordCommand,
  AdminUserGlobalSignOutCommand,
  GetUserCommand,
  InitiateAuthCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cognitoClient,
  createDashboardUserPool,
  type LocalCognito,
  startCognitoLocal,
} from '#infra/local/cognito.ts';
import { freePort } from '#infra/local/process.ts';
import { DASHBOARD_USER_POOL } from '#shared/dashboard/user-pool.ts';
import { aPassword } from '#test/support/dashboard.ts';

const DAY_MS = 24 * 3_600_000;

/**
 * The local Cognito's own rules where cognito-local is laxer than Cognito, on a stand-in of this
 * test's own (the suite's is shared): its users' dates are moved back in its data folder between
 * two starts, as days passing would.
 */
describe('the local Cognito (npm start)', () => {
  let dataDir: string;
  let port: number;
  let cognito: LocalCognito;
  let pool: { USER_POOL_ID: string; USER_POOL_CLIENT_ID: string };
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'local-cognito-'));
    port = await freePort();
    cognito = await startCognitoLocal({ port, dataDir });
    pool = await createDashboardUserPool(cognito.endpoint, 'local-cognito-test-');
  });
  afterAll(async () => {
    await cognito?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const signIn = (email: string, password: string) =>
    cognitoClient(cognito.endpoint).send(
      new InitiateAuthCommand({
        AuthFlow: 'USER_PASSWORD_AUTH',
        ClientId: pool.USER_POOL_CLIENT_ID,
        AuthParameters: { USERNAME: email, PASSWORD: password },
      }),
    );
  const invite = (email: string, password: string) =>
    cognitoClient(cognito.endpoint).send(
      new AdminCreateUserCommand({
        UserPoolId: pool.USER_POOL_ID,
        Username: email,
        TemporaryPassword: password,
        MessageAction: 'SUPPRESS',
        UserAttributes: [
          { Name: 'email', Value: email },
          { Name: `custom:${DASHBOARD_USER_POOL.merchantAttribute}`, Value: 'mer_local_cognito' },
        ],
      }),
    );
  /** Days pass for these users: their last change moves back, with the stand-in stopped. */
  const ageUsers = async (days: Record<string, number>) => {
    await cognito.stop();
    const folder = path.join(dataDir, 'cognito', '.cognito', 'db');
    const file = path.join(folder, `${pool.USER_POOL_ID}.json`);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as {
      Users: Record<string, { Attributes: { Name: string; Value: string }[]; UserLastModifiedDate: string }>;
    };
    for (const user of Object.values(stored.Users)) {
      const email = user.Attributes.find((attribute) => attribute.Name === 'email')?.Value ?? '';
      const back = days[email];
      if (back !== undefined) user.UserLastModifiedDate = new Date(Date.now() - back * DAY_MS).toISOString();
    }
    writeFileSync(file, JSON.stringify(stored));
    cognito = await startCognitoLocal({ port, dataDir });
  };

  it("refuses an invited user's temporary password after the pool's 7 days, as Cognito does, until an administrator sets a new one", async () => {
    const validDays = DASHBOARD_USER_POOL.passwordPolicy.TemporaryPasswordValidityDays;
    const [fresh, stale] = [`fresh-${Date.now()}@example.ng`, `stale-${Date.now()}@example.ng`];
    const [freshPassword, stalePassword] = [aPassword(), aPassword()];
    await invite(fresh, freshPassword);
    await invite(stale, stalePassword);
    await ageUsers({ [fresh]: validDays - 1, [stale]: validDays + 1 });

    // Within its days: the first sign-in asks for a password of the user's own.
    expect(await signIn(fresh, freshPassword)).toMatchObject({ ChallengeName: 'NEW_PASSWORD_REQUIRED' });
    // Past them: Cognito's refusal, in its words; a wrong password is still the usual refusal.
    await expect(signIn(stale, stalePassword)).rejects.toMatchObject({
      name: 'NotAuthorizedException',
      message: 'Temporary password has expired and must be reset by an administrator.',
    });
    await expect(signIn(stale, aPassword())).rejects.toMatchObject({
      name: 'NotAuthorizedException',
      message: 'Incorrect username or password.',
    });
    // A new temporary password (the local `keys invite` again) has its own 7 days.
    const renewed = aPassword();
    await cognitoClient(cognito.endpoint).send(
      new AdminSetUserPasswordCommand({
        UserPoolId: pool.USER_POOL_ID,
        Username: stale,
        Password: renewed,
        Permanent: false,
      }),
    );
    expect(await signIn(stale, renewed)).toMatchObject({ ChallengeName: 'NEW_PASSWORD_REQUIRED' });
  });

  /** An invited user who has chosen their password (`Permanent`), and a client of the stand-in. */
  const aConfirmedUser = async (prefix: string) => {
    const email = `${prefix}-${Date.now()}@example.ng`;
    const password = aPassword();
    await invite(email, aPassword());
    const client = cognitoClient(cognito.endpoint);
    await client.send(
      new AdminSetUserPasswordCommand({
        UserPoolId: pool.USER_POOL_ID,
        Username: email,
        Password: password,
        Permanent: true,
      }),
    );
    return { email, password, client };
  };

  it('refuses a disabled user at sign-in, as Cognito does, and takes them again once enabled', async () => {
    const { email, password, client } = await aConfirmedUser('disabled');
    await client.send(new AdminDisableUserCommand({ UserPoolId: pool.USER_POOL_ID, Username: email }));
    await expect(signIn(email, password)).rejects.toMatchObject({
      name: 'NotAuthorizedException',
      message: 'User is disabled.',
    });
    await client.send(new AdminEnableUserCommand({ UserPoolId: pool.USER_POOL_ID, Username: email }));
    expect((await signIn(email, password)).AuthenticationResult?.IdToken).toEqual(expect.any(String));
  });

  it("signs a user out everywhere as Cognito does: their access and refresh tokens refused, a new sign-in's taken at once", async () => {
    const { email, password, client } = await aConfirmedUser('signed-out');
    const before = (await signIn(email, password)).AuthenticationResult;
    expect(await client.send(new GetUserCommand({ AccessToken: before?.AccessToken }))).toMatchObject({
      Username: expect.any(String),
    });

    await client.send(new AdminUserGlobalSignOutCommand({ UserPoolId: pool.USER_POOL_ID, Username: email }));
    await expect(client.send(new GetUserCommand({ AccessToken: before?.AccessToken }))).rejects.toMatchObject(
      {
        name: 'NotAuthorizedException',
        message: 'Access Token has been revoked',
      },
    );
    await expect(
      client.send(
        new InitiateAuthCommand({
          AuthFlow: 'REFRESH_TOKEN_AUTH',
          ClientId: pool.USER_POOL_CLIENT_ID,
          AuthParameters: { REFRESH_TOKEN: before?.RefreshToken ?? '' },
        }),
      ),
    ).rejects.toMatchObject({ name: 'NotAuthorizedException' });
    // Signed in again at once, in the second of the sign-out: the new token is not among the revoked.
    const after = (await signIn(email, password)).AuthenticationResult;
    expect(await client.send(new GetUserCommand({ AccessToken: after?.AccessToken }))).toMatchObject({
      Username: expect.any(String),
    });
  });
});
