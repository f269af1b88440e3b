import { toApiKey } from '#shared/api-keys/registry.ts';
import { listApiKeysPage } from '#shared/api-keys/store.ts';
import { listApiKeysRequest } from '#shared/contract/requests.ts';
import { endpoint, sessionHandler } from '#shared/http/stack.ts';

/** GET /api/v1/dashboard/keys: the merchant's keys, newest first, with their last use; never a secret. */
export const handler = sessionHandler(
  'list-api-keys',
  endpoint(listApiKeysRequest, async ({ caller, query }) => {
    const page = await listApiKeysPage(caller.merchantId, query.limit, query.cursor);
    const now = Date.now();
    return {
      message: 'API keys retrieved',
      data: page.items.map((key) => toApiKey(key, now)),
      meta: { next_cursor: page.nextCursor },
    };
  }),
);
