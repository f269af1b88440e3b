import { confirmTotpEnrolmentRequest } from '#shared/contract/requests.ts';
import { confirmTotpEnrolment } from '#shared/dashboard/mfa.ts';
import { endpoint, sessionHandler } from '#shared/http/stack.ts';

/** POST /api/v1/dashboard/mfa/totp/verify: the app's first code turns TOTP on for every sign-in. */
export const handler = sessionHandler(
  'confirm-totp-enrolment',
  endpoint(confirmTotpEnrolmentRequest, async ({ body, caller }) => ({
    message: 'TOTP is on: every sign-in now asks for a code',
    data: await confirmTotpEnrolment(body.access_token, body.code, { sub: caller.user?.sub ?? '' }),
  })),
);
