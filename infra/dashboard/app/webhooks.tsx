import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, currentSession, type Page, query, request, requestAll } from './api.ts';
import { attemptError, when } from './format.ts';
import type { Endpoint, MerchantEvent } from './types.ts';
import {
  Alert,
  alertText,
  Dialog,
  DialogActions,
  emptyText,
  Status,
  showSecret,
  Table,
  useActions,
  useFocusOnMount,
  useLoad,
} from './ui.tsx';

/**
 * The Idempotency-Key of a change not yet known to be made: asking again for the same change after
 * a failure (a lost answer) sends the same key, so it is made once; once made, it is forgotten.
 * Kept by the app, not the page (asked again after leaving the page and coming back, Back then
 * Forward, is still the same change), for one user, and for 10 minutes: a rotation asked for
 * later, on purpose (after a leak), is a new one, not the old one's answer again.
 */
const changeKeys = new Map<string, { asked: string; key: string; at: number }>();
const SAME_CHANGE_MS = 10 * 60_000;
async function keyed<T>(slot: string, asked: unknown, send: (key: string) => Promise<T>): Promise<T> {
  const text = JSON.stringify(asked);
  const whose = `${currentSession()?.email} ${slot}`;
  const held = changeKeys.get(whose);
  const same = held?.asked === text && Date.now() - held.at < SAME_CHANGE_MS;
  const key = held && same ? held.key : crypto.randomUUID();
  changeKeys.set(whose, { asked: text, key, at: same ? (held?.at ?? Date.now()) : Date.now() });
  const answer = await send(key);
  changeKeys.delete(whose);
  return answer;
}

/** An endpoint's new secret, shown once by the app (also if this page is left before the answer). */
function showEndpointSecret(answer: Page<Endpoint>, replayedNote: string): void {
  if (!answer.data.secret) return;
  showSecret(
    {
      title: "Your endpoint's signing secret",
      fields: [
        ['Endpoint', answer.data.url],
        ['Secret', answer.data.secret],
      ],
      copy: answer.data.secret,
      note: answer.replayed ? replayedNote : undefined,
    },
    answer.session,
  );
}

/** An endpoint's refusal as not found: deleted since the list was read (by a colleague). */
const deletedSince = (endpoint: Endpoint, failure: unknown) =>
  failure instanceof ApiFailure && failure.status === 404
    ? new Error(
        `${endpoint.url} was deleted since this page read the list (by someone else): nothing was changed. The list no longer shows it.`,
      )
    : failure;

