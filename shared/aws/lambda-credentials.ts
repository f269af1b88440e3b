/**
 * The credentials every Lambda bundle signs its AWS calls with: the execution role's, which Lambda
 * puts in the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`).
 *
 * `infra/bundling.ts` has esbuild put this module in place of `@aws-sdk/credential-provider-node`,
 * whose default chain (environment, SSO, INI profiles, STS web identity, process, container and
 * instance metadata) is about 135 KB of every bundle and ~10 ms of every cold start, of which a
 * Lambda only ever uses the first link. Code run outside a bundle (tests, `npm start`, the CLIs)
 * keeps the full chain.
 */
export { fromEnv as defaultProvider } from '@aws-sdk/credential-provider-env';
