import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, currentSession, noteTwoFactorOn, request, sessionNow } from './api.ts';
import { naira, when } from './format.ts';
import type { Overview as OverviewData, Transaction } from './types.ts';
import { Alert, CodeInput, QrCode, Status, Table, useActions, useLoad } from './ui.tsx';

export const TRANSACTION_COLUMNS = [
  { label: 'Date', cell: (t: Transaction) => when(t.created_at) },
  { label: 'Reference', cell: (t: Transaction) => <code>{t.reference}</code> },
  { label: 'Type', cell: (t: Transaction) => `${t.type} (${t.category})` },
  { label: 'Status', cell: (t: Transaction) => t.status },
  {
    label: 'Counterparty',
    cell: (t: Transaction) => `${t.counterparty.account_name} ${t.counterparty.account_number}`,
  },
  {
    label: 'Amount',
    numeric: true,
    cell: (t: Transaction) => naira(t.type === 'debit' ? -t.amount : t.amount),
  },
  { label: 'Fee', numeric: true, cell: (t: Transaction) => naira(t.fee) },
  { label: 'Balance after', numeric: true, cell: (t: Transaction) => naira(t.balance_after) },
];

/** Balance, wallet and the latest transactions; and the user's second factor. */
export function Overview() {
  const { data, error, loading } = useLoad(
    () => request<OverviewData>('GET', '/overview').then((page) => page.data),
    [],
  );
  return (
    <>
      <h1>Overview</h1>
      <Alert text={error} />
      {loading && !data && <p>Loading…</p>}
      {data && (
        <>
          <dl class="summary">
            <div>
              <dt>Balance</dt>
              <dd class="balance">{naira(data.balance)}</dd>
            </div>
            <div>
              <dt>Wallet account</dt>
              <dd>
                <code>{data.account_number}</code> {data.account_name}
              </dd>
            </div>
            <div>
              <dt>Merchant</dt>
              <dd>
                {data.name} <code>{data.merchant_id}</code>
              </dd>
            </div>
          </dl>
          <Table
            caption="Recent transactions"
            columns={TRANSACTION_COLUMNS}
            rows={data.recent_transactions}
            rowKey={(t) => t.reference}
            empty="No transactions yet."
          />
        </>
      )}
      <TwoFactor />
    </>
  );
}

/** TOTP enrolment: a secret for the authenticator app, then its first code. */
function TwoFactor() {
  const [secret, setSecret] = useState<{ secret: string; otpauth_uri: string }>();
  const [done, setDone] = useState<string>();
  // On already (this sign-in asked for a code): nothing to set up, and how to get back in without it.
  const [on, setOn] = useState(() => currentSession()?.totp === true);
  // One step at a time: a double click on Set up would make two secrets, and show the one replaced.
  const { act, working, error, failedChange } = useActions();
  const [copied, setCopied] = useState<string>();
  // The code field takes focus as it appears (the button that asked for it is gone).
  const code = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (secret) code.current?.focus();
  }, [secret]);
  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Copied the key to the clipboard');
    } catch {
      setCopied('Copying is not allowed here: select the key and copy it');
    }
  };
  const accessToken = () => currentSession()?.access_token ?? '';
  const start = () =>
    act(async () => {
      const asked = sessionNow();
      try {
        setSecret(
          (
            await request<{ secret: string; otpauth_uri: string }>('POST', '/mfa/totp', {
              access_token: accessToken(),
            })
          ).data,
        );
      } catch (failure) {
        // Turned on since this sign-in (in another tab): said as the section says it, not as the API does.
        const alreadyOn = (refused: { field: string; message: string }) =>
          refused.field === 'access_token' && /already on/i.test(refused.message);
        // (Noted only in the session that asked: `noteTwoFactorOn` checks.)
        if (failure instanceof ApiFailure && failure.errors.some(alreadyOn)) {
          noteTwoFactorOn(asked);
          setOn(true);
          return;
        }
        throw failure;
      }
    });
  const confirm = (event: Event) => {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget as HTMLFormElement).get('code'));
    return act(async () => {
      const answer = await request('POST', '/mfa/totp/verify', { access_token: accessToken(), code });
      setSecret(undefined);
      noteTwoFactorOn(answer.session);
      setDone('Two-factor authentication is on: every sign-in now asks for a code.');
    }, 'verify');
  };
  return (
    <section aria-labelledby="two-factor">
      <h2 id="two-factor">Two-factor authentication</h2>
      {on && !done && (
        <p>
          Two-factor authentication is on: every sign-in asks for a code from your authenticator app. Lost it?
          Ask your operator to turn it off for you: at your next sign-in you can set up a new one here.
        </p>
      )}
      {!secret && !done && !on && (
        <button type="button" class="secondary" disabled={working} onClick={start}>
          Set up two-factor authentication
        </button>
      )}
      {secret && (
        <form onSubmit={confirm} aria-label="Turn on two-factor authentication">
          <p id="totp-key">
            Scan the QR code with your authenticator app, or add this key to it by hand:{' '}
            <code>{secret.secret}</code> (or the link <code class="wrap">{secret.otpauth_uri}</code>).
          </p>
          <QrCode text={secret.otpauth_uri} label="QR code of the key, for your authenticator app" />
          <div class="actions">
            <button type="button" class="secondary" onClick={() => copy(secret.secret)}>
              Copy the key
            </button>
          </div>
          <Status text={copied} />
          {/* The field's description: the step only, never the key or the link read out at each focus. */}
          <p id="totp-steps">Then enter the 6-digit code your app shows for NairaPay.</p>
          {/* The label, its field and the button on one row, spaced as the page's other rows. */}
          <div class="inline">
            <label for="totp-code">Code from your app</label>
            <CodeInput
              id="totp-code"
              inputRef={code}
              invalid={failedChange === 'verify'}
              describedBy={failedChange === 'verify' ? 'totp-steps two-factor-error' : 'totp-steps'}
            />
            <button type="submit" disabled={working}>
              Turn on
            </button>
          </div>
        </form>
      )}
      <Alert text={error} id="two-factor-error" />
      <Status text={done} />
    </section>
  );
}
