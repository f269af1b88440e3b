import { toSvgPath } from 'lean-qr/extras/svg';
import { generate } from 'lean-qr/nano';
import type { ComponentChildren, Ref } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiFailure, currentSession, sessionNow, whenSessionChanges } from './api.ts';
import { problem } from './format.ts';

/** A load's state: its data, or its error and the request fields the API refused (`errors[].field`). */
interface Loaded<T> {
  data?: T;
  error?: string;
  refusedFields?: string[];
  loading: boolean;
}

/**
 * Loads data for a page; `reload` fetches again (after a change). Only the latest load's answer is
 * shown: an earlier one that arrives late (a slow answer to a filter since changed) is dropped. A
 * reload that fails (no answer, a rate limit, the service failing) keeps the data read before,
 * saying it is as last read: a list never turns into "No keys yet." because it could not be read
 * again. A load for other inputs (a filter, a page) shows no data of before as if it were its own.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<Loaded<T>>({ loading: true });
  const latest = useRef(0);
  const run = useCallback((again: boolean) => {
    const ticket = ++latest.current;
    const settle = (next: (previous: Loaded<T>) => Loaded<T>) => {
      if (ticket === latest.current) setState(next);
    };
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => settle(() => ({ data, loading: false })),
      (error: unknown) =>
        settle((previous) => {
          const kept = again ? previous.data : undefined;
          return {
            data: kept,
            error: kept === undefined ? problem(error) : `${problem(error)} Shown as last read.`,
            refusedFields: error instanceof ApiFailure ? error.errors.map((refused) => refused.field) : [],
            loading: false,
          };
        }),
    );
  }, deps);
  useEffect(() => run(false), [run]);
  const reload = useCallback(() => run(true), [run]);
  return { ...state, reload };
}

/**
 * The control a person pressed last (a click, or Enter or Space on it), for the whole document: a
 * button disabled as it is pressed (its change on its way) loses focus, so where focus was is no
 * longer known from `document.activeElement`.
 */
let lastPressed: HTMLElement | undefined;
addEventListener(
  'click',
  (event) => {
    const control = event.target instanceof Element ? event.target.closest('button, a[href]') : null;
    if (control instanceof HTMLElement) lastPressed = control;
  },
  true,
);

/** Where focus was, or the control just pressed when it is nowhere (a button disabled on click). */
function focusedOrPressed(): HTMLElement | undefined {
  const active = document.activeElement;
  return active instanceof HTMLElement && active !== document.body ? active : lastPressed;
}

/** Focus on the page's heading (announcing the page), made focusable for it. */
export function focusHeading(options?: FocusOptions): void {
  const heading = document.querySelector<HTMLElement>('main h1');
  if (!heading) return;
  heading.tabIndex = -1;
  heading.focus(options);
}

/** How long focus waits for its control to be enabled again, or for what replaced it to take it. */
const FOCUS_WAIT_MS = 1_000;
const FOCUS_POLL_MS = 50;

/**
 * Puts focus back where a person was once what they opened or did is over (WCAG 2.4.3), unless it
 * is somewhere already (a dialog opened since, or the person moved on): on `to` once it can take it
 * (a button disabled while a change was on its way is enabled a moment later), else on the page's
 * heading, never nowhere (which sends a keyboard user back to the top of the page).
 */
export function restoreFocus(to: HTMLElement | undefined): void {
  const until = Date.now() + FOCUS_WAIT_MS;
  const attempt = () => {
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return;
    if (to?.isConnected && !to.matches(':disabled')) return to.focus();
    // Not yet: enabled again, or (gone) focus given by what replaced it (a field of the next step,
    // focused by its own effect after the next frame); the heading only when nothing took it.
    if (Date.now() < until) return void setTimeout(attempt, FOCUS_POLL_MS);
    // Without scrolling: the page stays where the person left it (a second may have passed).
    focusHeading({ preventScroll: true });
  };
  setTimeout(attempt, 0);
}

/**
 * Focus is never left nowhere by a control that went (WCAG 2.4.3): the row a change removed (a key
 * revoked, an endpoint deleted, after `restoreFocus` gave its button focus back), a form replaced by
 * the next step. Once nothing has taken focus for as long as `restoreFocus` waits, the page's
 * heading takes it: a keyboard user goes on from the page, not from its top, and hears where.
 */
