import { revokeKey } from '#shared/api-keys/lifecycle.ts';
import { keyRegistry, toApiKey } from '#shared/api-keys/registry.ts';
import { revokeApiKeyRequest } from '#shared/contract/requests.ts';
import { endpoint, sessionHandler } from '#shared/http/stack.ts';

/** POST /api/v1/dashboard/keys/{api_key}/revoke: refused by the authorizer within 60 s. */
export const handler = sessionHandler(
  'revoke-api-key',
  endpoint(revokeApiKeyRequest, async ({ params, caller }) => {
    const record = await revokeKey(params.api_key, {
      merchantId: caller.merchantId,
      registry: await keyRegistry(),
    });
    return { message: 'API key revoked: refused within 60 seconds', data: toApiKey(record) };
  }),
);
