/**
 * The dashboard's one way to its API (docs/dashboard-api.md): same origin, JSON, the ID token as a
 * bearer, the envelope unwrapped. A 401 ends the session: the app shows the sign-in form again.
 */

export const API = '/api/v1/dashboard';
const TOKEN_KEY = 'naira.session';

export interface Session {
  id_token: string;
  access_token: string;
  email: string;
  merchant_id: string;
  /** Epoch milliseconds. */
  expires_at: number;
  /**
   * Two-factor authentication is on: this sign-in answered a TOTP code (Cognito asks every sign-in
   * of a user who has it for one), or the user turned it on since.
   */
  totp?: boolean;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly errors: { field: string; message: string }[] = [],
    /** A limit's refusal (429): seconds until a request is taken again (its `Retry-After`). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

let onSignedOut: () => void = () => undefined;

/**
 * How far the API's clock is ahead of this browser's (ms), from the `Date` header of its last
 * answer (whole seconds: within about a second). Times the API checks against its own clock (a
 * roll's expiry) are chosen on it, so a browser whose clock is off by minutes still picks "now".
 */
let serverClockAhead = 0;

/** The API's time as this browser best knows it (epoch milliseconds). */
export function serverNow(): number {
  return Date.now() + serverClockAhead;
}

/** What to do when the session ends (a 401, or the token's expiry). */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

export function currentSession(): Session | undefined {
  const raw = sessionStorage.getItem(TOKEN_KEY);
  if (!raw) return undefined;
  const session = JSON.parse(raw) as Session;
  return session.expires_at > Date.now() ? session : undefined;
}

/**
 * Which session of this tab is the current one: every sign-in, and every end of one (Sign out,
 * the hour, a 401), moves it on. An answer to a request asked in another session is not this
 * session's to act on: a new secret is not shown (it may be another user's, or left on the
 * sign-in form of a shared computer), and a late 401 ends nobody's session.
 */
let sessionsSeen = 0;
let sessionChanged: () => void = () => undefined;

export function saveSession(session: Session | undefined): void {
  sessionsSeen += 1;
  if (session) sessionStorage.setItem(TOKEN_KEY, JSON.stringify(session));
  else sessionStorage.removeItem(TOKEN_KEY);
  sessionChanged();
}

/**
 * Notes that the user of session `asked` (`sessionNow()` when the request was sent) has two-factor
 * authentication on, if that session is still this tab's: an answer that comes after Sign out says
 * nothing of whoever signed in since.
 */
export function noteTwoFactorOn(asked: number): void {
  const session = currentSession();
  if (!session || asked !== sessionsSeen) return;
  // The same session: not a new one (`saveSession` would move the sessions seen on).
  sessionStorage.setItem(TOKEN_KEY, JSON.stringify({ ...session, totp: true }));
}

/** What to do whenever a session begins or ends in this tab (forget the last one's secrets). */
export function whenSessionChanges(callback: () => void): void {
  sessionChanged = callback;
}

/** The current session of this tab, as `Page.session` names the one a request was asked in. */
export function sessionNow(): number {
  return sessionsSeen;
}

export interface Page<T> {
  data: T;
  nextCursor: string | null;
  message: string;
  /** The answer to an earlier request of the same `Idempotency-Key`, replayed (`Idempotent-Replayed`). */
  replayed: boolean;
  /** The session of this tab the request was asked in (`sessionNow()` as it was sent). */
  session: number;
}

/** Calls a route of the dashboard's API; throws `ApiFailure` with the API's message on an error. */
export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<Page<T>> {
  const session = currentSession();
  const askedIn = sessionsSeen;
  if (!session && sessionStorage.getItem(TOKEN_KEY) !== null) {
    // Signed in, and the token has expired since: the app asks the user to sign in again.
    saveSession(undefined);
    onSignedOut();
    throw new ApiFailure(401, 'Your session has ended: sign in again.', 'unauthorized');
  }
  // Signed out (a list read again after a change answered late): only sign-in goes without a session.
  if (!session && !path.startsWith('/sessions'))
    throw new ApiFailure(401, 'Your session has ended: sign in again.', 'unauthorized');
  const headers: Record<string, string> = { ...extraHeaders };
  if (session) headers.Authorization = `Bearer ${session.id_token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${API}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch(() => {
    // No answer at all (the network, or the service, is down): the browser's "Failed to fetch" says
    // nothing a person can act on. Status 0: nothing is known of what the request did.
    throw new ApiFailure(0, 'Could not reach the service: check your connection.', 'network_error');
  });
  const date = Date.parse(response.headers.get('Date') ?? '');
  // The header is truncated to the second: half a second added makes the error either way.
  if (Number.isFinite(date)) serverClockAhead = date + 500 - Date.now();
  const envelope = (await response.json().catch(() => ({}))) as {
    message?: string;
    code?: string;
    data?: T;
    meta?: { next_cursor: string | null };
    errors?: { field: string; message: string }[];
  };
  if (!response.ok) {
    // Refused the session it was asked in: the one now, if another has begun since, is not ended.
    if (response.status === 401 && session && askedIn === sessionsSeen) {
      saveSession(undefined);
      onSignedOut();
    }
    const message = envelope.message ?? `HTTP ${response.status}`;
    // A limit's refusal says when to try again (its Retry-After, in seconds).
    const retryAfter = Number(response.headers.get('Retry-After'));
    const limited = response.status === 429 && retryAfter > 0;
    throw new ApiFailure(
      response.status,
      limited ? `${message}: try again in ${retryAfter} s` : message,
      envelope.code,
      envelope.errors,
      limited ? retryAfter : undefined,
    );
  }
  return {
    data: envelope.data as T,
    nextCursor: envelope.meta?.next_cursor ?? null,
    message: envelope.message ?? '',
    replayed: response.headers.get('Idempotent-Replayed') === 'true',
    session: askedIn,
  };
}

/** Every item of a list route, following its cursor a hundred at a time. */
export async function requestAll<T>(path: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<T[]> = await request<T[]>('GET', `${path}${query({ limit: 100, cursor })}`);
    items.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/** A query string of the set values. */
export function query(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