let lastFocused: Element | undefined;
addEventListener('focusin', (event) => {
  if (event.target instanceof Element) lastFocused = event.target;
});
let lostFocusCheck: ReturnType<typeof setTimeout> | undefined;
new MutationObserver(() => {
  if (document.activeElement !== document.body || !lastFocused || lastFocused.isConnected) return;
  if (lostFocusCheck) return;
  lostFocusCheck = setTimeout(() => {
    lostFocusCheck = undefined;
    if (document.activeElement === document.body && !lastFocused?.isConnected) {
      focusHeading({ preventScroll: true });
    }
  }, FOCUS_WAIT_MS + 100);
}).observe(document, { childList: true, subtree: true });

/**
 * Changes sent and not yet answered, on every page: closing or reloading the tab meanwhile asks
 * first (its answer, a new secret perhaps, would be lost with the page).
 */
let changesOnTheirWay = 0;
addEventListener('beforeunload', (event) => {
  if (changesOnTheirWay > 0) event.preventDefault();
});

/**
 * A page's changes, one at a time: `act` runs one unless another is on its way (a double click, a
 * second click on a slow network, does nothing), keeps its error, and says whether it was made;
 * `working` disables the buttons meanwhile. `after` runs after each, made or not (a reload: a
 * refusal may come from a change made elsewhere, in another tab).
 */
export function useActions(after: () => void = () => undefined) {
  const busy = useRef(false);
  const [working, setWorking] = useState(false);
  const [error, setError] = useState<string>();
  // Which change the error is of (`act`'s `name`): a form marks its field only for its own.
  const [failedChange, setFailedChange] = useState<string>();
  const act = async (work: () => Promise<void>, name?: string): Promise<boolean> => {
    if (busy.current) return false;
    busy.current = true;
    // The control it came from, disabled meanwhile, gets focus back, or what replaced it keeps it.
    const from = focusedOrPressed();
    setWorking(true);
    setError(undefined);
    setFailedChange(undefined);
    changesOnTheirWay += 1;
    try {
      await work();
      return true;
    } catch (failure) {
      // No answer came: the change may have been made. The list is read again (`after`) to tell.
      setError(
        failure instanceof ApiFailure && failure.status === 0
          ? `${failure.message} Your change may have been made or not: check the list before trying again.`
          : problem(failure),
      );
      setFailedChange(name);
      return false;
    } finally {
      changesOnTheirWay -= 1;
      busy.current = false;
      setWorking(false);
      after();
      restoreFocus(from);
    }
  };
  return { act, working, error, setError, failedChange };
}

/** Several messages as one alert's text: each once, in order (a change's refusal, then a list's). */
export function alertText(...texts: (string | undefined)[]): string | undefined {
  return [...new Set(texts.filter(Boolean))].join(' ') || undefined;
}

/** An error for everyone, screen readers included; `id` ties it to its field (`aria-describedby`). */
export function Alert({ text, id }: { text?: string; id?: string }) {
  return text ? (
    <p role="alert" class="alert" id={id}>
      {text}
    </p>
  ) : null;
}

/** A polite status line (saved, copied, …). */
export function Status({ text, id }: { text?: string; id?: string }) {
  return (
    <p role="status" class="status" id={id}>
      {text ?? ''}
    </p>
  );
}

/** A field for an authenticator app's 6-digit code (named `code`), its instructions in `describedBy`. */
export function CodeInput(props: {
  id: string;
  inputRef: Ref<HTMLInputElement>;
  describedBy: string;
  invalid?: boolean;
}) {
  return (
    <input
      id={props.id}
      name="code"
      inputMode="numeric"
      autocomplete="one-time-code"
      pattern="[0-9]{6}"
      title="6 digits"
      required
      ref={props.inputRef}
      aria-invalid={props.invalid || undefined}
      aria-describedby={props.describedBy}
    />
  );
}

/**
 * The control a dialog closing now gives focus back to. A dialog opening in its place (a roll's
 * secret after the roll) takes it over: its own opener, the roll's button, is gone, and Preact mounts
 * it after the next frame, so the hand-over is kept that long, with room to spare.
 */
let closingOpener: HTMLElement | undefined;
const HAND_OVER_MS = 500;

/**
 * A modal `<dialog>`, labelled by its heading (and described by `describedBy`), opened while
 * mounted; once gone, focus goes back to the control that opened it. While `busy` (its change on
 * its way), a first Escape does not close it (Chrome lets a second through, and Cancel stays
 * there: a request the network holds must never hold the page): a key pressed out of habit does not
 * hide a change that is still being made.
 */
