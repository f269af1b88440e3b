import { useState } from 'preact/hooks';
import { request, requestAll, serverNow } from './api.ts';
import { problem, when } from './format.ts';
import type { ApiKey } from './types.ts';
import { Alert, Dialog, DialogActions, SecretDialog, Status, Table, useLoad } from './ui.tsx';

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

/** Create, roll, revoke keys and edit their IP allowlists; a new secret is shown once. */
export function ApiKeys() {
  const keys = useLoad(() => requestAll<ApiKey>('/keys'), []);
  const [secret, setSecret] = useState<ApiKey>();
  const [acting, setActing] = useState<{ kind: 'roll' | 'revoke' | 'ips'; key: ApiKey }>();
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<string>();

  const act = async (work: () => Promise<void>) => {
    setError(undefined);
    try {
      await work();
      keys.reload();
    } catch (failure) {
      setError(problem(failure));
    }
  };
  const create = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const allowed = ips(String(new FormData(form).get('allowed_ips') ?? ''));
    return act(async () => {
      setSecret(
        (await request<ApiKey>('POST', '/keys', allowed.length ? { allowed_ips: allowed } : undefined)).data,
      );
      form.reset();
    });
  };
  const roll = (event: Event) => {
    event.preventDefault();
    const hours = Number(new FormData(event.currentTarget as HTMLFormElement).get('expires_in'));
    const key = acting?.key;
    setActing(undefined);
    if (!key) return;
    const at = new Date(serverNow() + hours * 3_600_000 + (hours === 0 ? 1_000 : 0)).toISOString();
    return act(async () => {
      setSecret(
        (await request<ApiKey>('POST', `/keys/${key.api_key}/roll`, { old_key_expires_at: at })).data,
      );
    });
  };
  const revoke = () => {
    const key = acting?.key;
    setActing(undefined);
    if (!key) return;
    return act(async () => {
      await request('POST', `/keys/${key.api_key}/revoke`);
      setStatus(`Revoked ${key.api_key}: refused within 60 seconds.`);
    });
  };
  const saveIps = (event: Event) => {
    event.preventDefault();
    const key = acting?.key;
    const allowed = ips(
      String(new FormData(event.currentTarget as HTMLFormElement).get('allowed_ips') ?? ''),
    );
    setActing(undefined);
    if (!key) return;
    return act(async () => {
      await request('POST', `/keys/${key.api_key}/allowed-ips`, { allowed_ips: allowed });
      setStatus(`Saved the allowlist of ${key.api_key}: in force within 60 seconds.`);
    });
  };

  return (
    <>
      <h1>API keys</h1>
      <form onSubmit={create} class="inline" aria-label="New API key">
        <label for="new-key-ips">Allowed IPs (optional, comma-separated)</label>
        <input id="new-key-ips" name="allowed_ips" placeholder="203.0.113.0/24" />
        <button type="submit">Create key</button>
      </form>
      <Alert text={error ?? keys.error} />
      <Status text={status} />
      <Table
        caption="Your API keys"
        rows={keys.data ?? []}
        rowKey={(key) => key.api_key}
        empty={keys.loading ? 'Loading…' : 'No keys yet.'}
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
                  <button type="button" class="secondary" onClick={() => setActing({ kind: 'roll', key })}>
                    Roll
                  </button>
                  <button type="button" class="secondary" onClick={() => setActing({ kind: 'ips', key })}>
                    Edit IPs
                  </button>
                  <button type="button" class="danger" onClick={() => setActing({ kind: 'revoke', key })}>
                    Revoke
                  </button>
                </fieldset>
              ) : null,
          },
        ]}
      />
      {acting?.kind === 'roll' && (
        <Dialog title={`Roll ${acting.key.api_key}`} onClose={() => setActing(undefined)}>
          <form onSubmit={roll}>
            <p>A new key is made with the same allowlist. The old key keeps working until:</p>
            <label for="roll-expiry">Old key expires</label>
            <select id="roll-expiry" name="expires_in" value="24">
              {ROLL_CHOICES.map(([label, hours]) => (
                <option key={hours} value={hours}>
                  {label}
                </option>
              ))}
            </select>
            <DialogActions onCancel={() => setActing(undefined)}>
              <button type="submit">Roll key</button>
            </DialogActions>
          </form>
        </Dialog>
      )}
      {acting?.kind === 'revoke' && (
        <Dialog title={`Revoke ${acting.key.api_key}`} onClose={() => setActing(undefined)}>
          <p>Requests with this key are refused within 60 seconds. This cannot be undone.</p>
          <DialogActions onCancel={() => setActing(undefined)}>
            <button type="button" class="danger" onClick={revoke}>
              Revoke key
            </button>
          </DialogActions>
        </Dialog>
      )}
      {acting?.kind === 'ips' && (
        <Dialog title={`Allowed IPs of ${acting.key.api_key}`} onClose={() => setActing(undefined)}>
          <form onSubmit={saveIps}>
            <label for="edit-ips">Allowed IPs (comma-separated; empty: any address)</label>
            <input id="edit-ips" name="allowed_ips" value={acting.key.allowed_ips.join(', ')} />
            <DialogActions onCancel={() => setActing(undefined)}>
              <button type="submit">Save</button>
            </DialogActions>
          </form>
        </Dialog>
      )}
      {secret?.api_secret && (
        <SecretDialog
          title="Your new API key"
          fields={[
            ['X-API-Key', secret.api_key],
            ['X-API-Secret', secret.api_secret],
            ...(secret.rolled_key
              ? ([['Old key works until', when(secret.rolled_key.expires_at)]] as [string, string][])
              : []),
          ]}
          copy={`X-API-Key: ${secret.api_key}\nX-API-Secret: ${secret.api_secret}`}
          onClose={() => setSecret(undefined)}
        />
      )}
    </>
  );
}
