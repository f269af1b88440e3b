/** Kobo as naira, e.g. 123456 → "₦1,234.56". */
export function naira(kobo: number): string {
  const sign = kobo < 0 ? '−' : '';
  const abs = Math.abs(kobo);
  const whole = Math.floor(abs / 100).toLocaleString('en-NG');
  return `${sign}₦${whole}.${String(abs % 100).padStart(2, '0')}`;
}

/** An ISO timestamp as a short local date and time; an absent one as "—". */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * A day picked in the browser (`YYYY-MM-DD`, an `<input type="date">`) as the time its start or end
 * is there, in UTC (`edge`): the filters are the user's days, as the tables show times in the user's zone (a
 * bare date would be the API's UTC day, an hour off Lagos's). Undefined for no day.
 */
export function localDayBound(day: string | undefined, edge: 'start' | 'end'): string | undefined {
  const parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day ?? '');
  if (!parts) return undefined;
  const [year, month, date] = parts.slice(1).map(Number) as [number, number, number];
  // A day ends where the next begins: on a day whose last hour comes twice (clocks turned back at
  // midnight), its 23:59:59.999 would be the first of the two, and the second hour in no day. A
  // midnight that does not exist is read as the day's first hour.
  const time =
    edge === 'start'
      ? new Date(year, month - 1, date)
      : new Date(new Date(year, month - 1, date + 1).getTime() - 1);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

/** The fields the dashboard sends, as its forms label them. */
const FIELD_LABELS: Readonly<Record<string, string>> = {
  allowed_ips: 'Allowed IPs',
  url: 'Endpoint URL',
  description: 'Description',
  from: 'From',
  to: 'To',
  new_password: 'New password',
  code: 'Code',
  email: 'Email',
  password: 'Password',
  old_key_expires_at: 'Old key expires',
};

/** A refused field's path (`allowed_ips.1`, `query.from`) as the form names it ("Allowed IPs, entry 2"). */
function fieldLabel(path: string): string {
  const [name = path, index] = path.replace(/^(query|body)\./, '').split('.');
  const label = FIELD_LABELS[name] ?? name.replace(/_/g, ' ');
  return index !== undefined && /^\d+$/.test(index) ? `${label}, entry ${Number(index) + 1}` : label;
}

/**
 * The message of an error, for people: a refusal of fields says each, by the form's name for it
 * ("Allowed IPs, entry 2: Not an IP address…"), without the API's "Request validation failed".
 */
export function problem(error: unknown): string {
  const failure = error as { message?: string; errors?: { field: string; message: string }[] };
  const details = (failure.errors ?? []).map((item) => `${fieldLabel(item.field)}: ${item.message}`);
  return details.length > 0
    ? `${details.join('; ')}.`.replace(/\.\.$/, '.')
    : (failure.message ?? String(error));
}

/** What a delivery attempt's `error` (a code: `ECONNREFUSED`, `timeout`) means, in words. */
const ATTEMPT_ERRORS: Readonly<Record<string, string>> = {
  timeout: 'No answer in time',
  'connect timeout': 'Could not connect in time',
  'no address': 'The host has no address',
  ECONNREFUSED: 'Connection refused: nothing takes connections on that port',
  ECONNRESET: 'The receiver closed the connection',
  EHOSTUNREACH: 'The host cannot be reached',
  ENETUNREACH: 'The network of the host cannot be reached',
  EPIPE: 'The receiver closed the connection',
  ERR_TLS_CERT_ALTNAME_INVALID: 'The TLS certificate is not for this host',
  CERT_HAS_EXPIRED: 'The TLS certificate has expired',
  CERT_NOT_YET_VALID: 'The TLS certificate is not valid yet',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'The TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'The TLS certificate chain has a self-signed certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'The TLS certificate chain is incomplete (an intermediate is missing)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'The TLS certificate chain is incomplete (an intermediate is missing)',
  HPE_INVALID_CONSTANT: 'The answer was not HTTP',
  'event expired': 'Not sent: the event has expired',
  'endpoint deleted': 'Not sent: the endpoint was deleted',
};

/**
 * A delivery attempt's `error` for people, a system's code kept (what the API and logs say):
 * "Connection refused: nothing takes connections on that port (ECONNREFUSED)". A URL that was not
 * called says why ("Not sent: host does not resolve"); an unknown error is shown as it is.
 */
export function attemptError(error: string | null): string {
  if (!error) return '';
  const notSent = /^invalid_url: (.*)$/s.exec(error);
  if (notSent) return `Not sent: ${notSent[1]}`;
  const words = Object.hasOwn(ATTEMPT_ERRORS, error) ? ATTEMPT_ERRORS[error] : undefined;
  if (!words) return error;
  // A system's code (ECONNREFUSED) is kept for searching; our own words (timeout) need no echo.
  return /^[A-Z][A-Z0-9_]+$/.test(error) ? `${words} (${error})` : words;
}

/** The columns of the transactions CSV, in order (amounts in kobo, as the API gives them). */
export const CSV_COLUMNS = [
  'reference',
  'created_at',
  'type',
  'category',
  'status',
  'amount',
  'fee',
  'currency',
  'balance_after',
  'narration',
  'counterparty_account_name',
  'counterparty_account_number',
  'counterparty_bank_code',
  'reason',
  'virtual_account_reference',
] as const;

/**
 * One field as RFC 4180 wants it: quoted when it holds a comma, a quote or a line break, and also a
 * semicolon or a tab, which spreadsheets of many locales split CSV on (`ADA;=1+1` would become a
 * cell starting `=`). Text that a spreadsheet would run as a formula (it starts with `=`, `+`, `-`,
 * `@`, a tab or a carriage return: a payer's name or narration is anyone's to choose) is prefixed
 * with `'`, as OWASP advises against CSV injection; numbers are left as they are.
 */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' && /^[=+\-@\t\r]/.test(value) ? `'${value}` : String(value);
  return /[",;\t\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Transactions as CSV text (CRLF line ends, header row first). */
export function transactionsCsv(rows: Record<string, unknown>[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const row of rows) {
    const counterparty = (row.counterparty ?? {}) as Record<string, unknown>;
    const flat: Record<string, unknown> = {
      ...row,
      counterparty_account_name: counterparty.account_name,
      counterparty_account_number: counterparty.account_number,
      counterparty_bank_code: counterparty.bank_code,
    };
    lines.push(CSV_COLUMNS.map((column) => csvField(flat[column])).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
