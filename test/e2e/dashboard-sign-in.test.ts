import {
  CognitoIdentityProviderClient,
  DeleteUserAttributesCommand,
  GetUserCommand,
  SignUpCommand,
  UpdateUserAttributesCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { localCredentials } from '#infra/local/process.ts';
import { cognito, userPoolId } from '#shared/dashboard/cognito.ts';
import { DASHBOARD_USER_POOL } from '#shared/dashboard/user-pool.ts';
import { createDashboardUser } from '#shared/dashboard/users.ts';
import {
  aDashboardUser,
  aPassword,
  claimsOf,
  forgedCopy,
  totpCode,
  unsignedCopy,
} from '#test/support/dashboard.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';

const SIGN_IN = '/api/v1/dashboard/sessions';
const CHALLENGE = '/api/v1/dashboard/sessions/challenge';
const UNAUTHORIZED = { status: 'error', message: 'Invalid API credentials' };

describe('dashboard sign-in (API.md §10)', () => {
  let gateway: LocalGateway;
  let merchantId: string;
  beforeAll(async () => {
    gateway = await startTestGateway();
    merchantId = (await aMerchant()).merchant.merchant_id;
  });
  afterAll(() => gateway.close());

  it("signs a user in with email and password: an ID token naming the user's merchant", async () => {
    const user = await aDashboardUser(merchantId);
    const response = await call(gateway, 'POST', SIGN_IN, {
      body: { email: user.email.toUpperCase(), password: user.password },
    });
    expect(response.status).toBe(200);
    const session = data<{ id_token: string; expires_in: number; email: string; merchant_id: string }>(
      response,
    );
    expect(session).toMatchObject({ email: user.email, merchant_id: merchantId });
    // As long as the ID token itself is valid: the session routes check its `exp`, an hour after
    // it was issued, as the stack's app client sets it.
    const { exp, iat } = claimsOf(session.id_token) as { exp: number; iat: number };
    expect(exp - iat).toBe(DASHBOARD_USER_POOL.tokenValidityMinutes * 60);
    expect(Math.abs(Date.now() / 1000 + session.expires_in - exp)).toBeLessThanOrEqual(2);
    expect(claimsOf(session.id_token)).toMatchObject({ 'custom:merchant_id': merchantId, token_use: 'id' });
  });

  it("lets nobody sign up: users are only invited, as the stack's pool allows", async () => {
    const client = new CognitoIdentityProviderClient({
      region: 'us-east-1',
      endpoint: process.env.COGNITO_ENDPOINT,
      credentials: localCredentials,
    });
    const email = `self-${Date.now()}@example.ng`;
    const signUp = client.send(
      new SignUpCommand({
        ClientId: process.env.USER_POOL_CLIENT_ID,
        Username: email,
        Password: aPassword(),
        UserAttributes: [
          { Name: 'email', Value: email },
          { Name: `custom:${DASHBOARD_USER_POOL.merchantAttribute}`, Value: merchantId },
        ],
      }),
    );
    await expect(signUp).rejects.toMatchObject({ name: 'NotAuthorizedException' });
    const signIn = await call(gateway, 'POST', SIGN_IN, { body: { email, password: aPassword() } });
    expect(signIn.body).toEqual(UNAUTHORIZED);
  });

  it("lets a user write only the app client's writable attribute, and only with a token the pool signed", async () => {
    const user = await aDashboardUser(merchantId);
    const other = await aDashboardUser(merchantId);
    const session = data<{ access_token: string }>(
      await call(gateway, 'POST', SIGN_IN, { body: { email: user.email, password: user.password } }),
    );
    const client = new CognitoIdentityProviderClient({
      region: 'us-east-1',
      endpoint: process.env.COGNITO_ENDPOINT,
      credentials: localCredentials,
    });
    const refused = { name: 'NotAuthorizedException' };
    const update = (token: string, name: string, value: string) =>
      client.send(
        new UpdateUserAttributesCommand({
          AccessToken: token,
          UserAttributes: [{ Name: name, Value: value }],
        }),
      );
    try {
      for (const [name, value] of [
        ['email', other.email],
        ['custom:merchant_id', 'mer_someone_else'],
      ] as const) {
        await expect(update(session.access_token, name, value), name).rejects.toMatchObject(refused);
      }
      await expect(
        client.send(
          new DeleteUserAttributesCommand({
            AccessToken: session.access_token,
            UserAttributeNames: ['email'],
          }),
        ),
      ).rejects.toMatchObject(refused);
      // The one the stack's app client grants, which nothing reads.
      await update(session.access_token, 'locale', 'en-NG');
      // A token the pool never signed (the same claims, unsigned) acts as nobody.
      await expect(update(unsignedCopy(session.access_token), 'locale', 'fr')).rejects.toMatchObject(refused);
      await expect(
        client.send(new GetUserCommand({ AccessToken: forgedCopy(session.access_token) })),
      ).rejects.toMatchObject(refused);
      expect(
        (await client.send(new GetUserCommand({ AccessToken: session.access_token }))).UserAttributes,
      ).toEqual(
        expect.arrayContaining([
          { Name: 'email', Value: user.email },
          { Name: 'locale', Value: 'en-NG' },
        ]),
      );
    } finally {
      client.destroy();
    }
  });

  it('refuses with the 401 a user the pool has without a merchant: no session that names none', async () => {
    // Made as createDashboardUser makes users (shared/dashboard/cognito's calls), but naming no merchant.
    const email = `no-merchant-${Date.now()}@example.ng`;
    const password = aPassword();
    await cognito('AdminCreateUser', {
      UserPoolId: userPoolId(),
      Username: email,
      UserAttributes: [
        { Name: 'email', Value: email },
        { Name: 'email_verified', Value: 'true' },
      ],
      TemporaryPassword: password,
      MessageAction: 'SUPPRESS',
    });
    await cognito('AdminSetUserPassword', {
      UserPoolId: userPoolId(),
      Username: email,
      Password: password,
      Permanent: true,
    });
    const signIn = await call(gateway, 'POST', SIGN_IN, { body: { email, password } });
    expect([signIn.status, signIn.body]).toEqual([401, UNAUTHORIZED]);
  });

  it('answers a wrong password and an unknown email with the same 401', async () => {
    const user = await aDashboardUser(merchantId);
    const wrong = await call(gateway, 'POST', SIGN_IN, {
      body: { email: user.email, password: 'Wrong-pass-1!' },
    });
    const unknown = await call(gateway, 'POST', SIGN_IN, {
      body: { email: 'nobody-here@example.ng', password: user.password },
    });
    for (const response of [wrong, unknown]) {
      expect(response.status).toBe(401);
      expect(response.body).toEqual(UNAUTHORIZED);
    }
  });

  it("takes an invited user through the new-password challenge, holding the password to the pool's policy", async () => {
    const email = `invited-${Date.now()}@example.ng`;
    const temporary = aPassword();
    await createDashboardUser({ merchantId, email, password: temporary });
    const first = await call(gateway, 'POST', SIGN_IN, { body: { email, password: temporary } });
    expect(first.status).toBe(200);
    const challenge = data<{ challenge: string; session: string }>(first);
    expect(challenge.challenge).toBe('NEW_PASSWORD_REQUIRED');
    expect(challenge.session).toEqual(expect.any(String));

    const weak = await call(gateway, 'POST', CHALLENGE, {
      body: { email, challenge: 'NEW_PASSWORD_REQUIRED', session: challenge.session, new_password: 'short' },
    });
    expect(weak.status).toBe(400);
    expect(weak.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'new_password' }] });
    // The other challenge's answer is no field of this one.
    const stray = await call(gateway, 'POST', CHALLENGE, {
      body: {
        email,
        challenge: 'NEW_PASSWORD_REQUIRED',
        session: challenge.session,
        new_password: aPassword(),
        code: '123456',
      },
    });
    expect(stray.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'code' }] });

    const chosen = aPassword();
    const answered = await call(gateway, 'POST', CHALLENGE, {
      body: { email, challenge: 'NEW_PASSWORD_REQUIRED', session: challenge.session, new_password: chosen },
    });
    expect(answered.status).toBe(200);
    expect(data(answered)).toMatchObject({ email, merchant_id: merchantId });

    const again = await call(gateway, 'POST', SIGN_IN, { body: { email, password: chosen } });
    expect(data(again)).toMatchObject({ merchant_id: merchantId, id_token: expect.any(String) });
  });

  it("refuses an invited user's wrong temporary password, and a session not given to that user for that challenge", async () => {
    const email = `guarded-${Date.now()}@example.ng`;
    const temporary = aPassword();
    await createDashboardUser({ merchantId, email, password: temporary });
    const wrong = await call(gateway, 'POST', SIGN_IN, { body: { email, password: 'Wrong-pass-1!' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual(UNAUTHORIZED);

    const setPassword = (session: string, who = email) =>
      call(gateway, 'POST', CHALLENGE, {
        body: { email: who, challenge: 'NEW_PASSWORD_REQUIRED', session, new_password: aPassword() },
      });
    // An email alone never sets the password: a made-up session, another user's, or one used already.
    expect((await setPassword('made-up-session')).status).toBe(401);
    const other = `guarded-other-${Date.now()}@example.ng`;
    const otherTemporary = aPassword();
    await createDashboardUser({ merchantId, email: other, password: otherTemporary });
    const othersSession = data<{ session: string }>(
      await call(gateway, 'POST', SIGN_IN, { body: { email: other, password: otherTemporary } }),
    ).session;
    expect((await setPassword(othersSession)).body).toEqual(UNAUTHORIZED);
    const own = data<{ session: string }>(
      await call(gateway, 'POST', SIGN_IN, { body: { email, password: temporary } }),
    ).session;
    expect((await setPassword(own)).status).toBe(200);
    expect((await setPassword(own)).status).toBe(401);
    // The other user's session, refused for this user, still serves its own user.
    expect((await setPassword(othersSession, other)).status).toBe(200);
  });

  it('refuses malformed bodies with validation errors, and a made-up session with the 401', async () => {
    const unknownField = await call(gateway, 'POST', SIGN_IN, {
      body: { email: 'a@example.ng', password: 'x', remember: true },
    });
    expect(unknownField.status).toBe(400);
    const notEmail = await call(gateway, 'POST', SIGN_IN, { body: { email: 'not-an-email', password: 'x' } });
    expect(notEmail.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'email' }] });
    const badCode = await call(gateway, 'POST', CHALLENGE, {
      body: { email: 'a@example.ng', challenge: 'SOFTWARE_TOKEN_MFA', session: 's', code: '12ab56' },
    });
    expect(badCode.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'code' }] });
    const madeUp = await call(gateway, 'POST', CHALLENGE, {
      body: {
        email: 'a@example.ng',
        challenge: 'NEW_PASSWORD_REQUIRED',
        session: 'made-up-session',
        new_password: aPassword(),
      },
    });
    expect(madeUp.status).toBe(401);
    expect(madeUp.body).toEqual(UNAUTHORIZED);
  });

  it('turns TOTP on for a user, after which every sign-in asks for a code from the app', async () => {
    const user = await aDashboardUser(merchantId);
    const session = data<{ id_token: string; access_token: string }>(
      await call(gateway, 'POST', SIGN_IN, { body: { email: user.email, password: user.password } }),
    );
    const auth = { Authorization: `Bearer ${session.id_token}` };
    // A code before enrolment was started is a 400 on the code, not a 401 that signs the user out.
    const early = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp/verify', {
      headers: auth,
      body: { access_token: session.access_token, code: '123456' },
    });
    expect(early.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'code' }] });
    const started = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp', {
      headers: auth,
      body: { access_token: session.access_token },
    });
    expect(started.status).toBe(200);
    const { secret, otpauth_uri: uri } = data<{ secret: string; otpauth_uri: string }>(started);
    expect(uri).toContain(`secret=${secret}`);

    // Someone else's access token, or none that is a token, never enrols this user.
    const other = await aDashboardUser(merchantId);
    const otherSession = data<{ access_token: string }>(
      await call(gateway, 'POST', SIGN_IN, { body: { email: other.email, password: other.password } }),
    );
    const foreign = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp', {
      headers: auth,
      body: { access_token: otherSession.access_token },
    });
    expect(foreign.status).toBe(401);

    const wrong = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp/verify', {
      headers: auth,
      body: { access_token: session.access_token, code: totpCode(secret, Date.now() - 10 * 60_000) },
    });
    expect(wrong.body).toMatchObject({ code: 'validation_error', errors: [{ field: 'code' }] });
    const confirmed = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp/verify', {
      headers: auth,
      body: { access_token: session.access_token, code: totpCode(secret) },
    });
    expect(confirmed.status).toBe(200);
    // Started again, a new secret would replace the one in use before it is confirmed: refused.
    const again = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp', {
      headers: auth,
      body: { access_token: session.access_token },
    });
    expect([again.status, again.body?.code]).toEqual([400, 'validation_error']);

    const mfaSession = async () => {
      const next = await call(gateway, 'POST', SIGN_IN, {
        body: { email: user.email, password: user.password },
      });
      const challenge = data<{ challenge: string; session: string }>(next);
      expect(challenge.challenge).toBe('SOFTWARE_TOKEN_MFA');
      return challenge.session;
    };
    const answerWith = (session: string, code: string) =>
      call(gateway, 'POST', CHALLENGE, {
        body: { email: user.email, challenge: 'SOFTWARE_TOKEN_MFA', session, code },
      });
    // A wrong code spends the session, as Cognito's: the right code after it is refused too, so one
    // password buys one guess.
    const guessed = await mfaSession();
    expect((await answerWith(guessed, totpCode(secret, Date.now() - 10 * 60_000))).status).toBe(401);
    expect((await answerWith(guessed, totpCode(secret))).body).toEqual(UNAUTHORIZED);
    const fresh = await mfaSession();
    const answer = (code: string) => answerWith(fresh, code);
    // The right code with a made-up session is no sign-in: the password comes first.
    const skipped = await call(gateway, 'POST', CHALLENGE, {
      body: {
        email: user.email,
        challenge: 'SOFTWARE_TOKEN_MFA',
        session: 'made-up',
        code: totpCode(secret),
      },
    });
    expect(skipped.body).toEqual(UNAUTHORIZED);
    const code = totpCode(secret);
    const signedIn = await answer(code);
    expect(data(signedIn)).toMatchObject({ merchant_id: merchantId, id_token: expect.any(String) });
    // A code that signed the user in is spent: seen over a shoulder, it signs nobody in again.
    const replayed = await answerWith(await mfaSession(), code);
    expect(replayed.body).toEqual(UNAUTHORIZED);
    // Nor by answering several sessions with it at once: one signs in, the others are refused.
    const sessions: string[] = [];
    for (let i = 0; i < 6; i++) sessions.push(await mfaSession());
    const next = totpCode(secret, Date.now() + 30_000);
    const together = await Promise.all(sessions.map((open) => answerWith(open, next)));
    expect(together.map((answered) => answered.status).sort()).toEqual([200, 401, 401, 401, 401, 401]);
  });

  it('refuses the session routes without a valid ID token, and with an API key', async () => {
    const { headers } = await aMerchant();
    const user = await aDashboardUser(merchantId);
    const attempts: Record<string, string>[] = [
      {},
      headers,
      { Authorization: 'Bearer not-a-token' },
      { Authorization: `Bearer ${user.idToken}x` },
      // The access token is not a session: only ID tokens are.
      {
        Authorization: `Bearer ${data<{ access_token: string }>(await call(gateway, 'POST', SIGN_IN, { body: { email: user.email, password: user.password } })).access_token}`,
      },
    ];
    // A route that answers a valid session 200, so that a 401 can only be the gate's.
    const KEYS = '/api/v1/dashboard/keys';
    expect((await call(gateway, 'GET', KEYS, { headers: user.headers })).status).toBe(200);
    for (const attempt of attempts) {
      const response = await call(gateway, 'GET', KEYS, { headers: attempt });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(UNAUTHORIZED);
    }
  });
});