/** Endpoints (secret shown once), events with each delivery attempt, and Resend. */
export function Webhooks() {
  const endpoints = useLoad(() => requestAll<Endpoint>('/webhook-endpoints'), []);
  const [cursor, setCursor] = useState<string>();
  const events = useLoad(
    () => request<MerchantEvent[]>('GET', `/events${query({ limit: 20, cursor })}`),
    [cursor],
  );
  const [open, setOpen] = useState<string>();
  const [deleting, setDeleting] = useState<Endpoint>();
  const [rotating, setRotating] = useState<Endpoint>();
  const [status, setStatus] = useState<string>();
  // One change at a time: a second click while one is on its way (a double click) does nothing.
  const { act, working, error, setError, failedChange } = useActions(endpoints.reload);
  const add = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const values = new FormData(form);
    const description = String(values.get('description') ?? '').trim();
    return act(async () => {
      setStatus(undefined);
      const body = { url: String(values.get('url')), ...(description ? { description } : {}) };
      const made = await keyed('add', body, (key) =>
        request<Endpoint>('POST', '/webhook-endpoints', body, { 'Idempotency-Key': key }),
      );
      showEndpointSecret(
        made,
        'Your earlier Add of this endpoint had been made: this is its answer again. If it was deleted since, it is no longer in the list.',
      );
      form.reset();
    }, 'add');
  };
  /** A dialog's change refused as not found: the dialog closes, and the page says why. */
  const unlessDeleted = (endpoint: Endpoint) => (failure: unknown) => {
    if (failure instanceof ApiFailure && failure.status === 404) closeDialog();
    throw deletedSince(endpoint, failure);
  };
  const remove = (endpoint: Endpoint) =>
    act(async () => {
      setStatus(undefined);
      await request('DELETE', `/webhook-endpoints/${endpoint.id}`).catch(unlessDeleted(endpoint));
      setDeleting(undefined);
      setStatus(`Deleted the endpoint ${endpoint.url}: no more events are sent to it.`);
    });
  const rotate = (endpoint: Endpoint) =>
    act(async () => {
      setStatus(undefined);
      const rotated = await keyed(`rotate ${endpoint.id}`, endpoint.id, (key) =>
        request<Endpoint>('POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, undefined, {
          'Idempotency-Key': key,
        }),
      ).catch(unlessDeleted(endpoint));
      setRotating(undefined);
      showEndpointSecret(
        rotated,
        'Your earlier rotation had been made: this is its secret again. If the secret was rotated again since (by a colleague), this one stops signing 24 hours after that rotation: ask them for the newest.',
      );
    });
  /** A row's button opening its dialog, which shows its own change's refusal only. */
  const ask = (show: (endpoint: Endpoint) => void, endpoint: Endpoint) => () => {
    setError(undefined);
    show(endpoint);
  };
  /** A dialog's Cancel or Escape: its change's refusal goes with it. */
  const closeDialog = () => {
    setDeleting(undefined);
    setRotating(undefined);
    setError(undefined);
  };

  // What the page's first alert says: a change's refusal (one in a dialog is said there), and the
  // endpoints' load's, whose table's "Not loaded" points here.
  const saidAbove = [deleting || rotating ? undefined : error, endpoints.error];
  const endpointsAlert = alertText(...saidAbove);
  return (
    <>
      <h1>Webhooks</h1>
      <form onSubmit={add} class="inline" aria-label="New webhook endpoint">
        <label for="endpoint-url">Endpoint URL</label>
        <input
          id="endpoint-url"
          name="url"
          type="url"
          required
          placeholder="https://example.com/hooks"
          aria-invalid={failedChange === 'add' || undefined}
          aria-describedby={failedChange === 'add' ? 'endpoints-error' : undefined}
        />
        <label for="endpoint-description">Description (optional)</label>
        {/* No maxLength: the browser counts UTF-16 units, the API 200 code points (100 emoji fit). */}
        <input id="endpoint-description" name="description" />
        <button type="submit" disabled={working}>
          Add endpoint
        </button>
      </form>
      <Alert text={endpointsAlert} id="endpoints-error" />
      <Status text={status} />
      <Table
        caption="Webhook endpoints"
        rows={endpoints.data ?? []}
        rowKey={(endpoint) => endpoint.id}
        empty={emptyText(endpoints, 'No endpoints yet.')}
        columns={[
          { label: 'URL', cell: (endpoint) => <code class="wrap">{endpoint.url}</code> },
          { label: 'Description', cell: (endpoint) => endpoint.description ?? '' },
          { label: 'Events', cell: (endpoint) => endpoint.events.join(', ') },
          { label: 'Created', cell: (endpoint) => when(endpoint.created_at) },
          {
            label: 'Actions',
            cell: (endpoint) => (
              <fieldset class="row-actions">
                <legend class="visually-hidden">Actions for {endpoint.url}</legend>
                <button
                  type="button"
                  class="secondary"
                  disabled={working}
                  onClick={ask(setRotating, endpoint)}
                >
                  Rotate secret
                </button>
                <button type="button" class="danger" disabled={working} onClick={ask(setDeleting, endpoint)}>
                  Delete
                </button>
              </fieldset>
            ),
          },
        ]}
      />
      <h2>Events</h2>
      {/* Said once: a refusal the first alert says already (offline, the rate limit) is not read twice. */}
      <Alert text={saidAbove.includes(events.error) ? undefined : events.error} />
      <Table
        caption="Events, newest first"
        rows={events.data?.data ?? []}
        rowKey={(event) => event.id}
        empty={emptyText(events, 'No events yet.', events.data?.nextCursor)}
        columns={[
          { label: 'Created', cell: (event) => when(event.created_at) },
          { label: 'Type', cell: (event) => event.type },
          { label: 'Event', cell: (event) => <code>{event.id}</code> },
          {
            label: 'Deliveries',
            cell: (event) => (
              <button
                type="button"
                class="secondary"
                aria-expanded={open === event.id}
                aria-controls="event-detail-panel"
                onClick={() => setOpen(open === event.id ? undefined : event.id)}
              >
                {open === event.id ? 'Hide attempts' : 'Show attempts'}
                {/* Each row's button told apart by name, as a screen reader's list of buttons reads it. */}
                <span class="visually-hidden"> of {event.id}</span>
              </button>
            ),
          },
        ]}
      />
      <div class="pager">
        <button type="button" class="secondary" disabled={!cursor} onClick={() => setCursor(undefined)}>
          Newest
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!events.data?.nextCursor}
          onClick={() => setCursor(events.data?.nextCursor ?? undefined)}
        >
          Older events
        </button>
      </div>
      {open && <EventDetail key={open} id={open} endpoints={endpoints.data} />}
      {rotating && (
        <Dialog
          title={`Rotate the secret of ${rotating.url}`}
          onClose={closeDialog}
          busy={working}
          describedBy="rotate-what"
        >
          <p id="rotate-what">
            A new signing secret is made and shown once. For 24 hours deliveries carry a signature with the
            new secret and one with the secret in use now, so your receiver keeps working while you give it
            the new one; after that, only the new secret signs.
          </p>
          <Alert text={error} />
          <DialogActions onCancel={closeDialog} safeFirst>
            <button type="button" disabled={working} onClick={() => rotate(rotating)}>
              Rotate secret
            </button>
          </DialogActions>
        </Dialog>
      )}
      {deleting && (
        <Dialog
          title={`Delete the endpoint ${deleting.url}`}
          onClose={closeDialog}
          busy={working}
          describedBy="delete-what"
        >
          <p id="delete-what">
            No more events are sent to it, and its pending deliveries end failed. This cannot be undone: to
            receive events there again, add it as a new endpoint, with a new secret.
          </p>
          <Alert text={error} />
          <DialogActions onCancel={closeDialog} safeFirst>
            <button type="button" class="danger" disabled={working} onClick={() => remove(deleting)}>
              Delete endpoint
            </button>
          </DialogActions>
        </Dialog>
      )}
    </>
  );
}

