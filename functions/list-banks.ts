import { listBanks } from '#shared/banks/index.ts';
import { pageOfBanks } from '#shared/banks/pages.ts';
import { listBanksRequest } from '#shared/contract/requests.ts';
import { publicHttpHandler } from '#shared/http/stack.ts';
import { takeClientIpRequest } from '#shared/limits/client-ip.ts';
import { DEFAULT_LIMIT } from '#shared/pagination.ts';

/**
 * GET /banks (and /banks/list): public, cacheable for an hour, and counted against the client IP's
 * limit, which failed authentication attempts share (API.md §11).
 */
export const handler = publicHttpHandler(
  'list-banks',
  listBanksRequest,
  async ({ query }) => {
    // Without `limit` and `cursor`, every bank in one page, as v1 answered (API.md §4); with
    // either, pages of `limit` (default 20) by name, for clients that page every list (§1).
    const paged = query.limit !== undefined || query.cursor !== undefined;
    const page = paged
      ? pageOfBanks(query.limit ?? DEFAULT_LIMIT, query.cursor)
      : { items: listBanks(), next_cursor: null };
    return {
      message: 'Banks retrieved',
      data: page.items,
      meta: { next_cursor: page.next_cursor },
      headers: { 'Cache-Control': 'public, max-age=3600' },
    };
  },
  takeClientIpRequest,
);
