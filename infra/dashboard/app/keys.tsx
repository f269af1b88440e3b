import { useState } from 'preact/hooks';
import { ApiFailure, type Page, request, requestAll, serverNow } from './api.ts';
import { when } from './format.ts';
import type { ApiKey } from './types.ts';
import {
  Alert,
  Dialog,
  DialogActions,
  emptyText,
  Status,
  showSecret,
  Table,
  useActions,
  useLoad,
} from './ui.tsx';

const ROLL_CHOICES: [label: string, hours: number][] = [
  ['Now', 0],
  ['In 1 hour', 1],
  ['In 24 hours', 24],
  ['In 7 days', 168],
];

const ips = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((ip) => ip.trim())
    .filter(Boolean);

/** A new key's secret, shown once by the app (also if this page is left before the answer comes). */
function showKey({ data: key, session }: Page<ApiKey>): void {
  if (!key.api_secret) return;
  showSecret(
    {
      title: 'Your new API key',
      fields: [
        ['X-API-Key', key.api_key],
        ['X-API-Secret', key.api_secret],
        ...(key.rolled_key
          ? ([['Old key works until', when(key.rolled_key.expires_at)]] as [string, string][])
          : []),
      ],
      copy: `X-API-Key: ${key.api_key}\nX-API-Secret: ${key.api_secret}`,
    },
    session,
  );
}

/** The keys read again before a change: only a read, so no change is in doubt if it finds no answer. */
const readKeys = () =>
  requestAll<ApiKey>('/keys').catch((failure: unknown) => {
    throw failure instanceof ApiFailure && failure.status === 0 ? new Error(failure.message) : failure;
  });

/** A key's refusal as not found: revoked or expired since the list was read (by a colleague). */
const goneSince = (key: ApiKey, failure: unknown) =>
  failure instanceof ApiFailure && failure.status === 404
    ? new Error(
        `${key.api_key} was revoked or has expired since this page read the list (by someone else): nothing was changed. The list now shows it as it is.`,
      )
    : failure;

