import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ANSWER_RESERVE_MS, withInvocationDeadline } from '#shared/deadline.ts';
import { PartnerUnavailable } from '#shared/errors.ts';
import { createPaystackPartner } from '#shared/partners/paystack.ts';
import {
  type PaystackStandIn,
  type PaystackStandInOptions,
  paystackBankId,
  startPaystackStandIn,
} from '#test/support/paystack-stand-in.ts';

/**
 * The bank a Paystack virtual account is issued at is what payers are told to send to: the adapter
 * places it by slug, by an id only with no slug and an agreeing name, or by name, and otherwise
 * answers 503 rather than guess. Against the stand-in, over HTTP.
 */
const started: PaystackStandIn[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((standIn) => standIn.close()));
});

async function paystackPartner(chargeBank?: PaystackStandInOptions['chargeBank']) {
  const standIn = await startPaystackStandIn({ chargeBank });
  started.push(standIn);
  return partnerOf(standIn);
}

function partnerOf(standIn: PaystackStandIn) {
  return partnerAt(standIn.url, { secretKey: standIn.secretKey });
}

/** The adapter against a Paystack at `baseUrl`. */
function partnerAt(
  baseUrl: string,
  {
    secretKey = 'sk_test_pages',
    timeoutMs = 2_000,
    now,
  }: { secretKey?: string; timeoutMs?: number; now?: () => number } = {},
) {
  return createPaystackPartner({
    baseUrl,
    secretKey: async () => secretKey,
    timeoutMs,
    now,
    webhookIps: [],
    emailDomain: 'customers.example.ng',
    dvaBank: 'wema-bank',
    memo: { get: async () => undefined, put: async () => undefined },
  });
}

async function openAt(chargeBank: PaystackStandInOptions['chargeBank']) {
  const partner = await paystackPartner(chargeBank);
  return partner.openVirtualAccount({
    merchant_id: 'mer_issuing',
    reference: `va-${Math.random().toString(36).slice(2, 10)}`,
    name: 'Ada Obi',
    amount: 25_000,
    expires_at: new Date(Date.now() + 30 * 60_000).toISOString(),
  });
}

