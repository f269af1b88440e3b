import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { sandboxAccountName } from '#infra/local/sandbox-partner.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, fund } from '#test/support/merchants.ts';

let gateway: LocalGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(() => gateway.close());

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
type Body = { body: Record<string, unknown> | null };
const nextCursor = (response: Body) => {
  const meta = response.body?.meta as { next_cursor: string | null } | undefined;
  return meta?.next_cursor;
};
const save = (m: Merchant, body: Record<string, unknown>) =>
  call(gateway, 'POST', '/api/v1/developer/beneficiaries', { body, headers: m.headers });

describe('POST /beneficiaries', () => {
  it('saves an account with the name from the partner, and the same account again returns the same beneficiary', async () => {
    const m = await aMerchant();
    const account = anAccount('058');
    const created = await save(m, { account_number: account, bank_code: '058', nickname: 'Supplier' });
    expect(created.status).toBe(201);
    expect(created.body).toStrictEqual({
      status: 'success',
      message: expect.any(String),
      data: {
        id: expect.stringMatching(/^ben_[0-9a-f]{28}$/),
        account_name: sandboxAccountName(account),
        account_number: account,
        bank: { code: '058', name: 'Guaranty Trust Bank' },
        nickname: 'Supplier',
        created_at: expect.any(String),
      },
    });
    const again = await save(m, { account_number: account, bank_code: '058' });
    expect(again.status).toBe(200);
    expect(data(again)).toEqual(data(created));
    // The same fields in the same order, saved or read back (as a client diffing answers sees them).
    const listed = await call(gateway, 'GET', '/api/v1/developer/beneficiaries', { headers: m.headers });
    const [first] = data<Array<Record<string, unknown>>>(listed);
    for (const answer of [data(again), first])
      expect(JSON.stringify(answer)).toBe(JSON.stringify(data(created)));
  });

  it('saves once under 10 concurrent saves of the same account', async () => {
    const m = await aMerchant();
    const account = anAccount('044');
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => save(m, { account_number: account, bank_code: '044' })),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(new Set(responses.map((r) => data(r).id)).size).toBe(1);
  });

  it("saves from the merchant's own validation session, never another merchant's", async () => {
    const m = await aMerchant();
    const other = await aMerchant();
    const account = anAccount('057');
    const validated = await call(gateway, 'POST', '/validate-account', {
      body: { account_number: account, bank_code: '057' },
      headers: m.headers,
    });
    const sessionId = data(validated).session_id;
    const saved = await save(m, { session_id: sessionId });
    expect(saved.status).toBe(201);
    expect(data(saved)).toMatchObject({
      account_number: account,
      account_name: sandboxAccountName(account),
      nickname: null,
    });
    const stolen = await save(other, { session_id: sessionId });
    expect(stolen.status).toBe(422);
    expect(stolen.body).toMatchObject({ code: 'session_expired' });
  });

  it('never takes the account name from the client', async () => {
    const m = await aMerchant();
    const response = await save(m, {
      account_number: anAccount('058'),
      bank_code: '058',
      account_name: 'Not Me',
    });
    expect(response.status).toBe(400);
    expect(response.body?.errors).toEqual([{ field: 'account_name', message: 'Unknown field' }]);
  });

  it.each([
    ['a nickname of 51 characters', { nickname: 'n'.repeat(51) }, 400, 'validation_error'],
    ['no account at all', { account_number: undefined, bank_code: undefined }, 400, 'validation_error'],
    ['an account number without bank', { bank_code: undefined }, 400, 'validation_error'],
    ['an unknown bank', { bank_code: '999' }, 400, 'unknown_bank'],
    [
      'an account the bank does not know',
      { account_number: anAccount('058', '99999') },
      422,
      'account_not_found',
    ],
    [
      'an unknown session',
      { account_number: undefined, bank_code: undefined, session_id: 'ses_nope' },
      422,
      'session_expired',
    ],
  ])('answers %s with %i %s', async (_label, change, status, code) => {
    const m = await aMerchant();
    const response = await save(m, { account_number: anAccount('058'), bank_code: '058', ...change });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ status: 'error', code });
  });
});