/** Create, roll, revoke keys and edit their IP allowlists; a new secret is shown once. */
export function ApiKeys() {
  const keys = useLoad(() => requestAll<ApiKey>('/keys'), []);
  const [acting, setActing] = useState<{ kind: 'roll' | 'revoke' | 'ips'; key: ApiKey }>();
  const [status, setStatus] = useState<string>();
  // Whether the allowlist dialog's error is a colleague's change met on saving, not a refusal.
  const [ipsConflict, setIpsConflict] = useState(false);
  // One change at a time; the list is read again after each, made or refused.
  const { act, working, error, setError, failedChange } = useActions(keys.reload);
  // A dialog shows its own change's refusal only: an earlier one's is cleared when it opens and closes.
  const open = (what: NonNullable<typeof acting>) => {
    setError(undefined);
    if (what.kind !== 'ips') return setActing(what);
    // The allowlist dialog opens on the key as it now stands, read again first: a colleague may have
    // changed its list, rolled or revoked it since this page read them. Saving the list as this page
    // last showed it would silently put theirs back.
    void act(async () => {
      const now = (await readKeys()).find((key) => key.api_key === what.key.api_key);
      if (now?.status !== 'active') throw goneSince(what.key, new ApiFailure(404, 'API key not found'));
      setActing({ kind: 'ips', key: now });
    });
  };
  const close = () => {
    setActing(undefined);
    setError(undefined);
  };
  /** What every key dialog is given besides its key and its change. */
  const dialog = { working, error, onClose: close };

  const create = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const allowed = ips(String(new FormData(form).get('allowed_ips') ?? ''));
    return act(async () => {
      showKey(await request<ApiKey>('POST', '/keys', allowed.length ? { allowed_ips: allowed } : undefined));
      form.reset();
    }, 'create');
  };
  // A dialog stays open until its change is made, showing why not otherwise.
  const roll = (key: ApiKey, hours: number) => {
    const at = new Date(serverNow() + hours * 3_600_000 + (hours === 0 ? 1_000 : 0)).toISOString();
    return act(async () => {
      const rolled = await request<ApiKey>('POST', `/keys/${key.api_key}/roll`, {
        old_key_expires_at: at,
      }).catch((failure: unknown) => {
        if (failure instanceof ApiFailure && failure.status === 404) setActing(undefined);
        throw goneSince(key, failure);
      });
      setActing(undefined);
      showKey(rolled);
    });
  };
  const revoke = (key: ApiKey) =>
    act(async () => {
      await request('POST', `/keys/${key.api_key}/revoke`);
      setActing(undefined);
      setStatus(`Revoked ${key.api_key}: requests with it are refused within 60 seconds.`);
    });
  // The list is read once more before it is replaced: one a colleague saved while this dialog was
  // open is shown, not overwritten (the dialog then shows theirs; Save again replaces it).
  const saveIps = (key: ApiKey, text: string) =>
    act(async () => {
      setIpsConflict(false);
      const now = (await readKeys()).find((candidate) => candidate.api_key === key.api_key);
      if (now?.status !== 'active') {
        setActing(undefined);
        throw goneSince(key, new ApiFailure(404, 'API key not found'));
      }
      if (now.allowed_ips.join(',') !== key.allowed_ips.join(',')) {
        // Not a refusal of what was typed (the field is not marked invalid): a choice to make.
        setActing({ kind: 'ips', key: now });
        setIpsConflict(true);
        throw new Error(
          `Someone else changed this list while the dialog was open: it is now ${
            now.allowed_ips.join(', ') || 'empty (any address)'
          }. Yours (${ips(text).join(', ') || 'empty'}) was not saved: Save again to replace theirs with yours, or Cancel to keep theirs.`,
        );
      }
      await request('POST', `/keys/${key.api_key}/allowed-ips`, { allowed_ips: ips(text) }).catch(
        (failure: unknown) => {
          if (failure instanceof ApiFailure && failure.status === 404) setActing(undefined);
          throw goneSince(key, failure);
        },
      );
      setActing(undefined);
      setStatus(`Saved the allowlist of ${key.api_key}: in force within 60 seconds.`);
    });

  return (
    <>
      <h1>API keys</h1>
      <form onSubmit={create} class="inline" aria-label="New API key">
        <label for="new-key-ips">Allowed IPs (optional, comma-separated)</label>
        <input
          id="new-key-ips"
          name="allowed_ips"
          placeholder="203.0.113.0/24"
          aria-invalid={failedChange === 'create' || undefined}
          aria-describedby={failedChange === 'create' ? 'keys-error' : undefined}
        />
        <button type="submit" disabled={working}>
          Create key
        </button>
      </form>
      <Alert text={(acting ? undefined : error) ?? keys.error} id="keys-error" />
      <Status text={status} />
      <Table
        caption="Your API keys"
        rows={keys.data ?? []}
        rowKey={(key) => key.api_key}
        empty={emptyText(keys, 'No keys yet.')}
        columns={[
          { label: 'Key', cell: (key) => <code>{key.api_key}</code> },
          { label: 'Status', cell: (key) => <span class={`badge ${key.status}`}>{key.status}</span> },
          { label: 'Created', cell: (key) => when(key.created_at) },
          { label: 'Expires', cell: (key) => when(key.expires_at) },
          { label: 'Last used', cell: (key) => when(key.last_used_at) },
          {
            label: 'Allowed IPs',
            cell: (key) => (key.allowed_ips.length ? key.allowed_ips.join(', ') : 'Any'),
          },
          {
            label: 'Actions',
            cell: (key) =>
              key.status === 'active' ? (
                <fieldset class="row-actions">
                  <legend class="visually-hidden">Actions for {key.api_key}</legend>
                  <button
                    type="button"
                    class="secondary"
                    disabled={working}
                    onClick={() => open({ kind: 'roll', key })}
                  >
                    Roll
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    disabled={working}
                    onClick={() => open({ kind: 'ips', key })}
                  >
                    Edit IPs
                  </button>
                  <button
                    type="button"
                    class="danger"
                    disabled={working}
                    onClick={() => open({ kind: 'revoke', key })}
                  >
                    Revoke
                  </button>
                </fieldset>
              ) : null,
          },
        ]}
      />
      {acting?.kind === 'roll' && (
        <RollDialog apiKey={acting.key} {...dialog} onRoll={(hours) => roll(acting.key, hours)} />
      )}
      {acting?.kind === 'revoke' && (
        <Dialog
          title={`Revoke ${acting.key.api_key}`}
          onClose={close}
          busy={working}
          describedBy="revoke-what"
        >
          <p id="revoke-what">Requests with this key are refused within 60 seconds. This cannot be undone.</p>
          <Alert text={error} />
          <DialogActions onCancel={close} safeFirst>
            <button type="button" class="danger" disabled={working} onClick={() => revoke(acting.key)}>
              Revoke key
            </button>
          </DialogActions>
        </Dialog>
      )}
      {acting?.kind === 'ips' && (
        <IpsDialog
          apiKey={acting.key}
          {...dialog}
          invalid={!!error && !ipsConflict}
          onSave={(text) => saveIps(acting.key, text)}
        />
      )}
    </>
  );
}

