/**
 * The dashboard's Cognito user pool (API.md §10), as both the CDK stack and the local stand-in
 * configure it: sign-in by email and password, a strong password policy, TOTP available, no
 * self sign-up (the operator invites), and the merchant as a custom attribute no user can change.
 */
export const DASHBOARD_USER_POOL = {
  clientName: 'dashboard',
  /** `custom:merchant_id` in tokens: immutable, and not among the app client's writable attributes. */
  merchantAttribute: 'merchant_id',
  passwordPolicy: {
    MinimumLength: 12,
    RequireUppercase: true,
    RequireLowercase: true,
    RequireNumbers: true,
    RequireSymbols: true,
    TemporaryPasswordValidityDays: 7,
  },
  /** How long an ID token (the dashboard's session) and its access token are accepted. */
  tokenValidityMinutes: 60,
  /**
   * The one attribute users may write themselves, which nothing reads. Not none: an app client's
   * empty write list is read by Cognito as "not set", which lets users write every standard
   * attribute, their sign-in email included.
   */
  writableAttributes: ['locale'],
} as const;
