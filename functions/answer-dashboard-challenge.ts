import { answerDashboardChallengeRequest } from '#shared/contract/requests.ts';
import { answerChallenge } from '#shared/dashboard/sign-in.ts';
import { publicHttpHandler } from '#shared/http/stack.ts';
import { takeClientIpRequest } from '#shared/limits/client-ip.ts';

/**
 * POST /api/v1/dashboard/sessions/challenge: a new password or a TOTP code → an ID token (API.md §10).
 * Counted against the client IP's limit, which failed API key attempts share (API.md §11).
 */
export const handler = publicHttpHandler(
  'answer-dashboard-challenge',
  answerDashboardChallengeRequest,
  async ({ body }) => {
    const result = await answerChallenge(body);
    return { message: 'id_token' in result ? 'Signed in' : 'Challenge to answer', data: result };
  },
  takeClientIpRequest,
);