export function Dialog(props: {
  title: string;
  onClose: () => void;
  busy?: boolean;
  describedBy?: string;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = `dialog-${props.title.replace(/\W+/g, '-').toLowerCase()}`;
  useEffect(() => {
    const dialog = ref.current;
    const pressed = focusedOrPressed();
    const opener = pressed?.isConnected && !dialog?.contains(pressed) ? pressed : closingOpener;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      // Kept a moment: a dialog opening in its place (after the next frame) takes it over.
      closingOpener = opener;
      setTimeout(() => {
        if (closingOpener === opener) closingOpener = undefined;
      }, HAND_OVER_MS);
      restoreFocus(opener);
    };
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={id}
      aria-describedby={props.describedBy}
      onClose={props.onClose}
      onCancel={(event) => {
        if (props.busy) event.preventDefault();
      }}
      class="dialog"
    >
      <h2 id={id}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/**
 * A dialog's buttons: the action given, then Cancel; `safeFirst`: Cancel takes the first focus (a
 * dialog whose action cannot be undone is never done by an Enter pressed as it opens).
 */
export function DialogActions(props: {
  onCancel: () => void;
  safeFirst?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class="actions">
      {props.children}
      <button type="button" class="secondary" onClick={props.onCancel} autofocus={props.safeFirst}>
        Cancel
      </button>
    </div>
  );
}

/** A secret to show once: the dialog's title, its fields, what Copy copies, and a note. */
export interface SecretShown {
  title: string;
  fields: [label: string, value: string][];
  copy: string;
  /** Said under the warning (an answer replayed from an earlier request, say). */
  note?: string;
}

/** A secret to show, and the session of this tab whose change made it (shown in that one only). */
type SessionSecret = SecretShown & { session: number };

/** Secrets made and not yet dismissed, oldest first (two pages' changes may both answer). */
let secretsToShow: SessionSecret[] = [];
let onSecretsChanged: (secrets: SessionSecret[]) => void = () => undefined;

/**
 * Shows a new secret wherever the person is in the dashboard by the time its answer comes (another
 * page, if they left the one that asked): the app shows it (`SecretsShown`), not the page, which
 * may be gone. Only within the session that asked (`session`, the answer's `Page.session`): once
 * it has ended (Sign out, the hour, another sign-in) the secret is not shown to whoever is there
 * now; the key or endpoint is made, and listed, without it.
 */
export function showSecret(secret: SecretShown, session: number): void {
  if (session !== sessionNow() || !currentSession()) return;
  secretsToShow = [...secretsToShow.filter((shown) => shown.session === session), { ...secret, session }];
  onSecretsChanged(secretsToShow);
}

// A session's secrets go with it: none is kept in the page's memory for whoever signs in next.
whenSessionChanges(() => {
  secretsToShow = [];
  onSecretsChanged(secretsToShow);
});

/** The secrets made in this session, one dialog at a time until each one's Done: rendered by the app. */
export function SecretsShown() {
  const [secrets, setSecrets] = useState(secretsToShow);
  useEffect(() => {
    onSecretsChanged = setSecrets;
    setSecrets(secretsToShow);
    return () => {
      onSecretsChanged = () => undefined;
    };
  }, []);
  // One still open when its session ended is gone with it (the app shows this in a session only).
  const [secret] = secrets.filter((shown) => shown.session === sessionNow());
  if (!secret) return null;
  const done = () => {
    secretsToShow = secretsToShow.filter((shown) => shown !== secret);
    setSecrets(secretsToShow);
  };
  // Keyed by its value: the next secret opens as a dialog of its own.
  const { session: _session, ...shown } = secret;
  return <SecretDialog key={secret.copy} {...shown} onClose={done} />;
}

/** A secret shown once: its value, a Copy button, and a warning it will not be shown again. */
export function SecretDialog(props: SecretShown & { onClose: () => void }) {
  const [copied, setCopied] = useState<string>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.copy);
      setCopied('Copied to the clipboard');
    } catch {
      setCopied('Copying is not allowed here: select the text and copy it');
    }
  };
  return (
    <Dialog
      title={props.title}
      onClose={props.onClose}
      describedBy={props.note ? 'secret-once secret-note' : 'secret-once'}
    >
      {/* Described by the warning, not the values: a screen reader does not read a secret out as it opens. */}
      <p id="secret-once">This secret is shown once. Store it now: it cannot be shown again.</p>
      {props.note && <p id="secret-note">{props.note}</p>}
      <dl class="secret" id="secret-values">
        {props.fields.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>
              <code>{value}</code>
            </dd>
          </div>
        ))}
      </dl>
      <div class="actions">
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" class="secondary" onClick={props.onClose}>
          Done
        </button>
      </div>
      <Status text={copied} />
    </Dialog>
  );
}

