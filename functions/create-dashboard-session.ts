import { createDashboardSessionRequest } from '#shared/contract/requests.ts';
import { signIn } from '#shared/dashboard/sign-in.ts';
import { publicHttpHandler } from '#shared/http/stack.ts';
import { takeClientIpRequest } from '#shared/limits/client-ip.ts';

/**
 * POST /api/v1/dashboard/sessions: email and password → an ID token, or a challenge (API.md §10).
 * Counted against the client IP's limit, which failed API key attempts share (API.md §11).
 */
export const handler = publicHttpHandler(
  'create-dashboard-session',
  createDashboardSessionRequest,
  async ({ body }) => {
    const result = await signIn(body.email, body.password);
    return { message: 'id_token' in result ? 'Signed in' : 'Challenge to answer', data: result };
  },
  takeClientIpRequest,
);
