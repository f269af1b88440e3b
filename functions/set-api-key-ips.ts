import { editAllowedIps } from '#shared/api-keys/lifecycle.ts';
import { toApiKey } from '#shared/api-keys/registry.ts';
import { setApiKeyIpsRequest } from '#shared/contract/requests.ts';
import { endpoint, sessionHandler } from '#shared/http/stack.ts';

/** POST /api/v1/dashboard/keys/{api_key}/allowed-ips: replaces the allowlist (empty: any address). */
export const handler = sessionHandler(
  'set-api-key-ips',
  endpoint(setApiKeyIpsRequest, async ({ params, body, caller }) => {
    const record = await editAllowedIps(params.api_key, body.allowed_ips, { merchantId: caller.merchantId });
    return { message: 'IP allowlist saved: in force within 60 seconds', data: toApiKey(record) };
  }),
);
