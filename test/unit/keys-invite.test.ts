import { describe, expect, it } from 'vitest';
import { alreadyInvited } from '#infra/cli/keys.ts';

/** `keys invite` of a user the merchant has already: what it says of them, as Cognito has them. */
const text = (user: Parameters<typeof alreadyInvited>[0]) =>
  alreadyInvited(user, 'mer_1', (_json, line) => line);
const invited = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString();

describe('keys invite, again', () => {
  const user = { email: 'ada@acme.ng', status: 'FORCE_CHANGE_PASSWORD', enabled: true };

  it('says a temporary password still stands within 7 days, and how to have a new one sent after', () => {
    expect(text({ ...user, createdAt: invited(6) })).toContain(
      'the temporary password given then still stands',
    );
    expect(text({ ...user, createdAt: invited(8) })).toContain(
      'their temporary password has expired (7 days): have Cognito send a new one with aws cognito-idp admin-create-user --user-pool-id <DashboardUserPoolId> --username ada@acme.ng --message-action RESEND.',
    );
  });

  it("names any other status as Cognito's, and a disabled user as such; only CONFIRMED is signed in", () => {
    const reset = { ...user, status: 'RESET_REQUIRED', enabled: false, createdAt: invited(1) };
    expect(text(reset)).toContain("Cognito's status for them: RESET_REQUIRED.");
    expect(text(reset)).toContain('The user is disabled in Cognito: they cannot sign in.');
    expect(alreadyInvited(reset, 'mer_1', (json) => JSON.stringify(json))).toContain('"signed_in":false');
    const confirmed = { ...user, status: 'CONFIRMED', createdAt: invited(30) };
    expect(text(confirmed)).toContain('They have signed in and chosen their password.');
    expect(alreadyInvited(confirmed, 'mer_1', (json) => JSON.stringify(json))).toContain('"signed_in":true');
  });
});
