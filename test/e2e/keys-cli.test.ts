import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AdminDisableUserCommand } from '@aws-sdk/client-cognito-identity-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cognitoClient } from '#infra/local/cognito.ts';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { clearAuthCache } from '#shared/api-keys/authenticate.ts';
import { createApiKey, MAX_USABLE_KEYS } from '#shared/api-keys/store.ts';
import { isValidNuban } from '#shared/banks/nuban.ts';
import { config } from '#shared/config.ts';
import { getDashboardUser } from '#shared/dashboard/users.ts';
import { runCli } from '#test/support/cli.ts';
import { aDashboardUser, aPassword, totpCode } from '#test/support/dashboard.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant } from '#test/support/merchants.ts';

/** Runs `npm run keys -- …` as an operator would (the test environment points it at the test stack). */
const keys = (...args: string[]) => runCli('keys', args);

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

describe('npm run keys', { timeout: 60_000 }, () => {
  it('prints no AWS SDK Node version warning, only its own output', async () => {
    const created = await keys('create', '--name', 'Quiet Ltd', '--json');
    const { merchant_id: merchantId, api_key: apiKey } = JSON.parse(created.stdout.trim()) as {
      merchant_id: string;
      api_key: string;
    };
    const listed = await keys('list', '--merchant', merchantId);
    expect(listed.code).toBe(0);
    expect(`${created.stderr}${listed.stderr}`).not.toContain('NodeVersionSupportWarning');
    expect(listed.stdout).toContain(apiKey);
  });

  it('creates a merchant with a wallet and a working key pair, lists, rotates and revokes keys', async () => {
    const created = await keys('create', '--name', 'Acme Ltd', '--json');
    expect(created.code).toBe(0);
    const merchant = JSON.parse(created.stdout.trim()) as Record<string, string>;
    expect(Object.keys(merchant).sort()).toEqual([
      'account_name',
      'account_number',
      'api_key',
      'api_secret',
      'expires_at',
      'merchant_id',
    ]);
    expect(merchant.expires_at).toBeNull();
    expect(isValidNuban(config.partner.bankCode, merchant.account_number ?? '')).toBe(true);
    const headers = { 'X-API-Key': merchant.api_key ?? '', 'X-API-Secret': merchant.api_secret ?? '' };
    const balance = await call(gateway, 'GET', '/balance', { headers });
    expect(balance.status).toBe(200);
    expect(balance.body?.data).toMatchObject({ account_number: merchant.account_number, balance: 0 });

    const rotated = await keys(
      'create',
      '--merchant',
      merchant.merchant_id ?? '',
      '--ip',
      '127.0.0.1/32',
      '--json',
    );
    const second = JSON.parse(rotated.stdout.trim()) as Record<string, string>;
    expect(second.merchant_id).toBe(merchant.merchant_id);
    expect(second.api_key).not.toBe(merchant.api_key);
    // The fields of `create --name --json`, as §6 lists them, the wallet's included.
    expect(Object.keys(second).sort()).toEqual(Object.keys(merchant).sort());
    expect(second).toMatchObject({
      account_number: merchant.account_number,
      account_name: merchant.account_name,
    });

    const listed = JSON.parse(
      (await keys('list', '--merchant', merchant.merchant_id ?? '', '--json')).stdout.trim(),
    );
    expect(listed).toHaveLength(2);
    const first = listed.find((k: { api_key: string }) => k.api_key === merchant.api_key);
    expect(first).toMatchObject({ status: 'active', last_used_at: expect.any(String) });
    expect(JSON.stringify(listed)).not.toContain(merchant.api_secret);

    const revoked = await keys('revoke', merchant.api_key ?? '');
    expect(revoked.code).toBe(0);
    clearAuthCache();
    expect((await call(gateway, 'GET', '/balance', { headers })).status).toBe(401);
    const after = JSON.parse(
      (await keys('list', '--merchant', merchant.merchant_id ?? '', '--json')).stdout.trim(),
    );
    const gone = after.find((k: { api_key: string }) => k.api_key === merchant.api_key);
    expect(gone).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
    // The text list says when, as the JSON does.
    const text = (await keys('list', '--merchant', merchant.merchant_id ?? '')).stdout;
    expect(text).toContain(`revoked ${gone.revoked_at}`);
  });

  it('rolls a key (both work until the old one expires), and edits its IP allowlist', async () => {
    const created = JSON.parse(
      (await keys('create', '--name', 'Roll Ltd', '--json')).stdout.trim(),
    ) as Record<string, string>;
    const headersOf = (key: Record<string, string>, prefix = '') => ({
      'X-API-Key': key[`${prefix}api_key`] ?? '',
      'X-API-Secret': key[`${prefix}api_secret`] ?? '',
    });
    const oldHeaders = headersOf(created);
    const rolled = await keys('roll', created.api_key ?? '', '--old-expires-in-hours', '24', '--json');
    expect(rolled.code).toBe(0);
    const next = JSON.parse(rolled.stdout.trim()) as Record<string, string>;
    expect(next.old_api_key).toBe(created.api_key);
    expect(Date.parse(next.old_expires_at ?? '') - Date.now()).toBeGreaterThan(23 * 3_600_000);
    clearAuthCache();
    for (const headers of [oldHeaders, headersOf(next)]) {
      expect((await call(gateway, 'GET', '/balance', { headers })).status).toBe(200);
    }

    // Rolling the new key with no overlap: its successor works, it stops at once.
    const third = JSON.parse(
      (await keys('roll', next.api_key ?? '', '--old-expires-in-hours', '0', '--json')).stdout.trim(),
    ) as Record<string, string>;
    clearAuthCache();
    expect((await call(gateway, 'GET', '/balance', { headers: headersOf(next) })).status).toBe(401);
    expect((await call(gateway, 'GET', '/balance', { headers: headersOf(third) })).status).toBe(200);
    // Listed as the dashboard lists it: the stopped key is `expired`.
    const listed = JSON.parse(
      (await keys('list', '--merchant', created.merchant_id ?? '', '--json')).stdout.trim(),
    ) as { api_key: string; status: string; revoked_at: string | null }[];
    expect(listed.find((key) => key.api_key === next.api_key)).toMatchObject({
      status: 'expired',
      revoked_at: null,
    });
    // A key made to expire says when.
    const expiring = await keys(
      'create',
      '--merchant',
      created.merchant_id ?? '',
      '--expires',
      '2099-01-01T00:00:00Z',
      '--json',
    );
    expect(JSON.parse(expiring.stdout.trim())).toMatchObject({ expires_at: '2099-01-01T00:00:00.000Z' });
    const plain = await keys(
      'create',
      '--merchant',
      created.merchant_id ?? '',
      '--expires',
      '2099-01-01T00:00:00Z',
    );
    expect(plain.stdout).toContain('expires:    2099-01-01T00:00:00.000Z');
    // A key cannot be made to expire on a day that does not exist, or already expired.
    for (const expires of ['2026-02-30T00:00:00Z', '2020-01-01T00:00:00Z']) {
      const refused = await keys('create', '--merchant', created.merchant_id ?? '', '--expires', expires);
      expect(refused.code, expires).toBe(2);
      expect(refused.stderr).toContain('--expires');
    }

    expect((await keys('allow-ips', third.api_key ?? '', '--ip', '203.0.113.0/24')).code).toBe(0);
    clearAuthCache();
    expect((await call(gateway, 'GET', '/balance', { headers: headersOf(third) })).status).toBe(401);
    expect((await keys('allow-ips', third.api_key ?? '', '--any-ip')).code).toBe(0);
    clearAuthCache();
    expect((await call(gateway, 'GET', '/balance', { headers: headersOf(third) })).status).toBe(200);

    // Out of bounds, unknown or malformed: usage, exit 2, nothing changed.
    const tooLong = await keys('roll', third.api_key ?? '', '--old-expires-in-hours', '200');
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain('168');
    expect((await keys('roll', `pk_${'0'.repeat(32)}`)).code).toBe(2);
    // An expired key has nothing left to roll.
    expect((await keys('roll', next.api_key ?? '')).code).toBe(2);
    expect((await keys('allow-ips', third.api_key ?? '', '--ip', '300.1.1.1/8')).code).toBe(2);
    expect((await keys('allow-ips', third.api_key ?? '')).code).toBe(2);
    // Options the parser itself refuses: unknown, or a value it cannot take.
    expect((await keys('create', '--name', 'Gamma Ltd', '--unknown-flag')).code).toBe(2);
    expect((await keys('roll', third.api_key ?? '', '--old-expires-in-hours', '-1')).code).toBe(2);
    // A mistyped number is no hour count: '' was read as 0 (the old key ended at once), '0x10' as 16.
    for (const typo of [
      '--old-expires-in-hours=',
      '--old-expires-in-hours=0x10',
      '--old-expires-in-hours=1e1',
    ]) {
      expect((await keys('roll', third.api_key ?? '', typo)).code).toBe(2);
    }
  });

  it("invites a merchant's dashboard user, who must choose a password at first sign-in", async () => {
    const created = await keys('create', '--name', 'Invite Ltd', '--json');
    const { merchant_id: merchantId } = JSON.parse(created.stdout.trim()) as { merchant_id: string };
    const email = `first-${Date.now()}@invite.ng`;
    const invited = await keys('invite', '--merchant', merchantId, '--email', email.toUpperCase(), '--json');
    expect(invited.code).toBe(0);
    const result = JSON.parse(invited.stdout.trim()) as { email: string; temporary_password: string };
    expect(result).toMatchObject({ merchant_id: merchantId, email });
    const signIn = await call(gateway, 'POST', '/api/v1/dashboard/sessions', {
      body: { email, password: result.temporary_password },
    });
    expect(signIn.body?.data).toMatchObject({ challenge: 'NEW_PASSWORD_REQUIRED' });

    // Again (a run again, or a retry after Cognito made the user and the answer was lost): no new
    // user; locally, where nothing is emailed, a new temporary password (the printed one may be lost).
    const again = await keys('invite', '--merchant', merchantId, '--email', email, '--json');
    expect(again.code).toBe(0);
    const resent = JSON.parse(again.stdout.trim()) as { temporary_password: string };
    expect(resent).toEqual({
      merchant_id: merchantId,
      email,
      temporary_password: expect.any(String),
      already_invited_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      signed_in: false,
      status: 'FORCE_CHANGE_PASSWORD',
      enabled: true,
    });
    expect(resent.temporary_password).not.toBe(result.temporary_password);
    const signInWith = async (password: string) =>
      (await call(gateway, 'POST', '/api/v1/dashboard/sessions', { body: { email, password } })).status;
    expect(await signInWith(result.temporary_password)).toBe(401);
    // A first sign-in begun with the replaced password cannot finish: its session ended with it, so
    // whoever held the lost password cannot choose one and lock out the user given the new one.
    const stale = await call(gateway, 'POST', '/api/v1/dashboard/sessions/challenge', {
      body: {
        email,
        challenge: 'NEW_PASSWORD_REQUIRED',
        session: (signIn.body?.data as { session?: string } | undefined)?.session,
        new_password: 'Pw-stale-session-Aa1!',
      },
    });
    expect(stale.status).toBe(401);
    const renewed = await call(gateway, 'POST', '/api/v1/dashboard/sessions', {
      body: { email, password: resent.temporary_password },
    });
    expect(renewed.body?.data).toMatchObject({ challenge: 'NEW_PASSWORD_REQUIRED' });
    const againText = await keys('invite', '--merchant', merchantId, '--email', email);
    expect(againText.stdout).toContain(`${email} is already a dashboard user of ${merchantId}`);
    expect(againText.stdout).toContain(
      'They have a temporary password not yet changed (from the invitation, or a reset-password). Nothing is emailed locally',
    );
    const signedIn = await aDashboardUser(merchantId);
    const confirmed = await keys('invite', '--merchant', merchantId, '--email', signedIn.email);
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain('They have signed in and chosen their password.');
    // An email signs in to one merchant's dashboard: another merchant's invitation is refused.
    const other = await keys('create', '--name', 'Other Invite Ltd', '--json');
    const { merchant_id: otherId } = JSON.parse(other.stdout.trim()) as { merchant_id: string };
    const taken = await keys('invite', '--merchant', otherId, '--email', email);
    expect(taken.code).toBe(3);
    expect(taken.stderr).toContain(`already exists, a user of another merchant (${merchantId})`);
    const nobody = await keys('invite', '--merchant', 'mer_nobody', '--email', 'x@invite.ng');
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toContain('no merchant mer_nobody');
  });

  it('invites only an email the dashboard signs in with: one it would refuse is a usage error, and no user is made', async () => {
    const created = await keys('create', '--name', 'Odd Email Ltd', '--json');
    const { merchant_id: merchantId } = JSON.parse(created.stdout.trim()) as { merchant_id: string };
    const stamp = Date.now();
    for (const bad of [
      `dave${stamp}@dävé.test`,
      `a${stamp}@b.c`,
      `a..b${stamp}@x.ng`,
      `e${stamp}@x_y.ng`,
      `e${stamp}@домен.рф`,
    ]) {
      const refused = await keys('invite', '--merchant', merchantId, '--email', bad);
      expect([refused.code, refused.stderr], bad).toEqual([
        2,
        expect.stringContaining('--email must be an email address'),
      ]);
      expect(await getDashboardUser(bad), bad).toBeUndefined();
    }
    // An internationalised domain in its ASCII form is an email address to both.
    const email = `e${stamp}@xn--d1acufc.xn--p1ai`;
    const invited = await keys('invite', '--merchant', merchantId, '--email', email, '--json');
    expect(invited.code).toBe(0);
    expect(await getDashboardUser(email)).toMatchObject({ email });
    const { temporary_password: password } = JSON.parse(invited.stdout.trim()) as {
      temporary_password: string;
    };
    const signIn = await call(gateway, 'POST', '/api/v1/dashboard/sessions', { body: { email, password } });
    expect(signIn.body?.data).toMatchObject({ challenge: 'NEW_PASSWORD_REQUIRED' });
  });

  /** A dashboard user of a new merchant, and their sign-in with email and password. */
  const aUserOfNewMerchant = async (name: string) => {
    const created = await keys('create', '--name', name, '--json');
    const { merchant_id: merchantId } = JSON.parse(created.stdout.trim()) as { merchant_id: string };
    const user = await aDashboardUser(merchantId);
    const signIn = () =>
      call(gateway, 'POST', '/api/v1/dashboard/sessions', {
        body: { email: user.email, password: user.password },
      });
    return { merchantId, user, signIn };
  };

  it('turns TOTP off for a user who lost their authenticator: the password alone signs in, and a new one can be set up', async () => {
    const { merchantId, user, signIn } = await aUserOfNewMerchant('Lost Phone Ltd');
    const enrol = async () => {
      const session = data<{ access_token: string }>(await signIn());
      const started = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp', {
        headers: user.headers,
        body: { access_token: session.access_token },
      });
      return { started, accessToken: session.access_token };
    };
    const { started, accessToken } = await enrol();
    const { secret } = data<{ secret: string }>(started);
    const confirmed = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp/verify', {
      headers: user.headers,
      body: { access_token: accessToken, code: totpCode(secret) },
    });
    expect(confirmed.status).toBe(200);
    expect(data(await signIn())).toMatchObject({ challenge: 'SOFTWARE_TOKEN_MFA' });

    const reset = await keys('reset-mfa', '--email', user.email.toUpperCase(), '--json');
    expect([reset.code, reset.stderr]).toEqual([0, '']);
    expect(JSON.parse(reset.stdout.trim())).toEqual({
      email: user.email,
      merchant_id: merchantId,
      totp: 'off',
      signed_out: true,
    });
    expect(data(await signIn())).toMatchObject({ merchant_id: merchantId, id_token: expect.any(String) });
    // A new authenticator can be set up (refused while TOTP was on).
    expect((await enrol()).started.status).toBe(200);

    const nobody = await keys('reset-mfa', '--email', 'nobody@lost-phone.ng');
    expect([nobody.code, nobody.stderr]).toEqual([
      2,
      expect.stringContaining('no dashboard user nobody@lost-phone.ng'),
    ]);
    expect((await keys('reset-mfa')).code).toBe(2);
  });

  it("signs the user out everywhere with the reset: a stolen session's access token cannot turn an authenticator on again", async () => {
    const { merchantId, user, signIn } = await aUserOfNewMerchant('Stolen Session Ltd');
    const startEnrolment = (accessToken: string) =>
      call(gateway, 'POST', '/api/v1/dashboard/mfa/totp', {
        headers: user.headers,
        body: { access_token: accessToken },
      });
    // Someone with the user's session turns on an authenticator of their own: the user is locked out.
    const stolen = data<{ access_token: string }>(await signIn()).access_token;
    const { secret } = data<{ secret: string }>(await startEnrolment(stolen));
    const turnedOn = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp/verify', {
      headers: user.headers,
      body: { access_token: stolen, code: totpCode(secret) },
    });
    expect(turnedOn.status).toBe(200);
    expect(data(await signIn())).toMatchObject({ challenge: 'SOFTWARE_TOKEN_MFA' });

    const reset = await keys('reset-mfa', '--email', user.email);
    expect(reset.code).toBe(0);
    // What the stolen ID token can still do, and what to check, is said.
    expect(reset.stdout).toContain(`npm run keys -- list --merchant ${merchantId} and revoke any key`);
    expect(reset.stdout).toContain('check Webhooks for endpoints they did not add');
    // The stolen token can no longer start the lock-out again; the user's own new session can enrol.
    const again = await startEnrolment(stolen);
    expect(again.status).toBe(401);
    const own = data<{ access_token: string }>(await signIn()).access_token;
    expect((await startEnrolment(own)).status).toBe(200);
  });

  it('gives a user who forgot their password a temporary one: they choose a new one at sign-in, then give their code', async () => {
    const { merchantId, user, signIn } = await aUserOfNewMerchant('Forgot Password Ltd');
    // With an authenticator on.
    const before = data<{ access_token: string }>(await signIn()).access_token;
    const started = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp', {
      headers: user.headers,
      body: { access_token: before },
    });
    const { secret } = data<{ secret: string }>(started);
    await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp/verify', {
      headers: user.headers,
      body: { access_token: before, code: totpCode(secret) },
    });
    const reset = await keys('reset-password', '--email', user.email.toUpperCase(), '--json');
    expect([reset.code, reset.stderr]).toEqual([0, '']);
    const said = JSON.parse(reset.stdout.trim()) as { temporary_password: string };
    expect(said).toEqual({
      email: user.email,
      merchant_id: merchantId,
      temporary_password: expect.any(String),
      signed_out: true,
    });
    // The old password is refused; the old access token too (its ID token is not: Cognito's rule).
    expect((await signIn()).status).toBe(401);
    const again = await call(gateway, 'POST', '/api/v1/dashboard/mfa/totp', {
      headers: user.headers,
      body: { access_token: before },
    });
    expect(again.status).toBe(401);
    // The temporary one asks for a new password, and then, as Cognito does, for the code.
    const temporary = data<{ challenge: string; session: string }>(
      await call(gateway, 'POST', '/api/v1/dashboard/sessions', {
        body: { email: user.email, password: said.temporary_password },
      }),
    );
    expect(temporary.challenge).toBe('NEW_PASSWORD_REQUIRED');
    const chosen = await call(gateway, 'POST', '/api/v1/dashboard/sessions/challenge', {
      body: {
        email: user.email,
        challenge: 'NEW_PASSWORD_REQUIRED',
        session: temporary.session,
        new_password: aPassword(),
      },
    });
    expect(data(chosen)).toMatchObject({ challenge: 'SOFTWARE_TOKEN_MFA', session: expect.any(String) });
    expect((await keys('reset-password', '--email', 'nobody@forgot.ng')).code).toBe(2);
    expect((await keys('reset-password')).code).toBe(2);
    // A disabled user could not sign in with it: refused, and nothing is changed.
    await cognitoClient(config.dashboard.cognitoEndpoint ?? '').send(
      new AdminDisableUserCommand({ UserPoolId: config.dashboard.userPoolId, Username: user.email }),
    );
    const disabled = await keys('reset-password', '--email', user.email);
    expect([disabled.code, disabled.stderr]).toEqual([3, expect.stringContaining('is disabled in Cognito')]);
  });

  it('prints the secret once in plain text mode too', async () => {
    const created = await keys('create', '--name', 'Plain Text Ltd');
    expect(created.stdout).toMatch(/api_key: +pk_[0-9a-f]{32}/);
    expect(created.stdout).toMatch(/api_secret: +sk_/);
  });

  it("refuses a key past the merchant's limit with exit 3, and a roll that ends the old key at once passes", async () => {
    const { merchant, apiKey } = await aMerchant();
    for (let i = 1; i < MAX_USABLE_KEYS; i++) await createApiKey(merchant.merchant_id);
    const refused = await keys('create', '--merchant', merchant.merchant_id);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`Refused: At most ${MAX_USABLE_KEYS} API keys can work at once`);
    const keepingOld = await keys('roll', apiKey);
    expect(keepingOld.code).toBe(3);
    const endingOld = await keys('roll', apiKey, '--old-expires-in-hours', '0');
    expect(endingOld.code).toBe(0);
  });

  it('refuses a secret given in place of a key without repeating it', async () => {
    for (const secret of [`sk_${'7'.repeat(40)}`, ` sk_${'7'.repeat(40)}`, `whsec_${'7'.repeat(40)}`]) {
      for (const command of [
        ['revoke'],
        ['roll', '--old-expires-in-hours', '1'],
        ['allow-ips', '--any-ip'],
      ]) {
        const [name = '', ...options] = command;
        const given = await keys(name, secret, ...options);
        expect([given.code, given.stderr]).toEqual([2, expect.stringContaining('was given something else')]);
        expect(given.stdout + given.stderr).not.toContain('7777777');
      }
    }
  });

  it('refuses a bad create with usage and exit code 2', async () => {
    expect((await keys('create', '--name', 'X', '--ip', '300.1.1.1/8')).code).toBe(2);
    expect((await keys('create')).code).toBe(2);
    expect((await keys('create', '--name', 'X', '--merchant', 'mer_1')).code).toBe(2);
    // A name every payer's name enquiry shows: no line break, escape or bidi override (API.md §11's
    // rule for names people read), nor longer than a customer's name.
    for (const name of ['Evil\nLine', 'Esc\u001b[2JX', 'Rev\u202Eerse', 'N'.repeat(101)]) {
      const refused = await keys('create', '--name', name);
      expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('--name: ')]);
    }
    expect((await keys('create', '--merchant', 'mer_missing')).code).toBe(2);
    for (const phone of ['+2348012345678', '08012345678']) {
      expect((await keys('create', '--name', 'Phone Ltd', '--phone', phone)).code).toBe(0);
    }
    for (const phone of ['08012345678x', '+0123456789', '8012345678', '+234 801 234 5678']) {
      const badPhone = await keys('create', '--name', 'X', '--phone', phone);
      expect([badPhone.code, badPhone.stderr]).toEqual([2, expect.stringContaining('--phone must be')]);
    }
    // With Paystack the wallet is opened there with this shell's key: a missing one is said before anything is made.
    const keyless = await runCli('keys', ['create', '--name', 'Keyless Ltd'], {
      PARTNER: 'paystack',
      PAYSTACK_SECRET_KEY: undefined,
    });
    expect([keyless.code, keyless.stderr]).toEqual([
      2,
      expect.stringContaining(
        'with PARTNER=paystack the new wallet is opened at Paystack: give PAYSTACK_SECRET_KEY',
      ),
    ]);
    // The wallet's contact email is checked as the API checks one, before any merchant is made.
    const badEmail = await keys('create', '--name', 'Mail Ltd', '--email', 'ops@acme');
    expect([badEmail.code, badEmail.stderr]).toEqual([
      2,
      expect.stringContaining('--email must be an email address'),
    ]);
  });

  // Split from the test above: each of these spawns the CLI, and ~30 in one test outran its limit on
  // a loaded machine.
  it('refuses a contact without a new merchant, an unknown merchant or key, and an unclear allowlist, with exit code 2', async () => {
    // A wallet's contact goes with the new merchant whose wallet is issued, never silently dropped.
    const contactLater = await keys('create', '--merchant', 'mer_1', '--phone', '+2348012345678');
    expect([contactLater.code, contactLater.stderr]).toEqual([2, expect.stringContaining('go with --name')]);
    expect((await keys('create', '--merchant', 'mer_1', '--email', 'ops@acme.ng')).code).toBe(2);
    const unknown = await keys('list', '--merchant', 'mer_missing');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no merchant mer_missing');
    expect((await keys('revoke', `pk_${'0'.repeat(32)}`)).code).toBe(2);
    // Both or neither of --ip and --any-ip: which one was meant is not guessed.
    for (const args of [['--ip', '10.0.0.0/8', '--any-ip'], []]) {
      const unclear = await keys('allow-ips', `pk_${'0'.repeat(32)}`, ...args);
      expect([unclear.code, unclear.stderr]).toEqual([
        2,
        expect.stringContaining('give --ip CIDR (one or more) or --any-ip'),
      ]);
    }
  });

  it('refuses an unknown command and an option the command does not take, with usage and exit code 2', async () => {
    expect((await keys('frobnicate')).code).toBe(2);
    expect((await keys('toString')).code).toBe(2);
    // An option the command does not read is said, never dropped.
    for (const args of [
      ['roll', 'pk_x', '--phone', '+2348012345678'],
      ['revoke', 'pk_x', '--ip', '10.0.0.0/8'],
      ['list', '--merchant', 'mer_1', '--expires', '2030-01-01T00:00:00Z'],
      ['invite', '--merchant', 'mer_1', '--email', 'a@b.ng', '--name', 'Ada'],
    ]) {
      const extra = await keys(...args);
      expect([extra.code, extra.stderr]).toEqual([2, expect.stringMatching(/--\w+ does not go with \w+/)]);
    }
    const bare = await keys();
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Usage:');
  });

  it("hashes a new key only with the pepper of the running service's data folder, never one of another folder or a new one", async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'keys-data-'));
    try {
      // The data folder of `npm start`: its secrets, and its demo merchant's key pair.
      const demo = await aMerchant();
      const ours = path.join(root, 'ours');
      mkdirSync(ours);
      const writeFolder = (dir: string, pepper: string, demoKey: { apiKey: string; apiSecret: string }) => {
        writeFileSync(path.join(dir, 'local-secrets.json'), JSON.stringify({ API_KEY_PEPPER: pepper }));
        writeFileSync(
          path.join(dir, 'demo-merchant.json'),
          JSON.stringify({ api_key: demoKey.apiKey, api_secret: demoKey.apiSecret }),
        );
      };
      writeFolder(ours, config.apiKeyPepper ?? '', demo);
      // Another installation's folder: its own pepper and demo key, unknown to this service.
      const theirs = path.join(root, 'theirs');
      mkdirSync(theirs);
      writeFolder(theirs, 'a'.repeat(43), { apiKey: `pk_test_${'1'.repeat(32)}`, apiSecret: 'sk_x' });
      const missing = path.join(root, 'missing');
      const asOperator = (dataDir: string, ...args: string[]) =>
        runCli('keys', args, { API_KEY_PEPPER: undefined, DATA_DIR: dataDir });

      const made = await asOperator(ours, 'create', '--merchant', demo.merchant.merchant_id, '--json');
      expect(made.code).toBe(0);
      const key = JSON.parse(made.stdout.trim()) as { api_key: string; api_secret: string };
      const headers = { 'X-API-Key': key.api_key, 'X-API-Secret': key.api_secret };
      expect((await call(gateway, 'GET', '/balance', { headers })).status).toBe(200);

      const wrong = await asOperator(theirs, 'create', '--merchant', demo.merchant.merchant_id);
      expect([wrong.code, wrong.stderr]).toEqual([
        1,
        expect.stringContaining('is not the one of the service'),
      ]);
      const rolled = await asOperator(theirs, 'roll', key.api_key);
      expect([rolled.code, rolled.stderr]).toEqual([
        1,
        expect.stringContaining('is not the one of the service'),
      ]);
      const none = await asOperator(missing, 'create', '--name', 'Nowhere Ltd');
      expect([none.code, none.stderr]).toEqual([1, expect.stringContaining('No local secrets in')]);
      // A mistake in the command line is told first, as usage (exit 2), whatever the folder.
      for (const args of [['create'], ['create', '--name', 'X', '--phone', 'bad'], ['roll']]) {
        const mistake = await asOperator(missing, ...args);
        expect([mistake.code, mistake.stderr]).toEqual([2, expect.stringContaining('Usage:')]);
      }
      expect(existsSync(missing)).toBe(false);
      // Nothing was hashed: the key still works, and the commands that hash nothing need no folder.
      expect((await call(gateway, 'GET', '/balance', { headers })).status).toBe(200);
      const listed = await asOperator(missing, 'list', '--merchant', demo.merchant.merchant_id, '--json');
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout.trim())).toHaveLength(2);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('says which address it tried when the local service is not running', async () => {
    const { stderr, code } = await runCli('keys', ['list', '--merchant', 'mer_x'], {
      DYNAMODB_ENDPOINT: undefined,
      DYNAMODB_PORT: '1',
      SANDBOX_PORT: '2',
    });
    expect(code).toBe(1);
    expect(stderr).toContain('http://127.0.0.1:1');
    expect(stderr).toContain('npm start');
  });
});
