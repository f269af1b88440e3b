import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, currentSession, type Page, query, request } from './api.ts';
import { localDayBound, problem, transactionsCsv } from './format.ts';
import { TRANSACTION_COLUMNS } from './overview.tsx';
import type { Transaction } from './types.ts';
import {
  Alert,
  alertText,
  emptyText,
  Pager,
  restoreFocus,
  Status,
  Table,
  useCursors,
  useLoad,
} from './ui.tsx';

type Filter = { type?: string; status?: string; from?: string; to?: string };

/** Rate-limit waits in a row after which an export gives up (the limit is spent elsewhere too). */
const MAX_EXPORT_WAITS = 5;

/** Transactions with the filters of GET /transactions, cursor paging, and CSV export of a filter. */
export function Transactions() {
  const [filter, setFilter] = useState<Filter>({});
  const paging = useCursors();
  const { cursor } = paging;
  const page = useLoad(
    () => request<Transaction[]>('GET', `/transactions${query({ ...filter, limit: 20, cursor })}`),
    [filter, cursor],
  );
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<string>();

  const apply = (event: Event) => {
    event.preventDefault();
    const values = new FormData(event.currentTarget as HTMLFormElement);
    const pick = (name: string) => String(values.get(name) ?? '') || undefined;
    paging.reset();
    setFilter({
      type: pick('type'),
      status: pick('status'),
      from: localDayBound(pick('from'), 'start'),
      to: localDayBound(pick('to'), 'end'),
    });
  };
  // One export at a time (a double click exports once), given up when the page goes (another page,
  // sign-out) or the session becomes another's: nothing of it runs on, or lands in the next one.
  // Cancel gives it up too, at once, even while it waits out the rate limit.
  const exporting = useRef(false);
  const [exportRunning, setExportRunning] = useState(false);
  const cancelled = useRef(false);
  const wake = useRef<() => void>();
  const exportButton = useRef<HTMLButtonElement>(null);
  const here = useRef(true);
  useEffect(
    () => () => {
      here.current = false;
      wake.current?.();
    },
    [],
  );
  /** Waits `ms`, or less when the export is cancelled or the page goes. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake.current = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const cancelExport = () => {
    cancelled.current = true;
    wake.current?.();
  };
  const exportCsv = async () => {
    if (exporting.current) return;
    exporting.current = true;
    cancelled.current = false;
    setExportRunning(true);
    setError(undefined);
    setStatus('Exporting…');
    const merchant = currentSession()?.merchant_id;
    const goneOn = () => !here.current || cancelled.current || currentSession()?.merchant_id !== merchant;
    // Said once the export stops early because of Cancel (a page gone has nobody to tell).
    const stopped = (read: number) => {
      if (cancelled.current && here.current)
        setStatus(`Export cancelled after ${read} transactions: nothing was saved.`);
    };
    try {
      const rows: Transaction[] = [];
      let next: string | undefined;
      let waits = 0;
      for (;;) {
        if (goneOn()) return stopped(rows.length);
        let result: Page<Transaction[]>;
        try {
          result = await request<Transaction[]>(
            'GET',
            `/transactions${query({ ...filter, limit: 100, cursor: next })}`,
          );
        } catch (failure) {
          // A long history spends the user's 100 requests a minute: wait as the limit says, and go
          // on from the same page, rather than fail (a retry would start again from the first).
          if (!(failure instanceof ApiFailure && failure.retryAfter) || ++waits > MAX_EXPORT_WAITS) {
            throw failure;
          }
          setStatus(
            `Exporting… ${rows.length} so far; the rate limit lets it go on in ${failure.retryAfter} s.`,
          );
          await pause((failure.retryAfter ?? 1) * 1000);
          continue;
        }
        waits = 0;
        rows.push(...result.data);
        next = result.nextCursor ?? undefined;
        if (!next) break;
        setStatus(`Exporting… ${rows.length} so far.`);
      }
      if (goneOn()) return stopped(rows.length);
      const url = URL.createObjectURL(
        new Blob([transactionsCsv(rows as unknown as Record<string, unknown>[])], { type: 'text/csv' }),
      );
      const link = document.createElement('a');
      link.href = url;
      link.download = 'transactions.csv';
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setStatus(`Exported ${rows.length} transactions.`);
    } catch (failure) {
      setStatus(undefined);
      setError(problem(failure));
    } finally {
      exporting.current = false;
      wake.current = undefined;
      if (here.current) {
        setExportRunning(false);
        // Focus left with the Cancel button, or with Export CSV while it was disabled: back to it.
        restoreFocus(exportButton.current ?? undefined);
      }
    }
  };

  // A refusal of the dates (`query.from: Must not be after to`) is tied to their fields.
  const datesRefused =
    !error && (page.refusedFields ?? []).some((field) => field === 'query.from' || field === 'query.to');
  const dateField = datesRefused ? { 'aria-invalid': true, 'aria-describedby': 'transactions-error' } : {};
  return (
    <>
      <h1>Transactions</h1>
      <form onSubmit={apply} class="inline" aria-label="Filter transactions">
        <label for="filter-type">Type</label>
        <select id="filter-type" name="type">
          <option value="">All</option>
          <option value="credit">Credit</option>
          <option value="debit">Debit</option>
        </select>
        <label for="filter-status">Status</label>
        <select id="filter-status" name="status">
          <option value="">All</option>
          {['pending', 'success', 'failed', 'reversed'].map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>
        <label for="filter-from">From</label>
        <input id="filter-from" name="from" type="date" {...dateField} />
        <label for="filter-to">To</label>
        <input id="filter-to" name="to" type="date" {...dateField} />
        <button type="submit" class="secondary">
          Apply filters
        </button>
        <button type="button" ref={exportButton} onClick={exportCsv} disabled={exportRunning}>
          Export CSV
        </button>
        {exportRunning && (
          <button type="button" class="secondary" onClick={cancelExport}>
            Cancel export
          </button>
        )}
      </form>
      <p class="status">
        Days and the times shown are your browser's time zone (
        {Intl.DateTimeFormat().resolvedOptions().timeZone}); the CSV keeps the API's UTC times.
      </p>
      {/* The list's own refusal is not hidden by an export's: the table's "Not loaded" points here. */}
      <Alert text={alertText(error, page.error)} id="transactions-error" />
      <Status text={status} />
      <Table
        caption="Transactions, newest first"
        columns={TRANSACTION_COLUMNS}
        rows={page.data?.data ?? []}
        rowKey={(t) => t.reference}
        empty={emptyText(page, 'No transactions match.', page.data?.nextCursor)}
      />
      <Pager paging={paging} next={page.data?.nextCursor} />
    </>
  );
}