/** The white border a QR code needs around it (ISO/IEC 18004's quiet zone), in modules. */
const QR_QUIET_ZONE = 4;
const QR_MODULE_PX = 5;

/**
 * `text` as a QR code, drawn as SVG: no image is fetched (the page's CSP allows none but its own),
 * black on white with its quiet zone, as scanners need.
 */
export function QrCode({ text, label }: { text: string; label: string }) {
  const code = useMemo(() => generate(text), [text]);
  const side = code.size + 2 * QR_QUIET_ZONE;
  return (
    <svg
      class="qr"
      role="img"
      aria-label={label}
      viewBox={`${-QR_QUIET_ZONE} ${-QR_QUIET_ZONE} ${side} ${side}`}
      width={side * QR_MODULE_PX}
      height={side * QR_MODULE_PX}
      shape-rendering="crispEdges"
    >
      <rect x={-QR_QUIET_ZONE} y={-QR_QUIET_ZONE} width={side} height={side} fill="#fff" />
      <path d={toSvgPath(code)} fill="#000" />
    </svg>
  );
}

export interface Column<T> {
  label: string;
  cell: (row: T) => ComponentChildren;
  numeric?: boolean;
}

/** A ref whose element takes focus when it appears (a panel's heading, opened by a button far above it). */
export function useFocusOnMount<E extends HTMLElement>() {
  const ref = useRef<E>(null);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    element.tabIndex = -1;
    element.focus();
  }, []);
  return ref;
}

/** Whether the element's content is wider than its box (it scrolls sideways), as the window changes. */
function useScrollsSideways<E extends HTMLElement>() {
  const ref = useRef<E>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    // A box that has focus keeps its tab stop (removing it would drop focus to nothing).
    const measure = () =>
      setScrolls(element.scrollWidth > element.clientWidth || document.activeElement === element);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return { ref, scrolls };
}

/**
 * A data table with a caption (its accessible name). Its box is a focusable, named region only
 * while the table is wider than it: a scrolling region must take focus for keyboard users (WCAG
 * 2.1.1), and one that does not scroll would only be a tab stop and a landmark more.
 */
export function Table<T>(props: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  empty: string;
  rowKey: (row: T) => string;
}) {
  const { ref, scrolls } = useScrollsSideways<HTMLElement>();
  return (
    <section
      class="table-wrap"
      ref={ref}
      tabIndex={scrolls ? 0 : undefined}
      aria-label={scrolls ? props.caption : undefined}
    >
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th key={column.label} scope="col" class={column.numeric ? 'numeric' : undefined}>
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 ? (
            <tr>
              <td colSpan={props.columns.length}>{props.empty}</td>
            </tr>
          ) : (
            props.rows.map((row) => (
              <tr key={props.rowKey(row)}>
                {props.columns.map((column) => (
                  <td key={column.label} class={column.numeric ? 'numeric' : undefined}>
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </section>
  );
}

/** What an empty page of a list says when the list goes on (a filtered page may stop short: `next_cursor`). */
const MORE_FOLLOW = 'Nothing on this page: the list goes on, on the next page.';

/**
 * What a table with no rows says: loading; not read at all (its alert says why: offline, a rate
 * limit), never "No keys yet." for keys that could not be read; the list going on (`more`); or
 * `none`, the list being empty.
 */
export function emptyText(
  load: { loading: boolean; error?: string; data?: unknown },
  none: string,
  more?: unknown,
): string {
  if (load.loading) return 'Loading…';
  if (load.data === undefined && load.error) return 'Not loaded: see the message above.';
  return more ? MORE_FOLLOW : none;
}

/** Cursor paging: the cursors of the pages before this one, the current one last. */
export function useCursors() {
  const [cursors, setCursors] = useState<string[]>([]);
  return { cursors, cursor: cursors.at(-1), reset: () => setCursors([]), setCursors };
}

/** "Previous page" and "Next page" over a list's cursors. */
export function Pager(props: { paging: ReturnType<typeof useCursors>; next: string | null | undefined }) {
  const { cursors, setCursors } = props.paging;
  const next = props.next;
  return (
    <div class="pager">
      <button
        type="button"
        class="secondary"
        disabled={cursors.length === 0}
        onClick={() => setCursors(cursors.slice(0, -1))}
      >
        Previous page
      </button>
      <button
        type="button"
        class="secondary"
        disabled={!next}
        onClick={() => next && setCursors([...cursors, next])}
      >
        Next page
      </button>
    </div>
  );
}