describe('GET /beneficiaries', () => {
  it('lists only the merchant’s own, newest first, page by page', async () => {
    const m = await aMerchant();
    const other = await aMerchant();
    await save(other, { account_number: anAccount('058'), bank_code: '058' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(data(await save(m, { account_number: anAccount('058'), bank_code: '058' })).id as string);

    const first = await call(gateway, 'GET', '/beneficiaries?limit=2', { headers: m.headers });
    expect(first.status).toBe(200);
    expect(data<{ id: string }[]>(first).map((b) => b.id)).toEqual([ids[2], ids[1]]);
    const cursor = nextCursor(first);
    expect(cursor).toEqual(expect.any(String));
    const second = await call(gateway, 'GET', `/beneficiaries?limit=2&cursor=${cursor}`, {
      headers: m.headers,
    });
    expect(data<{ id: string }[]>(second).map((b) => b.id)).toEqual([ids[0]]);
    expect(nextCursor(second)).toBeNull();
    const all = await call(gateway, 'GET', '/beneficiaries', { headers: m.headers });
    expect(data<unknown[]>(all)).toHaveLength(3);
  });

  it.each([
    'limit=0',
    'limit=101',
    'limit=abc',
    'limit=1.5',
    'cursor=%%%',
    'cursor=eyJzayI6IngifQ',
    'page=2',
  ])('answers 400 for ?%s', async (query) => {
    const m = await aMerchant();
    const response = await call(gateway, 'GET', `/beneficiaries?${query}`, { headers: m.headers });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'validation_error' });
  });
});

