import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { currentSession, type Session, saveSession, whenSignedOut } from './app/api.ts';
import { ApiKeys } from './app/keys.tsx';
import { Overview } from './app/overview.tsx';
import { Payments } from './app/payments.tsx';
import { SignIn } from './app/sign-in.tsx';
import { Transactions } from './app/transactions.tsx';
import { focusHeading, SecretsShown } from './app/ui.tsx';
import { Webhooks } from './app/webhooks.tsx';

/** The dashboard (API.md §10): one page per concern, chosen by the URL's hash (#/keys, …). */
const PAGES = [
  { hash: '#/', label: 'Overview', page: Overview },
  { hash: '#/keys', label: 'API keys', page: ApiKeys },
  { hash: '#/webhooks', label: 'Webhooks', page: Webhooks },
  { hash: '#/transactions', label: 'Transactions', page: Transactions },
  { hash: '#/payments', label: 'Payments', page: Payments },
];

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/');
  useEffect(() => {
    const changed = () => setHash(location.hash || '#/');
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

/**
 * Tabs of this dashboard tell each other of a sign-out: a tab opened from this one (or duplicated)
 * holds a copy of its session, which would otherwise stay signed in after Sign out here. Every tab
 * of this browser signed in as the same user signs out with it.
 */
const signOuts = typeof BroadcastChannel === 'function' ? new BroadcastChannel('naira.sign-out') : undefined;

function App() {
  const [session, setSession] = useState<Session | undefined>(() => {
    const current = currentSession();
    // One that expired while the page was closed is forgotten: the form signs in afresh.
    if (!current) saveSession(undefined);
    return current;
  });
  const hash = useHash();
  // Why the sign-in form is back, said to everyone (a screen reader's user too): never a page that
  // silently turns into a form.
  const [ended, setEnded] = useState<string>();
  useEffect(
    () =>
      whenSignedOut(() => {
        setSession(undefined);
        setEnded('Your session ended: sign in again.');
      }),
    [],
  );
  useEffect(() => {
    if (!signOuts) return;
    const signedOutElsewhere = (message: MessageEvent) => {
      if (message.data?.email !== currentSession()?.email) return;
      saveSession(undefined);
      setSession(undefined);
      setEnded('You signed out in another tab: sign in again.');
    };
    signOuts.addEventListener('message', signedOutElsewhere);
    return () => signOuts.removeEventListener('message', signedOutElsewhere);
  }, []);
  // The token's expiry ends the session: the sign-in form comes back, not pages of refusals.
  useEffect(() => {
    if (!session) return;
    const ends = setTimeout(
      () => {
        saveSession(undefined);
        setSession(undefined);
        setEnded('Your session ended after an hour: sign in again.');
      },
      Math.max(0, session.expires_at - Date.now()),
    );
    return () => clearTimeout(ends);
  }, [session]);
  // Signed in: the page is announced, focus on its heading (the form that had it is gone).
  const signedIn = useRef(false);
  useEffect(() => {
    if (!session || !signedIn.current) return;
    signedIn.current = false;
    focusHeading();
  }, [session]);
  const current = PAGES.find((page) => page.hash === hash) ?? PAGES[0];
  // A page chosen in the navigation is announced: focus goes to its heading (never on first load).
  const shownHash = useRef(hash);
  useEffect(() => {
    if (shownHash.current === hash) return;
    shownHash.current = hash;
    focusHeading();
  }, [hash]);
  useEffect(() => {
    document.title =
      session && current ? `${current.label} · NairaPay dashboard` : 'Sign in · NairaPay dashboard';
  }, [session, current]);
  if (!session)
    return (
      <SignIn
        notice={ended}
        onSignedIn={(started) => {
          signedIn.current = true;
          setEnded(undefined);
          setSession(started);
        }}
      />
    );
  const Page = current?.page ?? Overview;
  const signOut = () => {
    saveSession(undefined);
    setSession(undefined);
    signOuts?.postMessage({ email: session.email });
  };
  return (
    <div class="layout">
      {/* The keyboard's first stop: past the header and the navigation, to the page's heading (a button: the hash names the page, #/keys, so a link to #main would change it). */}
      <button type="button" class="skip-link" onClick={() => focusHeading()}>
        Skip to the page
      </button>
      <header class="top">
        <span class="brand">NairaPay</span>
        <span class="who">{session.email}</span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Dashboard">
        <ul>
          {PAGES.map((page) => (
            <li key={page.hash}>
              <a href={page.hash} aria-current={page === current ? 'page' : undefined}>
                {page.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main>
        <Page key={hash} />
      </main>
      <SecretsShown />
    </div>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