/**
 * One event's deliveries, each attempt (time, status code, error, duration), and Resend. A delivery
 * names its endpoint by the URL the endpoints table shows (by its id one the table does not list:
 * deleted, or added since the table was read, or the table not read).
 */
function EventDetail({ id, endpoints }: { id: string; endpoints?: readonly Endpoint[] }) {
  const endpointName = (endpointId: string) => {
    const endpoint = endpoints?.find((candidate) => candidate.id === endpointId);
    return endpoint ? endpoint.url : endpointId;
  };
  const detail = useLoad(
    () => request<MerchantEvent>('GET', `/events/${id}`).then((page) => page.data),
    [id],
  );
  const [status, setStatus] = useState<string>();
  const { act, working, error } = useActions();
  // The looks scheduled after a Resend, cancelled when the detail goes (another event, another page).
  const looks = useRef<ReturnType<typeof setTimeout>[]>([]);
  const gone = useRef(false);
  useEffect(
    () => () => {
      gone.current = true;
      for (const look of looks.current) clearTimeout(look);
    },
    [],
  );
  const resend = () =>
    act(async () => {
      setStatus(undefined);
      const answer = await request<{ deliveries?: unknown[] }>('POST', `/events/${id}/redeliver`, {});
      if ((answer.data?.deliveries ?? []).length === 0) {
        setStatus(
          'Nothing resent: no endpoint now takes this event type (none subscribed to it, or deleted).',
        );
        return;
      }
      setStatus('Resent: the new attempt appears below within seconds.');
      // The delivery runs in the background: look again a few times.
      // (Not when the panel went while this was on its way: nothing would cancel them.)
      if (!gone.current)
        looks.current.push(...[1_000, 3_000, 6_000].map((ms) => setTimeout(detail.reload, ms)));
    });
  const deliveries = detail.data?.deliveries ?? [];
  // Opened by a button far above it (after the whole list): focus comes to it.
  const heading = useFocusOnMount<HTMLHeadingElement>();
  return (
    <section class="panel" id="event-detail-panel" aria-labelledby="event-detail">
      <h2 id="event-detail" ref={heading}>
        Event <code>{id}</code>
      </h2>
      <div class="actions">
        <button type="button" disabled={working} onClick={resend}>
          Resend
        </button>
        <button type="button" class="secondary" onClick={detail.reload}>
          Refresh
        </button>
      </div>
      <Status text={status} />
      <Alert text={error ?? detail.error} />
      {deliveries.length === 0 && !detail.loading && (
        <p>No deliveries: no endpoint was subscribed when it happened.</p>
      )}
      {deliveries.map((delivery, i) => (
        <Table
          key={`${delivery.endpoint_id} ${i}`}
          caption={`Delivery attempts to ${endpointName(delivery.endpoint_id)} (${delivery.status})${resendOf(deliveries, i)}`}
          rows={delivery.attempts}
          rowKey={(attempt) => attempt.at}
          empty="No attempt yet."
          columns={[
            { label: 'At', cell: (attempt) => when(attempt.at) },
            { label: 'Status code', cell: (attempt) => attempt.status_code ?? '—' },
            { label: 'Error', cell: (attempt) => attemptError(attempt.error) },
            { label: 'Duration', numeric: true, cell: (attempt) => `${attempt.duration_ms} ms` },
          ]}
        />
      ))}
    </section>
  );
}

/** ", resend N" for the N-th later delivery of an event to the same endpoint (a Resend's); else "". */
function resendOf(deliveries: { endpoint_id: string }[], index: number): string {
  const endpoint = deliveries[index]?.endpoint_id;
  const before = deliveries.slice(0, index).filter((delivery) => delivery.endpoint_id === endpoint).length;
  return before > 0 ? `, resend ${before}` : '';
}
