import { createKey } from '#shared/api-keys/lifecycle.ts';
import { keyRegistry, toApiKey } from '#shared/api-keys/registry.ts';
import { createApiKeyRequest } from '#shared/contract/requests.ts';
import { endpoint, sessionHandler } from '#shared/http/stack.ts';

/** POST /api/v1/dashboard/keys: a new key pair; the secret is in this answer only. */
export const handler = sessionHandler(
  'create-api-key',
  endpoint(createApiKeyRequest, async ({ body, caller }) => {
    const { record, apiSecret } = await createKey(
      caller.merchantId,
      { allowedIps: body?.allowed_ips ?? [] },
      await keyRegistry(),
    );
    return {
      status: 201,
      message: 'API key created: the secret is shown once',
      data: { ...toApiKey(record), api_secret: apiSecret },
    };
  }),
);
