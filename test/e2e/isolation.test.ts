import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalGateway } from '#infra/local/gateway.ts';
import { config } from '#shared/config.ts';
import { API_PREFIX } from '#shared/definitions/routes.ts';
import { auditMerchant } from '#shared/ledger/audit.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { call, data, startTestGateway } from '#test/support/gateway.ts';
import { aMerchant, anAccount, anotherKey, fund } from '#test/support/merchants.ts';
import { nipSessionId, pay } from '#test/support/payments.ts';
import { merchantState } from '#test/support/state.ts';

/**
 * Isolation matrix (issue 7): merchant B owns one of everything (a validation session, beneficiaries,
 * transfers with a reversal, a virtual account with a credited payment, list cursors, a wallet).
 * Merchant A then calls every endpoint with every kind of B's identifiers. Nothing of B's may show,
 * resolve or move: 404 `not_found` for references, 422 for ids in bodies, A's lists hold only A's
 * items, and B's whole state (balance, ledger, records, sessions) is exactly as before.
 */

type Merchant = Awaited<ReturnType<typeof aMerchant>>;
type Response = Awaited<ReturnType<typeof call>>;

let gateway: LocalGateway;
let a: Merchant;
let b: Merchant;
/** A's keys: requests alternate between them, so each stays under the 100-per-minute limit. */
let aKeys: Record<string, string>[];
/** B's identifiers, by kind. */
let ids: {
  transfer: string;
  failedTransfer: string;
  reversal: string;
  payment: string;
  partnerSession: string;
  virtualAccount: string;
  virtualAccountNumber: string;
  beneficiary: string;
  otherBeneficiary: string;
  session: string;
  wallet: string;
  merchantId: string;
  transactionsCursor: string;
  beneficiariesCursor: string;
  event: string;
  endpoint: string;
};
let bBefore: Awaited<ReturnType<typeof merchantState>>;
const A_FUNDS = 500_000;
/** What A spent by its own legitimate actions (amount + fee of its transfers). */
let aSpent = 0;
let cases = 0;

const ref = () => `iso-${Math.random().toString(36).slice(2, 12)}`;
const paths = (bare: string) => [bare, `${API_PREFIX}${bare}`];

/** A request as merchant `m` (with A, alternating A's keys). */
function as(m: Merchant, method: string, path: string, body?: Record<string, unknown>): Promise<Response> {
  const headers = m === a ? (aKeys[cases % aKeys.length] as Record<string, string>) : m.headers;
  return call(gateway, method, path, { headers, ...(body ? { body } : {}) });
}

/**
 * B's identifiers that A has since made part of its own data, legitimately: a reference of B's that
 * A reused for its own transfer, B's wallet number that A paid into. A's records may show these.
 */
const adopted = new Set<string>();

/**
 * One case of the matrix: A's request, and the check that nothing of B's is in the answer, except
 * what A itself put in this request or adopted by an earlier one that succeeded.
 */
async function probe(method: string, path: string, body?: Record<string, unknown>): Promise<Response> {
  cases += 1;
  const response = await as(a, method, path, body);
  const sent = `${path} ${JSON.stringify(body ?? {})}`;
  const text = JSON.stringify(response.body);
  const secrets = [b.merchant.merchant_id, b.merchant.name, ...Object.values(ids)];
  const leaked = secrets.filter(
    (secret) => !sent.includes(secret) && !adopted.has(secret) && text.includes(secret),
  );
  expect(leaked, `${method} ${path}: B's identifiers in A's answer`).toEqual([]);
  expect(response.status, `${method} ${path}`).toBeLessThan(500);
  if (method === 'POST' && response.status < 300) {
    for (const secret of secrets) if (sent.includes(secret)) adopted.add(secret);
  }
  return response;
}

function expectError(response: Response, status: number, code: string, label: string) {
  expect({ status: response.status, code: response.body?.code }, label).toEqual({ status, code });
}

