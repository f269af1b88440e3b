import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import {
  CognitoIdentityProviderClient,
  CreateUserPoolClientCommand,
  CreateUserPoolCommand,
  ListUserPoolClientsCommand,
  ListUserPoolsCommand,
  UpdateUserPoolClientCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { stopChild } from '#infra/local/dynamodb.ts';
import { localCredentials, waitFor } from '#infra/local/process.ts';
import { DASHBOARD_USER_POOL } from '#shared/dashboard/user-pool.ts';

export interface LocalCognito {
  /** Where the SDK's Cognito client is pointed locally (`COGNITO_ENDPOINT`). */
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The Cognito stand-in of `npm start` (API.md §10): the `cognito-local` package, run as a child
 * process (it is built on the v2 AWS SDK, kept out of this process; `cognito-child.cjs` runs its
 * server with the sign-in checks Cognito makes and it lacks) with its state in
 * `<dataDir>/cognito/.cognito` (in a throw-away folder without one). It answers the same SDK calls
 * as Cognito and signs tokens with its own RSA key, published at `/<poolId>/.well-known/jwks.json`.
 */
export async function startCognitoLocal(options: { port: number; dataDir: string }): Promise<LocalCognito> {
  // A busy port is Node's own EADDRINUSE, named like every other service's (the child would only log it).
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(options.port, '127.0.0.1', () => probe.close(() => resolve()));
  });
  const cwd = path.join(options.dataDir, 'cognito');
  // cognito-local stores each user's password as typed: for this user alone, wherever the folder is.
  mkdirSync(cwd, { recursive: true, mode: 0o700 });
  chmodSync(cwd, 0o700);
  // cognito-local's server, with its sign-in made as strict as Cognito's (see the script).
  const script = path.join(import.meta.dirname, 'cognito-child.cjs');
  const child = spawn(process.execPath, [script], {
    cwd,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(options.port),
      // Its aws-sdk v2 prints an end-of-support notice on load.
      AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
    },
    // Its standard input stays open while this process lives: the child ends when it closes.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const endpoint = `http://127.0.0.1:${options.port}`;
  const client = cognitoClient(endpoint);
  try {
    await waitFor(
      async () => {
        if (exited) throw new Error(`cognito-local exited:\n${output}`);
        await client.send(new ListUserPoolsCommand({ MaxResults: 1 }));
      },
      30_000,
      'the local Cognito (cognito-local)',
    );
  } catch (error) {
    await stopChild(child);
    if (/EADDRINUSE/.test(output)) {
      throw new Error(`listen EADDRINUSE: address already in use 127.0.0.1:${options.port}`, {
        cause: error,
      });
    }
    throw error;
  }
  return { endpoint, process: child, stop: () => stopChild(child) };
}

export function cognitoClient(endpoint: string): CognitoIdentityProviderClient {
  return new CognitoIdentityProviderClient({ endpoint, region: 'us-east-1', credentials: localCredentials });
}

/**
 * The dashboard's user pool and app client on the local Cognito, created once (kept across
 * restarts with the rest of `.data/`), configured as the CDK stack configures them on AWS.
 */
export async function createDashboardUserPool(
  endpoint: string,
  tablePrefix: string,
): Promise<{ USER_POOL_ID: string; USER_POOL_CLIENT_ID: string }> {
  const client = cognitoClient(endpoint);
  const poolName = `${tablePrefix}dashboard`;
  const { UserPools } = await client.send(new ListUserPoolsCommand({ MaxResults: 60 }));
  let poolId = UserPools?.find((pool) => pool.Name === poolName)?.Id;
  if (!poolId) {
    const created = await client.send(
      new CreateUserPoolCommand({
        PoolName: poolName,
        UsernameAttributes: ['email'],
        Policies: { PasswordPolicy: DASHBOARD_USER_POOL.passwordPolicy },
        AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
        MfaConfiguration: 'OPTIONAL',
        Schema: [
          {
            Name: DASHBOARD_USER_POOL.merchantAttribute,
            AttributeDataType: 'String',
            Mutable: false,
          },
        ],
      }),
    );
    poolId = created.UserPool?.Id;
  }
  if (!poolId) throw new Error('the local Cognito created no user pool');
  const { UserPoolClients } = await client.send(
    new ListUserPoolClientsCommand({ UserPoolId: poolId, MaxResults: 60 }),
  );
  let clientId = UserPoolClients?.find((app) => app.ClientName === DASHBOARD_USER_POOL.clientName)?.ClientId;
  // The stack's app client's token lifetimes (cognito-local's default is a day) and write list.
  const settings = {
    IdTokenValidity: DASHBOARD_USER_POOL.tokenValidityMinutes,
    AccessTokenValidity: DASHBOARD_USER_POOL.tokenValidityMinutes,
    TokenValidityUnits: { IdToken: 'minutes', AccessToken: 'minutes' } as const,
    WriteAttributes: [...DASHBOARD_USER_POOL.writableAttributes] as string[],
  };
  if (!clientId) {
    const created = await client.send(
      new CreateUserPoolClientCommand({
        UserPoolId: poolId,
        ClientName: DASHBOARD_USER_POOL.clientName,
        ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
        ...settings,
      }),
    );
    clientId = created.UserPoolClient?.ClientId;
  } else {
    // A client an older `npm start` made in the same data folder, before it set them.
    await client.send(
      new UpdateUserPoolClientCommand({ UserPoolId: poolId, ClientId: clientId, ...settings }),
    );
  }
  if (!clientId) throw new Error('the local Cognito created no app client');
  return { USER_POOL_ID: poolId, USER_POOL_CLIENT_ID: clientId };
}