describe('Paystack: the bank an account is issued at', () => {
  it("places a listed slug, and Paystack's own bank as Titan Paystack (100039), never Titan Trust Bank", async () => {
    expect((await openAt({ slug: 'wema-bank', name: 'Wema Bank', id: 99_999 })).bank_code).toBe('035');
    // The stand-in's default: create-dva.js's {"name":"Paystack-Titan","slug":"titan-paystack"}.
    expect((await openAt(undefined)).bank_code).toBe('100039');
    expect(
      (await openAt({ slug: 'titan-paystack', name: 'Paystack-Titan', id: paystackBankId('100039') }))
        .bank_code,
    ).toBe('100039');
  });

  it("finds Paystack's own bank in its /bank list by code, though the list spells it otherwise and gives no NIP code", async () => {
    // The stand-in lists it as published copies of Paystack's list do: "Titan Paystack", 100039.
    // Ours is "Paystack-Titan" (as Paystack's answers name it): neither NIP code nor name agree.
    const partner = await paystackPartner();
    await expect(partner.checkBank('100039')).resolves.toBeUndefined();
    await expect(partner.checkBank('102')).resolves.toBeUndefined();
  });

  it.each([
    // The published description: no cursor, no meta; pages asked for until one adds no bank.
    ['gives no meta (the published description)', { bankPagesWithoutMeta: 25 }, ['1', '2', '3', '4']],
    // Paystack's other lists (TransferListResponse): the last page says it is the last.
    ['gives page numbers (meta.page of meta.pageCount)', { bankPagesNumbered: 25 }, ['1', '2', '3']],
  ] as const)('reads every page of a /bank list that %s, by page number', async (_label, paging, asked) => {
    const numbered = await startPaystackStandIn(paging);
    started.push(numbered);
    const partner = partnerOf(numbered);
    // Zenith Bank (057) and Wema Bank (035) sit on the last of the stand-in's pages of 25.
    await expect(partner.checkBank('057')).resolves.toBeUndefined();
    await expect(partner.checkBank('035')).resolves.toBeUndefined();
    const pages = numbered.requests.filter((request) => request.path === '/bank');
    expect(pages.map((request) => request.query.page ?? '1')).toEqual(asked);
  });

  it("never takes another currency's bank of the same name for ours (a Ghanaian Access Bank listed first)", async () => {
    const server = createServer((request, response) => {
      const page = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('page') ?? '1');
      const data =
        page === 1
          ? [
              {
                id: 7,
                name: 'Access Bank',
                slug: 'access-bank-gh',
                code: '280100',
                currency: 'GHS',
                active: true,
              },
              { id: 1, name: 'Access Bank', slug: 'access-bank', code: '044', currency: 'NGN', active: true },
            ]
          : [];
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ status: true, message: 'Banks retrieved', data }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const asked: string[] = [];
    server.on('request', (request) => asked.push(request.url ?? ''));
    try {
      const partner = partnerAt(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      // The name enquiry goes to Paystack's 044, never the Ghanaian 280100 listed first.
      await partner.nameEnquiry('044', '0000014579').catch(() => undefined);
      const resolve = asked.find((url) => url.startsWith('/bank/resolve'));
      expect(new URL(resolve ?? '/', 'http://x').searchParams.get('bank_code')).toBe('044');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('finds banks Paystack names otherwise when its list gives no NIP code, and never a like-named other bank', async () => {
    // As Paystack's own samples spell them: /bank lists OPay as "Paycom" (999992), a recipient's
    // bank_name is "Kuda Bank" (50211). Other lenders of a like name are other banks: a Nova MFB is
    // not our Nova Bank (561), a Sparkle Bank or PSB not our Sparkle Microfinance Bank.
    const banks = [
      { id: 1, name: 'Kuda Bank', slug: 'kuda-bank', code: '50211' },
      { id: 2, name: 'Paycom', slug: 'paycom', code: '999992' },
      { id: 3, name: 'Access Bank (Diamond)', slug: 'access-bank-diamond', code: '063' },
      { id: 4, name: 'Access Bank', slug: 'access-bank', code: '044' },
      { id: 5, name: 'Sparkle Bank', slug: 'sparkle-bank', code: '51310' },
      { id: 6, name: 'Sparkle PSB', slug: 'sparkle-psb', code: '51311' },
      { id: 7, name: 'Moniepoint MFB', slug: 'moniepoint-mfb-ng', code: '50515' },
      { id: 8, name: 'Nova MFB', slug: 'nova-mfb', code: '50206' },
      { id: 9, name: 'Nova Merchant Bank', slug: 'nova-merchant-bank', code: '561' },
    ].map((bank) => ({ ...bank, active: true, currency: 'NGN' }));
    const asked: string[] = [];
    const server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      asked.push(url.pathname === '/bank/resolve' ? (url.searchParams.get('bank_code') ?? '') : '');
      const page = Number(url.searchParams.get('page') ?? '1');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        url.pathname === '/bank'
          ? JSON.stringify({ status: true, message: 'Banks retrieved', data: page === 1 ? banks : [] })
          : JSON.stringify({
              status: true,
              message: 'Account number resolved',
              data: { account_number: url.searchParams.get('account_number'), account_name: 'ADA OBI' },
            }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const partner = partnerAt(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const sentTo = async (ours: string) => {
        asked.length = 0;
        await partner.nameEnquiry(ours, '0000014579');
        return asked.filter(Boolean);
      };
      expect(await sentTo('090267')).toEqual(['50211']); // Kuda Microfinance Bank
      expect(await sentTo('100004')).toEqual(['999992']); // OPay
      expect(await sentTo('090405')).toEqual(['50515']); // Moniepoint Microfinance Bank
      expect(await sentTo('044')).toEqual(['044']); // never the Diamond bank's 063
      expect(await sentTo('561')).toEqual(['561']); // Nova Bank by its code, never Nova MFB
      // Sparkle Microfinance Bank is neither "Sparkle Bank" nor "Sparkle PSB".
      await expect(partner.checkBank('090325')).rejects.toMatchObject({ code: 'bank_not_supported' });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each([
    ['paged by number to meta.pageCount', true, ['1', '2', '3']],
    // The published description: no meta; the list ends at a page with no entry at all.
    ['with no meta (the published description)', false, ['1', '2', '3', '4']],
  ] as const)('reads a list %s, past a page that adds no usable bank', async (_label, withMeta, expected) => {
    // Page 2 of 3 holds only an inactive bank: the list goes on to page 3 all the same.
    const pages: Record<string, unknown>[][] = [
      [
        {
          id: 1,
          name: 'Access Bank',
          slug: 'access-bank',
          code: '044',
          nip_sort_code: '000014',
          active: true,
        },
      ],
      [{ id: 2, name: 'Closed Bank', slug: 'closed-bank', code: '999', active: false }],
      [
        {
          id: 3,
          name: 'Zenith Bank',
          slug: 'zenith-bank',
          code: '057',
          nip_sort_code: '000015',
          active: true,
        },
      ],
    ];
    const asked: string[] = [];
    const server = createServer((request, response) => {
      const page = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('page') ?? '1');
      asked.push(String(page));
      const meta = { total: 3, skipped: page - 1, perPage: 1, page, pageCount: pages.length };
      response.writeHead(200, { 'content-type': 'application/json' });
      const data = pages[page - 1] ?? [];
      response.end(
        JSON.stringify({ status: true, message: 'Banks retrieved', data, ...(withMeta ? { meta } : {}) }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const partner = partnerAt(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await expect(partner.checkBank('057')).resolves.toBeUndefined();
      await expect(partner.checkBank('999')).rejects.toThrow();
      expect(asked).toEqual(expected);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers 503, never a listed bank that shares its id, for a slug of no list (test mode: "Test Bank")', async () => {
    // pwt.js: {"slug":"test-bank","id":24}; here the id is Guaranty Trust Bank's in the /bank list.
    await expect(
      openAt({ slug: 'test-bank', name: 'Test Bank', id: paystackBankId('058') }),
    ).rejects.toBeInstanceOf(PartnerUnavailable);
  });

  it('takes an id without a slug only when the name agrees', async () => {
    expect((await openAt({ name: 'Wema Bank', id: paystackBankId('035') })).bank_code).toBe('035');
    // An id whose bank has another name: the name decides (Providus Bank, never Guaranty Trust Bank).
    expect((await openAt({ name: 'Providus Bank', id: paystackBankId('058') })).bank_code).toBe('101');
    await expect(openAt({ name: 'No Such Lender', id: paystackBankId('058') })).rejects.toBeInstanceOf(
      PartnerUnavailable,
    );
    // An id alone (no slug, no name) names no bank: numbers differ between Paystack's lists.
    await expect(openAt({ id: paystackBankId('058') })).rejects.toBeInstanceOf(PartnerUnavailable);
  });
});

describe('Paystack: the bank list, shared by the invocations waiting for it', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  /** A Paystack whose n-th `/bank` answer comes `answersAfterMs[n]` ms after it is asked (the last: every later one's). */
  async function bankListAnswering(answersAfterMs: number[]) {
    let asked = 0;
    const server = createServer((_request, response) => {
      const delay = answersAfterMs[Math.min(asked, answersAfterMs.length - 1)] ?? 0;
      asked++;
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' });
        const zenith = { id: 3, name: 'Zenith Bank', slug: 'zenith-bank', code: '057', active: true };
        const meta = { total: 1, skipped: 0, perPage: 100, page: 1, pageCount: 1 };
        response.end(JSON.stringify({ status: true, message: 'Banks retrieved', data: [zenith], meta }));
      }, delay).unref();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked: () => asked };
  }

  /** `checkBank('057')` in an invocation with `partnerMs` of partner time: its outcome, and when from `since`. */
  const checkWithin = (partner: ReturnType<typeof partnerAt>, partnerMs: number, since = Date.now()) =>
    withInvocationDeadline(ANSWER_RESERVE_MS + partnerMs, () => partner.checkBank('057')).then(
      () => ({ outcome: 'listed', afterMs: Date.now() - since }),
      (error: unknown) => ({
        outcome: error instanceof PartnerUnavailable ? 'unavailable' : String(error),
        afterMs: Date.now() - since,
      }),
    );

  it('is loaded for every caller still waiting when the one that started it runs out of time, and each waits no longer than its own time', async () => {
    const answersAfterMs = 2_000;
    const paystack = await bankListAnswering([answersAfterMs]);
    const partner = partnerAt(paystack.url, { timeoutMs: 5_000 });
    const started = Date.now();
    // The first starts the load with 0.6 s of partner time; the second joins with 5 s, the third
    // with 0.8 s. (The load was bounded by the first's time: all three were unavailable at 0.6 s.)
    const [first, second, third] = await Promise.all([
      checkWithin(partner, 600, started),
      checkWithin(partner, 5_000, started),
      checkWithin(partner, 800, started),
    ]);
    expect([first.outcome, second.outcome, third.outcome]).toEqual(['unavailable', 'listed', 'unavailable']);
    expect(first.afterMs).toBeLessThan(answersAfterMs);
    // Its own 0.8 s, to the clock's millisecond: a timer may fire a millisecond before Date.now
    // reads its time as passed (a CI run measured 799).
    expect(third.afterMs).toBeGreaterThanOrEqual(800 - 5);
    expect(third.afterMs).toBeLessThan(answersAfterMs);
    expect(second.afterMs).toBeGreaterThanOrEqual(answersAfterMs);
    expect(paystack.asked()).toBe(1);
    // The list is kept: an invocation with no partner time left has it without a call.
    await expect(
      withInvocationDeadline(ANSWER_RESERVE_MS, () => partner.checkBank('057')),
    ).resolves.toBeUndefined();
    expect(paystack.asked()).toBe(1);
  });

  it('starts no load in an invocation with no time left for a call', async () => {
    const paystack = await bankListAnswering([0]);
    const partner = partnerAt(paystack.url);
    await expect(checkWithin(partner, 0)).resolves.toMatchObject({ outcome: 'unavailable' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(paystack.asked()).toBe(0);
    await expect(checkWithin(partner, 2_000)).resolves.toMatchObject({ outcome: 'listed' });
    expect(paystack.asked()).toBe(1);
  });

  it('serves a list past its hour at once while the refresh runs', async () => {
    const clock = { now: Date.now() };
    const paystack = await bankListAnswering([0, 2_000]);
    const partner = partnerAt(paystack.url, { timeoutMs: 5_000, now: () => clock.now });
    await expect(checkWithin(partner, 5_000)).resolves.toMatchObject({ outcome: 'listed' });
    clock.now += 61 * 60_000;
    const stale = await checkWithin(partner, 5_000);
    expect(stale.outcome).toBe('listed');
    expect(stale.afterMs).toBeLessThan(1_000);
    await expect.poll(paystack.asked).toBe(2);
  });

  it('starts a new load rather than join one older than its own time (frozen with the Lambda that started it)', async () => {
    const clock = { now: Date.now() };
    // The first load is never answered; its calls are cut at 2 s, its own time is 6 s.
    const paystack = await bankListAnswering([60_000, 0]);
    const partner = partnerAt(paystack.url, { timeoutMs: 2_000, now: () => clock.now });
    await expect(checkWithin(partner, 600)).resolves.toMatchObject({ outcome: 'unavailable' });
    expect(paystack.asked()).toBe(1);
    clock.now += 6_001;
    await expect(checkWithin(partner, 2_000)).resolves.toMatchObject({ outcome: 'listed' });
    expect(paystack.asked()).toBe(2);
  });
});
