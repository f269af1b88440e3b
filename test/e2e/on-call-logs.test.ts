import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/**
 * What on-call reads in the logs of a merchant's requests: whose they are, which transfer, and what
 * became of it; an expected 503 without a stack. Every log line of this file's requests is captured.
 */
vi.hoisted(() => {
  process.env.LOG_LEVEL = 'INFO';
});

const { call, startTestGateway } = await import('#test/support/gateway.ts');
const { aMerchant, anAccount, fund } = await import('#test/support/merchants.ts');
const { aDashboardUser } = await import('#test/support/dashboard.ts');
const { cognitoClient } = await import('#infra/local/cognito.ts');
const { config } = await import('#shared/config.ts');
const { AdminDisableUserCommand } = await import('@aws-sdk/client-cognito-identity-provider');

type Line = Record<string, unknown>;
let logged: Line[] = [];
/** The JSON log lines written while `act` runs. */
async function linesOf(act: () => Promise<unknown>): Promise<Line[]> {
  logged = [];
  const capture = (stream: NodeJS.WriteStream) =>
    vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array) => {
      for (const text of String(chunk).split('\n')) {
        if (text.startsWith('{')) logged.push(JSON.parse(text) as Line);
      }
      return true;
    }) as typeof stream.write);
  capture(process.stdout);
  capture(process.stderr);
  try {
    await act();
  } finally {
    vi.restoreAllMocks();
  }
  return logged;
}

let gateway: Awaited<ReturnType<typeof startTestGateway>>;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

describe('the logs on-call reads', () => {
  it('name the merchant and the refused address of a key outside its allowlist', async () => {
    const merchant = await aMerchant({ allowedIps: ['203.0.113.0/24'] });
    const lines = await linesOf(() => call(gateway, 'GET', '/balance', { headers: merchant.headers }));
    expect(lines).toContainEqual(
      expect.objectContaining({
        message: 'authentication failed',
        reason: 'ip not allowed',
        api_key: merchant.apiKey,
        merchant_id: merchant.merchant.merchant_id,
        source_ip: expect.stringMatching(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/),
      }),
    );
  });

  it('carry a transfer’s reference and what became of it on its request line, refusals too', async () => {
    const merchant = await aMerchant();
    await fund(merchant.merchant.merchant_id, 1_000_000);
    const body = {
      reference: `oncall-${Date.now()}`,
      amount: 10_000,
      account_number: anAccount('058'),
      bank_code: '058',
    };
    const made = await linesOf(() =>
      call(gateway, 'POST', '/transfers', { headers: merchant.headers, body }),
    );
    expect(made).toContainEqual(
      expect.objectContaining({
        message: 'request completed',
        status: 201,
        merchant_id: merchant.merchant.merchant_id,
        reference: body.reference,
        transfer_status: expect.stringMatching(/^(pending|success)$/),
        created: true,
      }),
    );
    const clash = await linesOf(() =>
      call(gateway, 'POST', '/transfers', { headers: merchant.headers, body: { ...body, amount: 10_001 } }),
    );
    expect(clash).toContainEqual(
      expect.objectContaining({ message: 'request completed', status: 409, reference: body.reference }),
    );
  });

  it('say a partner that is down once, as a warning, without a stack', async () => {
    const merchant = await aMerchant();
    const lines = await linesOf(() =>
      call(gateway, 'POST', '/validate-account', {
        headers: merchant.headers,
        body: { account_number: anAccount('058', '88888'), bank_code: '058' },
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        message: 'request answered 503: partner unavailable',
        cause: expect.stringMatching(/^(?!none given$)\S/),
      }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ message: 'request completed', status: 503 }));
    expect(lines.filter((line) => line.message === 'request failed')).toEqual([]);
  });
  it('say why a dashboard sign-in was refused, and whose, where its answer says neither', async () => {
    const user = await aDashboardUser((await aMerchant()).merchant.merchant_id);
    const signIn = (password: string) =>
      call(gateway, 'POST', '/api/v1/dashboard/sessions', { body: { email: user.email, password } });
    const wrong = await linesOf(() => signIn(`${user.password}x`));
    const refusal = {
      message: 'dashboard sign-in refused',
      level: 'WARN',
      email: user.email,
      step: 'password',
    };
    // Cognito says NotAuthorizedException "Incorrect username or password."; the local stand-in,
    // for a confirmed user, InvalidPasswordException.
    expect(wrong).toContainEqual(
      expect.objectContaining({
        ...refusal,
        reason: expect.stringMatching(/^(NotAuthorized|InvalidPassword)Exception$/),
      }),
    );
    // The password tried is in no line.
    expect(JSON.stringify(wrong)).not.toContain(`${user.password}x`);
    await cognitoClient(config.dashboard.cognitoEndpoint ?? '').send(
      new AdminDisableUserCommand({ UserPoolId: config.dashboard.userPoolId, Username: user.email }),
    );
    const disabled = await linesOf(() => signIn(user.password));
    expect(disabled).toContainEqual(
      expect.objectContaining({ ...refusal, reason: 'NotAuthorizedException', detail: 'User is disabled.' }),
    );
    expect(disabled).toContainEqual(expect.objectContaining({ message: 'request completed', status: 401 }));
  });
});
