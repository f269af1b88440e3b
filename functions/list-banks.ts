import { listBanks } from '#shared/banks/index.ts';
import { listBanksRequest } from '#shared/contract/requests.ts';
import { publicHttpHandler } from '#shared/http/stack.ts';

/** GET /banks (and /banks/list): public, cacheable for an hour. */
export const handler = publicHttpHandler('list-banks', listBanksRequest, async () => ({
  message: 'Banks retrieved',
  data: listBanks(),
  headers: { 'Cache-Control': 'public, max-age=3600' },
}));
