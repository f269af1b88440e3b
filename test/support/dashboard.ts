import { createHmac, randomUUID } from 'node:crypto';
import { appClientId, cognito } from '#shared/dashboard/cognito.ts';
import { createDashboardUser } from '#shared/dashboard/users.ts';

/** A password the pool's policy accepts. */
export const aPassword = () => `Pw-${randomUUID()}-Aa1!`;

/**
 * A signed-in dashboard user of a merchant, made in the test run's local Cognito: its ID token and
 * the header that authenticates as it on `session` routes.
 */
export async function aDashboardUser(merchantId: string) {
  const email = `user-${randomUUID().slice(0, 8)}@example.ng`;
  const password = aPassword();
  const { sub } = await createDashboardUser({ merchantId, email, password, permanent: true });
  const idToken = await signInAt(email, password);
  return { email, password, sub, idToken, headers: { Authorization: `Bearer ${idToken}` } };
}

/** Signs in at Cognito directly (the way the sign-in route does), returning the ID token. */
export async function signInAt(email: string, password: string): Promise<string> {
  const result = await cognito('InitiateAuth', {
    ClientId: appClientId(),
    AuthFlow: 'USER_PASSWORD_AUTH',
    AuthParameters: { USERNAME: email, PASSWORD: password },
  });
  const token = result.AuthenticationResult?.IdToken;
  if (!token) throw new Error(`no ID token for ${email}: ${result.ChallengeName ?? 'no challenge'}`);
  return token;
}

/** The current RFC 6238 code (SHA-1, 6 digits, 30 s) of a base32 secret, as an authenticator app shows it. */
export function totpCode(base32Secret: string, at = Date.now()): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of base32Secret.replace(/=+$/, '').toUpperCase()) {
    bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  }
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((byte) => Number.parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const digest = createHmac('sha1', key).update(counter).digest();
  const offset = (digest[digest.length - 1] ?? 0) & 0xf;
  const value = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(value % 1_000_000).padStart(6, '0');
}

/** A JWT's claims under `alg: none`, with no signature: what a forger makes without the key. */
export function unsignedCopy(token: string): string {
  const [header = '', payload = ''] = token.split('.');
  const none = { ...JSON.parse(Buffer.from(header, 'base64url').toString('utf8')), alg: 'none' };
  return `${Buffer.from(JSON.stringify(none)).toString('base64url')}.${payload}.`;
}

/** A JWT's header and claims with a signature that is not the key's. */
export function forgedCopy(token: string): string {
  const [header = '', payload = ''] = token.split('.');
  return `${header}.${payload}.forged`;
}

/** A JWT's claims, read without checking anything. */
export function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
}

/** A JWT with some claims changed under its own, real signature (which signed the old claims). */
export function reclaimedCopy(token: string, changes: Record<string, unknown>): string {
  const [header = '', , signature = ''] = token.split('.');
  const claims = { ...claimsOf(token), ...changes };
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}
