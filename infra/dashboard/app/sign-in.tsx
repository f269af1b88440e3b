import { useEffect, useRef, useState } from 'preact/hooks';
import { request, type Session, saveSession } from './api.ts';
import { problem } from './format.ts';
import { Alert, CodeInput, restoreFocus, Status } from './ui.tsx';

type Answer =
  | { id_token: string; access_token: string; expires_in: number; email: string; merchant_id: string }
  | { challenge: 'NEW_PASSWORD_REQUIRED' | 'SOFTWARE_TOKEN_MFA'; session: string };

/** Email and password, then whatever Cognito asks: a new password (invited users) or a TOTP code. */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (session: Session) => void; notice?: string }) {
  const [email, setEmail] = useState('');
  const [challenge, setChallenge] = useState<{ name: string; session: string }>();
  const [error, setError] = useState<string>();
  // Whether the error refuses what was typed (400, 401), not the service's state (429, 5xx, no answer).
  const [refused, setRefused] = useState(false);
  const [busy, setBusy] = useState(false);
  // Each step's first field takes focus as it appears, its instructions read with its label: the
  // form changed under a screen reader's user, who is told what it now asks.
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), [challenge]);
  // An error is tied to the fields it is about (`aria-describedby`), and read when it comes.
  // The notice of a session that ended is read with the first field, as the form comes back.
  const credentialsAria = () => {
    if (error) return { 'aria-invalid': refused || undefined, 'aria-describedby': 'sign-in-error' };
    return notice ? { 'aria-describedby': 'sign-in-notice' } : {};
  };
  const described = (hint: string) => (error ? `${hint} sign-in-error` : hint);

  const finish = (answer: Answer) => {
    if ('challenge' in answer) {
      setChallenge({ name: answer.challenge, session: answer.session });
      return;
    }
    const session: Session = {
      id_token: answer.id_token,
      access_token: answer.access_token,
      email: answer.email,
      merchant_id: answer.merchant_id,
      expires_at: Date.now() + answer.expires_in * 1000,
      totp: challenge?.name === 'SOFTWARE_TOKEN_MFA',
    };
    saveSession(session);
    onSignedIn(session);
  };
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    // Its button, disabled while the answer is on its way, gets focus back (or the next step's field).
    const from = event.submitter instanceof HTMLElement ? event.submitter : undefined;
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    setRefused(false);
    try {
      if (!challenge) {
        const given = String(form.get('email'));
        setEmail(given);
        finish(
          (await request<Answer>('POST', '/sessions', { email: given, password: form.get('password') })).data,
        );
      } else {
        const answer =
          challenge.name === 'NEW_PASSWORD_REQUIRED'
            ? { new_password: String(form.get('new_password')) }
            : { code: String(form.get('code')) };
        finish(
          (
            await request<Answer>('POST', '/sessions/challenge', {
              email,
              challenge: challenge.name,
              session: challenge.session,
              ...answer,
            })
          ).data,
        );
      }
    } catch (failure) {
      const status = (failure as { status?: number }).status;
      // A 401 to a challenge's answer starts again from empty fields: none of them was refused.
      setRefused(status === 400 || (status === 401 && !challenge));
      if (status === 401 && challenge) {
        // Cognito spends a challenge's session on any answer, a wrong one too: start again (the
        // email kept), told why as far as it is known.
        setChallenge(undefined);
        setError(
          challenge.name === 'SOFTWARE_TOKEN_MFA'
            ? 'The code was not accepted (wrong, already used, or the sign-in took over 3 minutes): sign in again, then enter the next code your app shows.'
            : 'The new password was not taken (the sign-in took over 3 minutes, or was refused): sign in again with your temporary password.',
        );
      } else
        setError(
          status === 401
            ? 'Incorrect email or password (or your access is turned off: ask your NairaPay contact).'
            : problem(failure),
        );
    } finally {
      setBusy(false);
      restoreFocus(from);
    }
  };

  return (
    <main class="sign-in">
      <h1>Sign in to the NairaPay dashboard</h1>
      <Status text={notice} id="sign-in-notice" />
      {/* A try the browser refuses itself (an email without "@") is not the last one's refusal. */}
      <form onSubmit={submit} onInvalidCapture={() => setError(undefined)} aria-label="Sign in">
        {!challenge && (
          <>
            <label for="email">Email</label>
            <input
              id="email"
              name="email"
              type="email"
              autocomplete="username"
              required
              defaultValue={email}
              ref={first}
              {...credentialsAria()}
            />
            <label for="password">Password</label>
            <input
              id="password"
              name="password"
              type="password"
              autocomplete="current-password"
              required
              {...credentialsAria()}
            />
            <button type="submit" disabled={busy}>
              Sign in
            </button>
          </>
        )}
        {challenge?.name === 'NEW_PASSWORD_REQUIRED' && (
          <>
            <p id="new-password-rules">
              Choose your own password: at least 12 characters, with upper and lower case, a digit and a
              symbol such as ! @ # $ % &amp; * or a space inside (none at either end).
            </p>
            <label for="new_password">New password</label>
            <input
              id="new_password"
              name="new_password"
              type="password"
              autocomplete="new-password"
              required
              ref={first}
              aria-invalid={(!!error && refused) || undefined}
              aria-describedby={described('new-password-rules')}
            />
            <button type="submit" disabled={busy}>
              Set password
            </button>
          </>
        )}
        {challenge?.name === 'SOFTWARE_TOKEN_MFA' && (
          <>
            <p id="code-hint">
              Two-factor authentication is on: enter the 6-digit code your authenticator app shows.
            </p>
            <label for="code">Code</label>
            <CodeInput
              id="code"
              inputRef={first}
              invalid={!!error && refused}
              describedBy={described('code-hint')}
            />
            <button type="submit" disabled={busy}>
              Verify
            </button>
          </>
        )}
      </form>
      <Alert text={error} id="sign-in-error" />
    </main>
  );
}
