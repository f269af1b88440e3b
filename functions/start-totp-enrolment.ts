import { startTotpEnrolmentRequest } from '#shared/contract/requests.ts';
import { startTotpEnrolment } from '#shared/dashboard/mfa.ts';
import { endpoint, sessionHandler } from '#shared/http/stack.ts';

/** POST /api/v1/dashboard/mfa/totp: a TOTP secret for the signed-in user's authenticator app. */
export const handler = sessionHandler(
  'start-totp-enrolment',
  endpoint(startTotpEnrolmentRequest, async ({ body, caller }) => ({
    message: 'Add this secret to your authenticator app, then confirm with its first code',
    data: await startTotpEnrolment(body.access_token, {
      sub: caller.user?.sub ?? '',
      email: caller.user?.email,
    }),
  })),
);
