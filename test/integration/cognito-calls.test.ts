import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AdminCreateUserCommand,
  AdminDeleteUserCommand,
  AdminGetUserCommand,
  AdminSetUserMFAPreferenceCommand,
  AdminSetUserPasswordCommand,
  AdminUserGlobalSignOutCommand,
  AssociateSoftwareTokenCommand,
  CognitoIdentityProviderClient,
  GetUserCommand,
  InitiateAuthCommand,
  RespondToAuthChallengeCommand,
  SetUserMFAPreferenceCommand,
  VerifySoftwareTokenCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CognitoOperation } from '#shared/dashboard/cognito.ts';

// The dashboard calls Cognito without the SDK's client (shared/dashboard/cognito.ts). The client
// is the reference: both send every operation the dashboard uses to a recorder, and each must
// reach Cognito as the same request (path, target, media type, JSON body, signed or not). What
// Cognito answers is the e2e dashboard tests' part, against the local Cognito.
interface Recorded {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}
const recorded: Recorded[] = [];
let answer: { status: number; body: object } = { status: 200, body: {} };
const server = createServer(async (request, response) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  recorded.push({
    path: request.url ?? '',
    headers: request.headers,
    body: JSON.parse(Buffer.concat(chunks).toString()),
  });
  response
    .writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.1' })
    .end(JSON.stringify(answer.body));
});
let url = '';
const savedEnv = { ...process.env };

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  process.env = savedEnv;
  server.close();
});

async function ours() {
  vi.resetModules();
  Object.assign(process.env, {
    AWS_REGION: 'eu-west-1',
    COGNITO_ENDPOINT: url,
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
  });
  return (await import('#shared/dashboard/cognito.ts')).cognito;
}

function asSent({ path, headers, body }: Recorded) {
  return {
    path,
    target: headers['x-amz-target'],
    contentType: headers['content-type'],
    body,
    signedFor:
      /Credential=[^/]+\/\d{8}\/([^/]+\/[^/]+)\//.exec(String(headers.authorization ?? ''))?.[1] ??
      'unsigned',
  };
}

const CALLS = {
  InitiateAuth: {
    ClientId: 'c',
    AuthFlow: 'USER_PASSWORD_AUTH',
    AuthParameters: { USERNAME: 'a@b.ng', PASSWORD: 'p' },
  },
  RespondToAuthChallenge: {
    ClientId: 'c',
    ChallengeName: 'SOFTWARE_TOKEN_MFA',
    Session: 's',
    ChallengeResponses: { USERNAME: 'a@b.ng', SOFTWARE_TOKEN_MFA_CODE: '123456' },
  },
  GetUser: { AccessToken: 't' },
  AssociateSoftwareToken: { AccessToken: 't' },
  VerifySoftwareToken: { AccessToken: 't', UserCode: '123456', FriendlyDeviceName: 'dashboard' },
  SetUserMFAPreference: { AccessToken: 't', SoftwareTokenMfaSettings: { Enabled: true, PreferredMfa: true } },
  AdminCreateUser: {
    UserPoolId: 'eu-west-1_abc',
    Username: 'a@b.ng',
    UserAttributes: [{ Name: 'email', Value: 'a@b.ng' }],
    TemporaryPassword: 'p',
    MessageAction: 'SUPPRESS',
  },
  AdminSetUserPassword: { UserPoolId: 'eu-west-1_abc', Username: 'a@b.ng', Password: 'p', Permanent: true },
  AdminDeleteUser: { UserPoolId: 'eu-west-1_abc', Username: 'a@b.ng' },
  AdminGetUser: { UserPoolId: 'eu-west-1_abc', Username: 'a@b.ng' },
  AdminSetUserMFAPreference: {
    UserPoolId: 'eu-west-1_abc',
    Username: 'a@b.ng',
    SoftwareTokenMfaSettings: { Enabled: false, PreferredMfa: false },
  },
  AdminUserGlobalSignOut: { UserPoolId: 'eu-west-1_abc', Username: 'a@b.ng' },
  // Every operation `cognito()` can call, or this does not compile.
} as const satisfies Record<CognitoOperation, object>;

const COMMANDS = {
  InitiateAuth: InitiateAuthCommand,
  RespondToAuthChallenge: RespondToAuthChallengeCommand,
  GetUser: GetUserCommand,
  AssociateSoftwareToken: AssociateSoftwareTokenCommand,
  VerifySoftwareToken: VerifySoftwareTokenCommand,
  SetUserMFAPreference: SetUserMFAPreferenceCommand,
  AdminCreateUser: AdminCreateUserCommand,
  AdminSetUserPassword: AdminSetUserPasswordCommand,
  AdminDeleteUser: AdminDeleteUserCommand,
  AdminGetUser: AdminGetUserCommand,
  AdminSetUserMFAPreference: AdminSetUserMFAPreferenceCommand,
  AdminUserGlobalSignOut: AdminUserGlobalSignOutCommand,
};

