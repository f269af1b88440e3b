import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ApiFailure,
  currentSession,
  request,
  saveSession,
  sessionNow,
  whenSignedOut,
} from '#infra/dashboard/app/api.ts';
import { naira } from '#infra/dashboard/app/format.ts';

declare global {
  /** The browser's Storage as api.ts uses it: this project's tsconfig has no DOM types (the app's has). */
  interface Storage {
    readonly length: number;
    clear(): void;
    getItem(key: string): string | null;
    key(index: number): string | null;
    removeItem(key: string): void;
    setItem(key: string, value: string): void;
  }
  var sessionStorage: Storage;
  var localStorage: Storage;
}

/** A browser's Storage, kept in a Map. */
function storage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (name) => items.get(name) ?? null,
    key: (index) => [...items.keys()][index] ?? null,
    removeItem: (name) => void items.delete(name),
    setItem: (name, value) => void items.set(name, String(value)),
  };
}

const session = () => ({
  id_token: 'id-token',
  access_token: 'access-token',
  email: 'ada@example.com',
  merchant_id: 'mer_1',
  expires_at: Date.now() + 3_600_000,
});

/** The API answering `status` with an envelope of `message` (and `Retry-After`, if given). */
const answering = (status: number, message: string, headers: Record<string, string> = {}) =>
  vi.fn(
    async () =>
      new Response(JSON.stringify({ status: status < 400, message, data: {} }), { status, headers }),
  );

describe("the dashboard's requests", () => {
  beforeEach(() => {
    vi.stubGlobal('sessionStorage', storage());
    vi.stubGlobal('localStorage', storage());
    saveSession(session());
  });
  afterEach(() => {
    whenSignedOut(() => undefined);
    vi.unstubAllGlobals();
  });

  it("keep the session in this tab's sessionStorage only, and send its ID token", async () => {
    const fetch = answering(200, 'ok');
    vi.stubGlobal('fetch', fetch);
    await request('GET', '/keys');
    expect(JSON.parse(sessionStorage.getItem('naira.session') ?? '{}').id_token).toBe('id-token');
    expect(localStorage.length).toBe(0);
    const [, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect((init.headers as Record<string, string>).Authorization).toBe('Bearer id-token');
  });

  it('never take a 5xx or a 429 for success: each throws with its status and message', async () => {
    for (const [status, message] of [
      [500, 'Internal server error'],
      [503, 'Service unavailable'],
      [429, 'Too many requests'],
    ] as const) {
      vi.stubGlobal('fetch', answering(status, message, status === 429 ? { 'Retry-After': '7' } : {}));
      const failure = await request('POST', '/keys/k/revoke').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ApiFailure);
      expect((failure as ApiFailure).status).toBe(status);
      expect((failure as ApiFailure).message).toBe(status === 429 ? `${message}: try again in 7 s` : message);
    }
    expect(currentSession()?.id_token).toBe('id-token');
  });

  it('end the session on a 401 to its own request: forgotten, and the app told', async () => {
    const signedOut = vi.fn();
    whenSignedOut(signedOut);
    vi.stubGlobal('fetch', answering(401, 'Unauthorized'));
    await expect(request('GET', '/keys')).rejects.toMatchObject({ status: 401 });
    expect(sessionStorage.getItem('naira.session')).toBeNull();
    expect(signedOut).toHaveBeenCalledTimes(1);
  });

  it('end a session past its hour in the browser, sending nothing with its expired token', async () => {
    const signedOut = vi.fn();
    whenSignedOut(signedOut);
    const fetch = answering(200, 'ok');
    vi.stubGlobal('fetch', fetch);
    saveSession({ ...session(), expires_at: Date.now() - 1 });
    expect(currentSession()).toBeUndefined();
    await expect(request('GET', '/keys')).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(fetch).not.toHaveBeenCalled();
    expect(sessionStorage.getItem('naira.session')).toBeNull();
    expect(signedOut).toHaveBeenCalledTimes(1);
  });

  it('leave a session begun since alone on a late 401 to the one before', async () => {
    const signedOut = vi.fn();
    whenSignedOut(signedOut);
    let answer: (response: Response) => void = () => undefined;
    vi.stubGlobal(
      'fetch',
      vi.fn(() => new Promise<Response>((resolve) => (answer = resolve))),
    );
    const asked = request('GET', '/keys');
    const before = sessionNow();
    saveSession({ ...session(), id_token: 'next-token' });
    expect(sessionNow()).toBe(before + 1);
    answer(new Response(JSON.stringify({ message: 'Unauthorized' }), { status: 401 }));
    await expect(asked).rejects.toMatchObject({ status: 401 });
    expect(currentSession()?.id_token).toBe('next-token');
    expect(signedOut).not.toHaveBeenCalled();
  });
});

describe("the dashboard's naira", () => {
  it('shows kobo as naira with two kobo digits, thousands grouped, and a minus for a debit', () => {
    expect(naira(123456)).toBe('₦1,234.56');
    expect(naira(5)).toBe('₦0.05');
    expect(naira(250000)).toBe('₦2,500.00');
    expect(naira(-150)).toBe('−₦1.50');
    expect(naira(0)).toBe('₦0.00');
  });
});