describe('transaction history', () => {
  async function merchantWithHistory() {
    const m = await aMerchant();
    await fund(m.merchant.merchant_id, 100_000);
    const references = [];
    for (const [i, prefix] of ['1', '77777', '1'].entries()) {
      const reference = `hist-${i}-${Math.random().toString(36).slice(2, 8)}`;
      references.push(reference);
      await call(gateway, 'POST', '/transfers', {
        body: { reference, amount: 1_000, account_number: anAccount('058', prefix), bank_code: '058' },
        headers: m.headers,
      });
    }
    return { m, references };
  }

  it('lists every transaction newest first, the failed transfer with its reversal', async () => {
    const { m, references } = await merchantWithHistory();
    const response = await call(gateway, 'GET', '/api/v1/developer/transactions', { headers: m.headers });
    expect(response.status).toBe(200);
    const items = data<{ reference: string; status: string; type: string; created_at: string }[]>(response);
    // (The test's funding credit is a bare ledger entry: payments get their records with Money in.)
    expect(items.map((t) => t.reference)).toEqual([
      references[2],
      `reversal:${references[1]}`,
      references[1],
      references[0],
    ]);
    const times = items.map((t) => t.created_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(nextCursor(response)).toBeNull();
  });

  it('filters by type, status and date range, and pages with a cursor', async () => {
    const { m, references } = await merchantWithHistory();
    const get = async (query: string) =>
      data<{ reference: string }[]>(
        await call(gateway, 'GET', `/transactions?${query}`, { headers: m.headers }),
      );
    expect((await get('type=debit')).map((t) => t.reference)).toEqual([
      references[2],
      references[1],
      references[0],
    ]);
    expect((await get('type=credit')).map((t) => t.reference)).toEqual([`reversal:${references[1]}`]);
    expect((await get('status=failed')).map((t) => t.reference)).toEqual([references[1]]);
    expect((await get('type=debit&status=success')).map((t) => t.reference)).toEqual([
      references[2],
      references[0],
    ]);
    const newest = await get('limit=1');
    const today = (newest[0] as unknown as { created_at: string }).created_at.slice(0, 10);
    expect((await get(`from=${today}&to=${today}`)).length).toBeGreaterThanOrEqual(1);
    expect(await get('to=2000-01-01')).toHaveLength(0);
    expect(await get(`from=${new Date(Date.now() + 3_600_000).toISOString()}`)).toHaveLength(0);
    // The far ends of the calendar, each bound alone (a `from` in 9999 was a 500).
    expect(await get('from=9999-12-31')).toHaveLength(0);
    expect(await get('from=9999-12-31T23:59:59.999Z')).toHaveLength(0);
    expect((await get('from=0001-01-01')).length).toBeGreaterThanOrEqual(4);
    expect((await get('to=9999-12-31')).length).toBeGreaterThanOrEqual(4);
    // An offset that carries the time past the year 9999 or before 0000 (compared as text, the
    // year +010000 sorted before every other).
    expect((await get('to=9999-12-31T23:59:59-23:59')).length).toBeGreaterThanOrEqual(4);
    expect((await get('from=0000-01-01T00:00:00%2B23:59')).length).toBeGreaterThanOrEqual(4);
    expect(await get('from=9999-12-31T23:59:59-23:59')).toHaveLength(0);
    expect(await get('to=0000-01-01T00:00:00%2B23:59')).toHaveLength(0);

    const pageOne = await call(gateway, 'GET', '/transactions?type=debit&limit=2', { headers: m.headers });
    expect(data<unknown[]>(pageOne)).toHaveLength(2);
    const pageTwo = await call(
      gateway,
      'GET',
      `/transactions?type=debit&limit=2&cursor=${nextCursor(pageOne)}`,
      { headers: m.headers },
    );
    expect(data<{ reference: string }[]>(pageTwo).map((t) => t.reference)).toEqual([references[0]]);
    expect(nextCursor(pageTwo)).toBeNull();
  });

  it('keeps a cursor when the dates change: the page after its place, within the dates (was a 500)', async () => {
    const { m, references } = await merchantWithHistory();
    const page = (query: string) => call(gateway, 'GET', `/transactions?${query}`, { headers: m.headers });
    const listed = data<{ reference: string; created_at: string }[]>(await page('type=debit'));
    const timeOf = (reference?: string) => listed.find((t) => t.reference === reference)?.created_at ?? '';
    const first = await page('type=debit&limit=1');
    expect(data<{ reference: string }[]>(first).map((t) => t.reference)).toEqual([references[2]]);
    const cursor = nextCursor(first);
    const after = async (query: string) => {
      const answer = await page(`type=debit&${query}&cursor=${cursor}`);
      expect(answer.status, query).toBe(200);
      return data<{ reference: string }[]>(answer).map((t) => t.reference);
    };
    // Its place is within the dates: the page after it.
    expect(await after(`from=${timeOf(references[0])}`)).toEqual([references[1], references[0]]);
    // Newer than `to`: the page starts at the newest within the dates.
    expect(await after(`to=${timeOf(references[1])}`)).toEqual([references[1], references[0]]);
    expect(await after(`from=${timeOf(references[0])}&to=${timeOf(references[0])}`)).toEqual([references[0]]);
    // Older than `from`: nothing is after it.
    const later = new Date(Date.parse(timeOf(references[2])) + 1).toISOString();
    expect(await after(`from=${later}`)).toEqual([]);
  });

  it.each([
    'type=refund',
    'status=done',
    'from=yesterday',
    'to=2026-13-01',
    'from=2026-02-02&to=2026-02-01',
    'limit=500',
    'sort=asc',
    // A cursor of the right keys made by hand: {"created_at":"x","reference":"a"}.
    'cursor=eyJjcmVhdGVkX2F0IjoieCIsInJlZmVyZW5jZSI6ImEifQ',
  ])('answers 400 for ?%s', async (query) => {
    const m = await aMerchant();
    const response = await call(gateway, 'GET', `/transactions?${query}`, { headers: m.headers });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'validation_error' });
  });

  it("shows one transaction by reference, and another merchant's reference as 404 not_found", async () => {
    const { m, references } = await merchantWithHistory();
    const other = await aMerchant();
    const own = await call(gateway, 'GET', `/transactions/${references[0]}`, { headers: m.headers });
    expect(own.status).toBe(200);
    expect(data(own)).toMatchObject({
      reference: references[0],
      type: 'debit',
      category: 'transfer',
      status: 'success',
    });
    // A reversal's reference has a `:`; sent percent-encoded it names the same transaction.
    const reversal = `reversal:${references[1]}`;
    for (const path of [`/transactions/${encodeURIComponent(reversal)}`, `/transactions/${reversal}`]) {
      const encoded = await call(gateway, 'GET', `/api/v1/developer${path}`, { headers: m.headers });
      expect(encoded.status, path).toBe(200);
      expect(data(encoded)).toMatchObject({ reference: reversal, category: 'reversal', type: 'credit' });
    }
    for (const reference of [references[0], `reversal:${references[1]}`, 'nope']) {
      const foreign = await call(gateway, 'GET', `/api/v1/developer/transactions/${reference}`, {
        headers: other.headers,
      });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ status: 'error', code: 'not_found' });
    }
  });

  it("never shows one merchant's transactions or beneficiaries to another, cursor or not", async () => {
    const { m } = await merchantWithHistory();
    const other = await aMerchant();
    const page = await call(gateway, 'GET', '/transactions?limit=1', { headers: m.headers });
    const theirs = await call(gateway, 'GET', `/transactions?cursor=${nextCursor(page)}`, {
      headers: other.headers,
    });
    // Another merchant's cursor is no place in this merchant's list: refused, never paged from.
    expect([theirs.status, theirs.body?.code]).toEqual([400, 'validation_error']);
    expect(data<unknown[]>(await call(gateway, 'GET', '/transactions', { headers: other.headers }))).toEqual(
      [],
    );
    expect(data<unknown[]>(await call(gateway, 'GET', '/beneficiaries', { headers: other.headers }))).toEqual(
      [],
    );
  });
});
