import { listBanks } from '#shared/banks/index.ts';
import { listBanksRequest } from '#shared/contract/requests.ts';
import { publicHttpHandler } from '#shared/http/stack.ts';
import { takeClientIpRequest } from '#shared/limits/client-ip.ts';

/**
 * GET /banks (and /banks/list): public, cacheable for an hour, and counted against the client IP's
 * limit, which failed authentication attempts share (API.md §11).
 */
export const handler = publicHttpHandler(
  'list-banks',
  listBanksRequest,
  async () => ({
    message: 'Banks retrieved',
    data: listBanks(),
    // A list, so it carries `meta` like every other (API.md §1); all banks fit one page.
    meta: { next_cursor: null },
    headers: { 'Cache-Control': 'public, max-age=3600' },
  }),
  takeClientIpRequest,
);
