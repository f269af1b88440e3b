import { rollKey } from '#shared/api-keys/lifecycle.ts';
import { keyRegistry, toApiKey } from '#shared/api-keys/registry.ts';
import { rollApiKeyRequest } from '#shared/contract/requests.ts';
import { endpoint, sessionHandler } from '#shared/http/stack.ts';

/**
 * POST /api/v1/dashboard/keys/{api_key}/roll: a new key pair, and the old key expiring at the time
 * the user picked (now … 7 days); the new secret is in this answer only.
 */
export const handler = sessionHandler(
  'roll-api-key',
  endpoint(rollApiKeyRequest, async ({ params, body, caller }) => {
    const rolled = await rollKey(params.api_key, new Date(body.old_key_expires_at), {
      merchantId: caller.merchantId,
      registry: await keyRegistry(),
    });
    return {
      status: 201,
      message: 'API key rolled: the new secret is shown once',
      data: { ...toApiKey(rolled.record), api_secret: rolled.apiSecret, rolled_key: toApiKey(rolled.old) },
    };
  }),
);