/** Waits (in a hook, where expect.poll is not available) until the consumer has credited `m`. */
async function waitForBalance(m: Merchant, balance: number) {
  const deadline = Date.now() + 15_000;
  while ((await getMerchant(m.merchant.merchant_id))?.balance !== balance) {
    if (Date.now() > deadline)
      throw new Error(`balance of ${m.merchant.merchant_id} never reached ${balance}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  gateway = await startTestGateway();
  [a, b] = await Promise.all([aMerchant(), aMerchant()]);
  aKeys = [a.headers, (await anotherKey(a.merchant.merchant_id)).headers];
  await fund(b.merchant.merchant_id, 1_000_000);
  // A is paid as a customer would pay it, so that it has an event of its own (redelivered below).
  expect((await pay(gateway, a.merchant.account_number, A_FUNDS)).status).toBe(200);
  await waitForBalance(a, A_FUNDS);

  // B: one of everything.
  const account = anAccount('058');
  const validated = await as(b, 'POST', '/validate-account', { account_number: account, bank_code: '058' });
  expect(validated.status).toBe(200);
  const saved = await as(b, 'POST', '/beneficiaries', { account_number: account, bank_code: '058' });
  const other = await as(b, 'POST', '/beneficiaries', { account_number: anAccount('044'), bank_code: '044' });
  expect([saved.status, other.status]).toEqual([201, 201]);
  const transfer = { reference: ref(), amount: 10_000, beneficiary_id: data(saved).id };
  expect(data(await as(b, 'POST', '/transfers', transfer)).status).toBe('success');
  const failedReference = ref();
  const failed = await as(b, 'POST', '/transfers', {
    reference: failedReference,
    amount: 5_000,
    account_number: anAccount('011', '77777'),
    bank_code: '011',
  });
  expect(data(failed).status).toBe('failed');
  const virtualAccount = await as(b, 'POST', '/virtual-accounts', { amount: 25_000, reference: ref() });
  expect(virtualAccount.status).toBe(201);
  const { reference: vaReference, account_number: vaNumber } = data<{
    reference: string;
    account_number: string;
  }>(virtualAccount);
  const partnerSession = nipSessionId();
  expect((await pay(gateway, vaNumber, 25_000, partnerSession)).status).toBe(200);
  await waitForBalance(b, 1_000_000 - 11_000 + 25_000);
  const endpoint = await as(b, 'POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/b-hooks' });
  expect(endpoint.status).toBe(201);
  const events = await as(b, 'GET', '/events?limit=1');
  const transactionsPage = await as(b, 'GET', '/transactions?limit=1');
  const beneficiariesPage = await as(b, 'GET', '/beneficiaries?limit=1');
  const cursorOf = (page: Response) =>
    String((page.body?.meta as { next_cursor?: string } | undefined)?.next_cursor);
  ids = {
    transfer: transfer.reference,
    failedTransfer: failedReference,
    reversal: `reversal:${failedReference}`,
    payment: `payment:${partnerSession}`,
    partnerSession,
    virtualAccount: vaReference,
    virtualAccountNumber: vaNumber,
    beneficiary: data(saved).id as string,
    otherBeneficiary: data(other).id as string,
    session: data(validated).session_id as string,
    wallet: b.merchant.account_number,
    merchantId: b.merchant.merchant_id,
    transactionsCursor: cursorOf(transactionsPage),
    beneficiariesCursor: cursorOf(beneficiariesPage),
    event: (data<{ id: string }[]>(events)[0]?.id ?? '') as string,
    endpoint: data(endpoint).id as string,
  };
  expect(ids.event).toMatch(/^evt_/);
  expect(ids.transactionsCursor).toMatch(/\S/);
  expect(ids.beneficiariesCursor).toMatch(/\S/);
  // B's reference works for B: the matrix below tests A, not a typo.
  expect((await as(b, 'GET', `/transactions/${ids.reversal}`)).status).toBe(200);
  expect((await as(b, 'GET', `/payments/${ids.virtualAccount}`)).status).toBe(200);
  bBefore = await merchantState(b.merchant.merchant_id);
}, 60_000);

afterAll(async () => {
  console.log(`isolation: ${cases} cases tried by merchant A against merchant B's identifiers, 0 leaks`);
  await gateway?.close();
});

describe("merchant A with merchant B's identifiers", () => {
  it('finds none of B’s events or webhook endpoints: 404 not_found on every route that takes their ids', async () => {
    for (const path of paths(`/events/${ids.event}`))
      expectError(await probe('GET', path), 404, 'not_found', path);
    for (const path of paths(`/events/${ids.event}/redeliver`))
      expectError(await probe('POST', path, {}), 404, 'not_found', path);
    for (const path of paths(`/webhook-endpoints/${ids.endpoint}`))
      expectError(await probe('DELETE', path), 404, 'not_found', path);
    for (const path of paths(`/webhook-endpoints/${ids.endpoint}/rotate-secret`))
      expectError(await probe('POST', path), 404, 'not_found', path);
    // A's own event, redelivered to B's endpoint by id: not one of A's endpoints.
    const own = data<{ id: string }[]>(await probe('GET', '/events?limit=1'))[0];
    expect(own?.id).toMatch(/^evt_/);
    expectError(
      await probe('POST', `/events/${own?.id}/redeliver`, { endpoint_id: ids.endpoint }),
      404,
      'not_found',
      'redeliver to B',
    );
    for (const list of ['/events', '/webhook-endpoints', '/virtual-accounts']) {
      const listed = await probe('GET', list);
      expect(listed.status, list).toBe(200);
    }
  });

  it('finds none of B’s references or ids as a transaction or a payment: 404 not_found', async () => {
    const references = Object.entries(ids).filter(([kind]) => !kind.endsWith('Cursor'));
    for (const [kind, id] of references) {
      for (const route of ['/transactions', '/payments']) {
        for (const path of paths(`${route}/${encodeURIComponent(id)}`)) {
          expectError(await probe('GET', path), 404, 'not_found', `${kind} ${path}`);
        }
      }
    }
  });

  it('cannot pay B’s beneficiary or use B’s validation session: 422 beneficiary_not_found / session_expired', async () => {
    const body = () => ({ reference: ref(), amount: 1_000 });
    for (const path of paths('/transfers')) {
      for (const id of [ids.beneficiary, ids.otherBeneficiary, ids.session]) {
        const response = await probe('POST', path, { ...body(), beneficiary_id: id });
        expectError(response, 422, 'beneficiary_not_found', `beneficiary_id ${id}`);
      }
      for (const id of [ids.session, ids.beneficiary]) {
        expectError(await probe('POST', path, { ...body(), session_id: id }), 422, 'session_expired', id);
      }
    }
    for (const path of paths('/beneficiaries')) {
      for (const id of [ids.session, ids.beneficiary]) {
        expectError(await probe('POST', path, { session_id: id }), 422, 'session_expired', id);
      }
    }
  });

  it('gets its own transfer, not B’s, when it reuses B’s reference: references are per merchant', async () => {
    const response = await probe('POST', '/transfers', {
      reference: ids.transfer,
      amount: 10_000,
      account_number: anAccount('058'),
      bank_code: '058',
    });
    expect(response.status).toBe(201);
    aSpent += 11_000;
    expect(data(response)).toMatchObject({ reference: ids.transfer, balance_after: A_FUNDS - aSpent });
    // The same for a virtual account: a new account of A's, not B's account or payments.
    const opened = await probe('POST', '/virtual-accounts', {
      amount: 25_000,
      reference: ids.virtualAccount,
    });
    expect(opened.status).toBe(201);
    expect(data(opened).account_number).not.toBe(ids.virtualAccountNumber);
    const status = await probe('GET', `/payments/${ids.virtualAccount}`);
    expect(data(status)).toMatchObject({ status: 'pending', amount_received: 0, payments: [] });
  });

  it('saves B’s bank account as a beneficiary of its own, with a new id', async () => {
    const beneficiary = bBefore.beneficiaries.find((item) => item.id === ids.beneficiary) as {
      account_number: string;
    };
    const saved = await probe('POST', '/beneficiaries', {
      account_number: beneficiary.account_number,
      bank_code: '058',
    });
    expect(saved.status).toBe(201);
    expect(data(saved).id).not.toBe(ids.beneficiary);
  });

  it('may send money to B’s wallet and virtual account numbers like to any account: A is debited, and B is paid exactly that', async () => {
    for (const [account_number, bank_code] of [
      [ids.wallet, config.partner.bankCode],
      [ids.virtualAccountNumber, config.partner.bankCode],
    ]) {
      const validated = await probe('POST', '/validate-account', { account_number, bank_code });
      expect(validated.status).toBe(200);
      const sent = await probe('POST', '/transfers', {
        reference: ref(),
        amount: 2_000,
        account_number,
        bank_code,
      });
      expect(sent.status).toBe(201);
      aSpent += 3_000;
    }
    // The sandbox's bank issued both numbers: each transfer lands there as a payment to B (README,
    // "Sandbox partner bank"), and nothing else of B's moves.
    const paidBefore = bBefore.merchant?.balance ?? 0;
    await expect
      .poll(async () => (await merchantState(b.merchant.merchant_id)).merchant?.balance, { timeout: 15_000 })
      .toBe(paidBefore + 4_000);
    const paid = await merchantState(b.merchant.merchant_id);
    const newEntries = paid.entries.slice(bBefore.entries.length);
    expect(paid.entries.slice(0, bBefore.entries.length)).toStrictEqual(bBefore.entries);
    expect(newEntries.map(({ category, amount }) => ({ category, amount }))).toEqual([
      { category: 'payment', amount: 2_000 },
      { category: 'payment', amount: 2_000 },
    ]);
    expect(paid.beneficiaries).toStrictEqual(bBefore.beneficiaries);
    expect(paid.sessions).toStrictEqual(bBefore.sessions);
    // From here on, B must stay exactly as it is now.
    bBefore = paid;
  });

  it('refuses B’s cursors in its own lists: a cursor is its merchant’s', async () => {
    const own = async () => {
      const state = await merchantState(a.merchant.merchant_id);
      return {
        references: new Set(state.transactions.map((item) => String(item.reference))),
        beneficiaries: new Set(state.beneficiaries.flatMap((item) => (item.id ? [String(item.id)] : []))),
      };
    };
    const mine = await own();
    const lists = [
      ['/transactions', 'references'],
      ['/beneficiaries', 'beneficiaries'],
    ] as const;
    for (const [list, kind] of lists) {
      for (const cursor of [ids.transactionsCursor, ids.beneficiariesCursor]) {
        for (const path of paths(list)) {
          for (const limit of [1, 100]) {
            const response = await probe(
              'GET',
              `${path}?limit=${limit}&cursor=${encodeURIComponent(cursor)}`,
            );
            // Never a place in A's own list (a leaked cursor would page A's history from it).
            expect([response.status, response.body?.code, mine[kind].size > 0]).toEqual([
              400,
              'validation_error',
              true,
            ]);
          }
        }
      }
    }
  });

  it('lists only its own transactions and beneficiaries, under every filter', async () => {
    const state = await merchantState(a.merchant.merchant_id);
    const mine: Record<string, Set<string>> = {
      '/transactions': new Set(state.transactions.map((item) => String(item.reference))),
      '/beneficiaries': new Set(state.beneficiaries.flatMap((item) => (item.id ? [String(item.id)] : []))),
    };
    const queries = ['', '?type=credit', '?type=debit', '?status=failed', '?status=success', '?limit=100'];
    for (const query of queries) {
      for (const list of ['/transactions', '/beneficiaries']) {
        if (list === '/beneficiaries' && query && !query.startsWith('?limit')) continue;
        let cursor: string | null = null;
        let pages = 0;
        do {
          const separator = query ? '&' : '?';
          const url: string = `${list}${query}${cursor ? `${separator}cursor=${cursor}` : ''}`;
          const page = await probe('GET', url);
          expect(page.status).toBe(200);
          for (const item of data<{ reference?: string; id?: string }[]>(page)) {
            expect(mine[list], url).toContain(item.reference ?? item.id);
          }
          const meta = page.body?.meta as { next_cursor: string | null };
          cursor = meta.next_cursor;
          pages += 1;
        } while (cursor && pages < 20);
      }
    }
  });

  it('cannot name B in a query, a header or a body, nor mix its key with B’s secret', async () => {
    const query = await probe('GET', `/transactions?merchant_id=${ids.merchantId}`);
    expectError(query, 400, 'validation_error', 'merchant_id in a list query');
    const balance = await probe('GET', `/balance?merchant_id=${ids.merchantId}`);
    expectError(balance, 400, 'validation_error', 'merchant_id in a query of a route that reads none');
    const smuggled = await probe('POST', '/transfers', {
      reference: ref(),
      amount: 1_000,
      account_number: anAccount('058'),
      bank_code: '058',
      merchant_id: ids.merchantId,
    });
    expectError(smuggled, 400, 'validation_error', 'merchant_id in a transfer body');
    cases += 1;
    const viaHeader = await call(gateway, 'GET', '/balance', {
      headers: { ...a.headers, 'X-Merchant-Id': ids.merchantId, 'X-Amzn-Merchant': ids.merchantId },
    });
    expect(data(viaHeader)).toMatchObject({ account_number: a.merchant.account_number });
    for (const headers of [
      { 'X-API-Key': a.apiKey, 'X-API-Secret': b.apiSecret },
      { 'X-API-Key': b.apiKey, 'X-API-Secret': a.apiSecret },
    ]) {
      cases += 1;
      const mixed = await call(gateway, 'GET', '/balance', { headers });
      expect(mixed.status).toBe(401);
      expect(mixed.body).toStrictEqual({ status: 'error', message: 'Invalid API credentials' });
    }
  });

  it('left B exactly as it was, and moved A only by its own transfers', async () => {
    expect(await merchantState(b.merchant.merchant_id)).toStrictEqual(bBefore);
    const balance = await probe('GET', '/balance');
    expect(data(balance)).toMatchObject({
      account_number: a.merchant.account_number,
      balance: A_FUNDS - aSpent,
    });
    for (const m of [a, b]) expect((await auditMerchant(m.merchant.merchant_id)).problems).toEqual([]);
    expect(cases).toBeGreaterThanOrEqual(90);
  });
});