describe('Cognito calls without the SDK client', () => {
  it('sends each operation the dashboard uses as the SDK client does', async () => {
    const reference = new CognitoIdentityProviderClient({
      region: 'eu-west-1',
      endpoint: url,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    });
    const cognito = await ours();
    for (const [operation, input] of Object.entries(CALLS) as [keyof typeof CALLS, never][]) {
      recorded.length = 0;
      const Command = COMMANDS[operation] as unknown as new (
        input: never,
      ) => Parameters<typeof reference.send>[0];
      await reference.send(new Command(input));
      await cognito(operation, input);
      const [sdk, mine] = recorded.map(asSent);
      expect(mine, operation).toEqual(sdk);
      expect(mine?.signedFor, operation).toBe(
        operation.startsWith('Admin') ? 'eu-west-1/cognito-idp' : 'unsigned',
      );
    }
  });

  it('reads a user as Cognito answers AdminGetUser (its dates in epoch seconds), and none for UserNotFoundException', async () => {
    process.env.USER_POOL_ID = 'eu-west-1_abc';
    await ours();
    const { getDashboardUser } = await import('#shared/dashboard/users.ts');
    try {
      answer = {
        status: 200,
        body: {
          Username: '0f1e2d3c',
          UserAttributes: [
            { Name: 'email', Value: 'ada@acme.ng' },
            { Name: 'custom:merchant_id', Value: 'mer_1' },
          ],
          UserCreateDate: 1763942400.5,
          UserLastModifiedDate: 1763942400.5,
          UserStatus: 'CONFIRMED',
          Enabled: true,
        },
      };
      await expect(getDashboardUser(' Ada@Acme.ng ')).resolves.toEqual({
        email: 'ada@acme.ng',
        merchantId: 'mer_1',
        status: 'CONFIRMED',
        enabled: true,
        createdAt: '2025-11-24T00:00:00.500Z',
      });
      expect(recorded.at(-1)?.body).toMatchObject({ Username: 'ada@acme.ng' });
      answer = { status: 400, body: { __type: 'UserNotFoundException', message: 'User does not exist.' } };
      await expect(getDashboardUser('nobody@acme.ng')).resolves.toBeUndefined();
    } finally {
      answer = { status: 200, body: {} };
    }
  });

  it("throws Cognito's refusal with its type as the name and its message, as the SDK does", async () => {
    const cognito = await ours();
    answer = {
      status: 400,
      body: { __type: 'NotAuthorizedException', message: 'Incorrect username or password.' },
    };
    try {
      const error = await cognito('InitiateAuth', CALLS.InitiateAuth).catch((e: unknown) => e);
      expect(error).toMatchObject({
        name: 'NotAuthorizedException',
        message: 'Incorrect username or password.',
      });
      answer = {
        status: 400,
        body: { __type: 'com.amazonaws.cognito.identity.idp#InvalidPasswordException', message: 'Too short' },
      };
      const prefixed = await cognito('RespondToAuthChallenge', CALLS.RespondToAuthChallenge).catch(
        (e: unknown) => e,
      );
      expect(prefixed).toMatchObject({ name: 'InvalidPasswordException', message: 'Too short' });
    } finally {
      answer = { status: 200, body: {} };
    }
  });

  it('refuses a challenge the dashboard cannot answer, and an enrolment Cognito did not call a SUCCESS', async () => {
    await ours();
    process.env.USER_POOL_CLIENT_ID = 'c';
    const { signIn } = await import('#shared/dashboard/sign-in.ts');
    const { confirmTotpEnrolment } = await import('#shared/dashboard/mfa.ts');
    try {
      // A pool that asks to set up MFA (or any other challenge): a 401, never a session to answer.
      answer = { status: 200, body: { ChallengeName: 'MFA_SETUP', Session: 's', ChallengeParameters: {} } };
      await expect(signIn('a@b.ng', 'p')).rejects.toMatchObject({ code: 'unauthorized' });
      // VerifySoftwareToken answered without a SUCCESS: TOTP is not turned on.
      answer = { status: 200, body: { Status: 'ERROR' } };
      const payload = Buffer.from(JSON.stringify({ sub: 'u1', token_use: 'access' })).toString('base64url');
      recorded.length = 0;
      await expect(confirmTotpEnrolment(`h.${payload}.s`, '123456', { sub: 'u1' })).rejects.toMatchObject({
        code: 'validation_error',
      });
      expect(recorded.map((sent) => sent.headers['x-amz-target'])).toEqual([
        'AWSCognitoIdentityProviderService.VerifySoftwareToken',
      ]);
    } finally {
      answer = { status: 200, body: {} };
    }
  });
});
