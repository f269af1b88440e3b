import { JwtRsaVerifier } from 'aws-jwt-verify';
import type { Jwks } from 'aws-jwt-verify/jwk';

/** Verifies a dashboard session's bearer token: its claims as API Gateway's Cognito authorizer hands them over, or `undefined`. */
export type SessionVerifier = (token: string) => Promise<Record<string, string> | undefined>;

/**
 * What API Gateway's Cognito authorizer does on AWS, done locally with the same maintained library
 * the Cognito docs recommend (`aws-jwt-verify`): the ID token's RSA signature against the pool's
 * published keys, its issuer, audience (the app client), expiry and `token_use`. The library
 * fetches keys over https only, so the local stand-in's JWKS (plain http on 127.0.0.1) is fetched
 * here and handed to it; a token signed with an unknown key fetches them again.
 */
export function localSessionVerifier(options: {
  cognitoEndpoint: string;
  userPoolId: string;
  clientId: string;
}): SessionVerifier {
  const issuer = `${options.cognitoEndpoint}/${options.userPoolId}`;
  const jwksUri = `${issuer}/.well-known/jwks.json`;
  const verifier = JwtRsaVerifier.create({ issuer, audience: options.clientId, jwksUri });
  let loaded: Promise<void> | undefined;
  const loadKeys = () => {
    loaded ??= fetch(jwksUri)
      .then(async (response) => {
        if (!response.ok) throw new Error(`JWKS: HTTP ${response.status}`);
        verifier.cacheJwks((await response.json()) as Jwks);
      })
      .catch((error: unknown) => {
        loaded = undefined;
        throw error;
      });
    return loaded;
  };
  return async (token) => {
    await loadKeys();
    try {
      const payload = await verifier.verify(token);
      if (payload.token_use !== 'id') return undefined;
      // API Gateway hands a Cognito authorizer's claims to the handler as strings.
      const claims: Record<string, string> = Object.create(null);
      for (const [name, value] of Object.entries(payload)) {
        claims[name] = typeof value === 'string' ? value : JSON.stringify(value);
      }
      return claims;
    } catch {
      return undefined;
    }
  };
}

/** The verifier of the local Cognito that `env` names (`startLocalServices().env`), if any. */
export function sessionVerifierFrom(env: Record<string, string | undefined>): SessionVerifier | undefined {
  const { COGNITO_ENDPOINT, USER_POOL_ID, USER_POOL_CLIENT_ID } = env;
  if (!COGNITO_ENDPOINT || !USER_POOL_ID || !USER_POOL_CLIENT_ID) return undefined;
  return localSessionVerifier({
    cognitoEndpoint: COGNITO_ENDPOINT,
    userPoolId: USER_POOL_ID,
    clientId: USER_POOL_CLIENT_ID,
  });
}