/** A key dialog: its key, whether a change is on its way, the refusal of its own, and Cancel. */
interface KeyDialog {
  apiKey: ApiKey;
  working: boolean;
  error?: string;
  onClose: () => void;
}

/**
 * The old key's expiry for a roll. The choice is this dialog's own state: nothing redrawn meanwhile
 * (the list read again after another change) puts the default back before it is sent.
 */
function RollDialog(props: KeyDialog & { onRoll: (hours: number) => void }) {
  const [hours, setHours] = useState(24);
  const submit = (event: Event) => {
    event.preventDefault();
    props.onRoll(hours);
  };
  return (
    <Dialog
      title={`Roll ${props.apiKey.api_key}`}
      onClose={props.onClose}
      busy={props.working}
      describedBy="roll-what"
    >
      <form onSubmit={submit}>
        <p id="roll-what">A new key is made with the same allowlist. The old key keeps working until:</p>
        <label for="roll-expiry">Old key expires</label>
        <select
          id="roll-expiry"
          name="expires_in"
          value={String(hours)}
          onChange={(event) => setHours(Number(event.currentTarget.value))}
        >
          {ROLL_CHOICES.map(([label, choice]) => (
            <option key={choice} value={String(choice)}>
              {label}
            </option>
          ))}
        </select>
        <Alert text={props.error} />
        <DialogActions onCancel={props.onClose}>
          <button type="submit" disabled={props.working}>
            Roll key
          </button>
        </DialogActions>
      </form>
    </Dialog>
  );
}

/** A key's allowlist as typed, kept by the dialog (and kept when the API refuses it, to correct). */
function IpsDialog(props: KeyDialog & { invalid: boolean; onSave: (text: string) => void }) {
  const [text, setText] = useState(props.apiKey.allowed_ips.join(', '));
  const submit = (event: Event) => {
    event.preventDefault();
    props.onSave(text);
  };
  // A key that expires is most often one rolled: its successor took the list as it was then, and
  // an edit here restricts this key only.
  const expires = props.apiKey.expires_at;
  const described = [expires ? 'edit-ips-expiry' : '', props.error ? 'edit-ips-error' : '']
    .filter(Boolean)
    .join(' ');
  return (
    <Dialog title={`Allowed IPs of ${props.apiKey.api_key}`} onClose={props.onClose} busy={props.working}>
      <form onSubmit={submit}>
        <label for="edit-ips">Allowed IPs (comma-separated; empty: any address)</label>
        {expires && (
          <p id="edit-ips-expiry">
            This key stops working {when(expires)}. If it was rolled, the new key has an allowlist of its own:
            edit that one too.
          </p>
        )}
        <input
          id="edit-ips"
          name="allowed_ips"
          value={text}
          onInput={(event) => setText(event.currentTarget.value)}
          aria-invalid={props.invalid || undefined}
          aria-describedby={described || undefined}
        />
        <Alert text={props.error} id="edit-ips-error" />
        <DialogActions onCancel={props.onClose}>
          <button type="submit" disabled={props.working}>
            Save
          </button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
