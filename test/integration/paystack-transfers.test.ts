import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_RESERVE_MS, withInvocationDeadline } from '#shared/deadline.ts';
import { PartnerAnswerUnreadable, PartnerUnavailable, TransferNotSent } from '#shared/errors.ts';
import type { PartnerMemo } from '#shared/partners/memo.ts';
import { EARLIER_SENDS_OVER_MS, SEND_START_WITHIN_MS, type TransferOrder } from '#shared/partners/partner.ts';
import { createPaystackPartner } from '#shared/partners/paystack.ts';
import {
  PAYSTACK_ACCOUNT_PREFIXES,
  type PaystackStandIn,
  standInAccountNumber,
  startPaystackStandIn,
} from '#test/support/paystack-stand-in.ts';

/**
 * The Paystack adapter's transfers where Paystack's answers are lost, unpublished or stale: a
 * refusal ends a transfer `failed` only when Paystack has no transfer under its reference, and a
 * recipient code Paystack no longer knows is made again. Against the stand-in, over HTTP.
 */
const BANK = '058';
const SETTLE_MS = 150;
const TIMEOUT_MS = 300;

let standIn: PaystackStandIn;
/** A second Paystack integration (another secret key), answering a reused reference unpublished ways. */
let other: PaystackStandIn;

beforeAll(async () => {
  [standIn, other] = await Promise.all([
    startPaystackStandIn({
      // Longer than the adapter's timeout: the lost answer's transfer is still pending at the resend.
      settleAfterMs: TIMEOUT_MS * 3,
      hangMs: 2_000,
      // Not the words the adapter's duplicate check knows: only the verify call can tell.
      reusedReferenceAnswer: { status: 400, message: 'Transfer could not be processed at this time' },
    }),
    startPaystackStandIn({
      settleAfterMs: SETTLE_MS,
      secretKey: 'sk_live_0000000000000000000000000000000000000001',
      reusedReferenceAnswer: { status: 400, message: 'Transfer could not be processed' },
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([standIn.close(), other.close()]);
});

function memoMap(): PartnerMemo & { entries: Map<string, string> } {
  const entries = new Map<string, string>();
  return { entries, get: async (k) => entries.get(k), put: async (k, v) => void entries.set(k, v) };
}

function adapter(
  at: PaystackStandIn,
  memo: PartnerMemo = memoMap(),
  secretKey: () => Promise<string> = async () => at.secretKey,
) {
  return createPaystackPartner({
    baseUrl: at.url,
    secretKey,
    timeoutMs: TIMEOUT_MS,
    webhookIps: [],
    emailDomain: 'customers.example.ng',
    dvaBank: 'wema-bank',
    memo,
  });
}

let serial = 0;
function order(prefix: string, label: string): TransferOrder {
  serial += 1;
  return {
    reference: `np_${label}_${Date.now().toString(36)}_${serial}`.padEnd(16, '0'),
    amount: 5_000,
    bank_code: BANK,
    account_number: standInAccountNumber(prefix, BANK, serial),
    account_name: 'PAYSTACK PAYEE',
    narration: null,
    countedAt: Date.now(),
  };
}
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Paystack transfers whose answer is lost', () => {
  it('never fails a resend Paystack refuses in words the adapter does not know: it asks verify', async () => {
    const partner = adapter(standIn);
    const lost = order(PAYSTACK_ACCOUNT_PREFIXES.answerLost, 'lost');
    // The first answer never comes: the transfer exists at Paystack, the adapter cannot know it.
    await expect(partner.sendTransfer(lost)).rejects.toBeInstanceOf(PartnerUnavailable);
    expect(standIn.transfer(lost.reference)?.status).toBe('pending');

    // The resend is refused (not a word of "duplicate"): the transfer's real state wins.
    expect(await partner.sendTransfer(lost)).toEqual({ status: 'pending' });
    await wait(TIMEOUT_MS * 4);
    expect(await partner.sendTransfer(lost)).toEqual({ status: 'success', amount: 5_000 });
    // One transfer at Paystack, however often it was sent.
    expect(standIn.transfer(lost.reference)).toMatchObject({ status: 'success', amount: 5_000 });
  });

  it('leaves a refused resend pending while Paystack does not show the transfer: its first send may still be in the making', async () => {
    const partner = adapter(standIn);
    const slow = order(PAYSTACK_ACCOUNT_PREFIXES.slowToCreate, 'slow');
    // The first send's answer is lost while Paystack is still making the transfer.
    await expect(partner.sendTransfer(slow)).rejects.toBeInstanceOf(PartnerUnavailable);
    // The resend: verify answers 404, and the reference is refused in words the adapter does not know.
    expect(await partner.sendTransfer({ ...slow, resend: true })).toEqual({ status: 'pending' });
    expect(standIn.transfer(slow.reference)).toBeUndefined();
    expect(
      standIn.requests.some(
        (r) => r.method === 'GET' && r.path === `/transfer/verify/${slow.reference}` && r.status === 404,
      ),
    ).toBe(true);
    // Then Paystack makes it and pays it: a "failed" (and its refund) would have paid it twice.
    await expect
      .poll(() => partner.queryTransfer(slow.reference), { timeout: 10_000, interval: 200 })
      .toEqual({ status: 'success', amount: 5_000 });
  });

  it('ends a refused resend failed once its earlier sends are long over and Paystack shows no transfer', async () => {
    const partner = adapter(standIn);
    const refusedAgain = order(PAYSTACK_ACCOUNT_PREFIXES.insufficientBalance, 'refusedagain');
    // The last hand-over before it a minute ago: its send may still be in the making, pending.
    expect(
      await partner.sendTransfer({ ...refusedAgain, resend: true, lastHandOverAt: Date.now() - 60_000 }),
    ).toEqual({ status: 'pending' });
    // Counted longer ago than any send or lag of Paystack's records: the refusal is final.
    expect(
      await partner.sendTransfer({
        ...refusedAgain,
        resend: true,
        lastHandOverAt: Date.now() - EARLIER_SENDS_OVER_MS - 1_000,
      }),
    ).toEqual({ status: 'failed', reason: 'Your balance is not enough to fulfil this request' });
    expect(standIn.transfer(refusedAgain.reference)).toBeUndefined();
  });

  it('never starts a send more than a minute after its hand-over was counted: not sent, never a late POST', async () => {
    const partner = adapter(standIn);
    const stalled = order(PAYSTACK_ACCOUNT_PREFIXES.staysPending, 'stalled');
    const posts = () =>
      standIn.requests.filter(
        (r) =>
          r.method === 'POST' &&
          r.path === '/transfer' &&
          (r.body as { reference?: string }).reference === stalled.reference,
      ).length;
    // Counted over a minute ago (the send stalled before its POST): a resend 15 minutes on could
    // otherwise meet it, and verify would not yet show what this late POST makes.
    await expect(
      partner.sendTransfer({ ...stalled, countedAt: Date.now() - SEND_START_WITHIN_MS - 1_000 }),
    ).rejects.toBeInstanceOf(TransferNotSent);
    expect(posts()).toBe(0);
    expect(await partner.sendTransfer({ ...stalled, countedAt: Date.now() })).toEqual({ status: 'pending' });
    expect(posts()).toBe(1);
  });

  it('ends a refusal failed, with its message, when Paystack has no transfer under the reference', async () => {
    const partner = adapter(standIn);
    const refused = order(PAYSTACK_ACCOUNT_PREFIXES.insufficientBalance, 'refused');
    expect(await partner.sendTransfer(refused)).toEqual({
      status: 'failed',
      reason: 'Your balance is not enough to fulfil this request',
    });
    expect(standIn.transfer(refused.reference)).toBeUndefined();
    // It was asked: GET /transfer/verify answered 404 before the transfer was failed.
    expect(
      standIn.requests.some(
        (r) => r.method === 'GET' && r.path === `/transfer/verify/${refused.reference}` && r.status === 404,
      ),
    ).toBe(true);
  });
});

describe('Paystack transfers throttled by Paystack', () => {
  it('never fail on a 429: the transfer stays pending (PartnerUnavailable), to be sent again', async () => {
    // In front of the stand-in: POST /transfer answers 429 (Paystack's rate limit), the rest passes.
    const throttling = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      if (request.method === 'POST' && request.url === '/transfer') {
        response.writeHead(429, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ status: false, message: 'Too many requests, try again shortly' }));
        return;
      }
      const passed = await fetch(`${standIn.url}${request.url}`, {
        method: request.method,
        headers: { authorization: request.headers.authorization ?? '', 'content-type': 'application/json' },
        body: request.method === 'GET' ? undefined : Buffer.concat(chunks),
      });
      response.writeHead(passed.status, { 'content-type': 'application/json' });
      response.end(await passed.text());
    });
    await new Promise<void>((resolve) => throttling.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = throttling.address() as AddressInfo;
      const partner = adapter({ ...standIn, url: `http://127.0.0.1:${port}` } as PaystackStandIn);
      const throttled = order(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, 'throttled');
      await expect(partner.sendTransfer(throttled)).rejects.toBeInstanceOf(PartnerUnavailable);
      expect(standIn.transfer(throttled.reference)).toBeUndefined();
    } finally {
      await new Promise((resolve) => throttling.close(resolve));
    }
  });
});

describe('Paystack answers about a transfer that do not read exactly', () => {
  /** In front of the stand-in: `patch` rewrites the JSON of the answers it matches, the rest passes. */
  let patch: (method: string, path: string, body: Json) => Json | undefined = () => undefined;
  let proxy: ReturnType<typeof createServer>;
  let partner: ReturnType<typeof adapter>;
  type Json = Record<string, unknown>;
  beforeAll(async () => {
    proxy = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const passed = await fetch(`${standIn.url}${request.url}`, {
        method: request.method,
        headers: { authorization: request.headers.authorization ?? '', 'content-type': 'application/json' },
        body: request.method === 'GET' ? undefined : Buffer.concat(chunks),
      });
      const text = await passed.text();
      let body: Json | undefined;
      try {
        body = patch(request.method ?? '', request.url ?? '', JSON.parse(text) as Json);
      } catch {}
      response.writeHead(body?.httpStatus ? Number(body.httpStatus) : passed.status, {
        'content-type': 'application/json',
      });
      const { httpStatus: _status, ...sent } = body ?? {};
      response.end(body ? JSON.stringify(sent) : text);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as AddressInfo;
    partner = adapter({ ...standIn, url: `http://127.0.0.1:${port}` } as PaystackStandIn);
  });
  afterAll(() => new Promise((resolve) => proxy.close(resolve)));

  const dataPatched =
    (matches: (method: string, path: string) => boolean, change: (data: Json, body: Json) => Json) =>
    (method: string, path: string, body: Json) =>
      matches(method, path) ? change({ ...(body.data as Json) }, body) : undefined;
  const verifying = (method: string, path: string) =>
    method === 'GET' && path.startsWith('/transfer/verify/');

  it('settles nothing from a verify answer about another reference, in another currency, or with an unreadable amount', async () => {
    const paid = order(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, 'verified');
    patch = () => undefined;
    expect(await partner.sendTransfer(paid)).toEqual({ status: 'pending' });
    await expect
      .poll(() => partner.queryTransfer(paid.reference), { timeout: 10_000, interval: 200 })
      .toEqual({ status: 'success', amount: 5_000 });
    for (const [label, change] of [
      ['another reference', (data: Json) => ({ data: { ...data, reference: `${paid.reference}x` } })],
      ['a reference of another type', (data: Json) => ({ data: { ...data, reference: 7 } })],
      ['a fraction of a kobo', (data: Json) => ({ data: { ...data, amount: 1.5 } })],
      ['an amount in words', (data: Json) => ({ data: { ...data, amount: '5,000.00' } })],
      ['dollars', (data: Json) => ({ data: { ...data, currency: 'USD' } })],
      ['a currency of another type', (data: Json) => ({ data: { ...data, currency: ['NGN'] } })],
      ['"status": false', (data: Json) => ({ status: false, message: 'Transfer not found', data })],
    ] as const) {
      for (const status of ['success', 'failed', 'reversed']) {
        patch = dataPatched(verifying, (data) => change({ ...data, status }));
        await expect(partner.queryTransfer(paid.reference), `${label} ${status}`).rejects.toBeInstanceOf(
          PartnerAnswerUnreadable,
        );
      }
    }
    // Given as digits, or not at all, an amount is as before.
    patch = dataPatched(verifying, (data) => ({ data: { ...data, amount: '5000' } }));
    expect(await partner.queryTransfer(paid.reference)).toEqual({ status: 'success', amount: 5_000 });
    // Naira in lower case is naira (the description types `currency` as a free string).
    patch = dataPatched(verifying, (data) => ({ data: { ...data, currency: 'ngn' } }));
    expect(await partner.queryTransfer(paid.reference)).toEqual({ status: 'success', amount: 5_000 });
    patch = dataPatched(verifying, ({ amount: _a, currency: _c, reference: _r, ...data }) => ({ data }));
    expect(await partner.queryTransfer(paid.reference)).toEqual({ status: 'success' });
  });

  it("reads each of Paystack's transfer status words on verify: rejected, abandoned and blocked are failed", async () => {
    const paid = order(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, 'words');
    patch = () => undefined;
    expect(await partner.sendTransfer(paid)).toEqual({ status: 'pending' });
    for (const [word, status] of [
      ['rejected', 'failed'],
      ['abandoned', 'failed'],
      ['blocked', 'failed'],
      ['failed', 'failed'],
      ['reversed', 'reversed'],
      ['success', 'success'],
      ['received', 'pending'],
      ['queued', 'pending'],
      ['otp', 'pending'],
    ] as const) {
      patch = dataPatched(verifying, (data) => ({ data: { ...data, status: word } }));
      expect((await partner.queryTransfer(paid.reference))?.status, word).toBe(status);
    }
    patch = () => undefined;
  });

  it('neither pays nor fails a refused send whose confirming verify answers about another transfer', async () => {
    const refused = order(PAYSTACK_ACCOUNT_PREFIXES.insufficientBalance, 'confirmedby');
    // Paystack has no transfer under the reference; the verify answer is another transfer's success.
    patch = (method, path) =>
      verifying(method, path)
        ? {
            httpStatus: 200,
            status: true,
            message: 'Transfer retrieved',
            data: { status: 'success', amount: 5_000, currency: 'NGN', reference: 'np_someone_else_000000' },
          }
        : undefined;
    await expect(partner.sendTransfer(refused)).rejects.toBeInstanceOf(PartnerUnavailable);
    expect(standIn.transfer(refused.reference)).toBeUndefined();
    // Answered truly, the refusal is final as before.
    patch = () => undefined;
    expect(await partner.sendTransfer({ ...refused, resend: true, lastHandOverAt: 0 })).toEqual({
      status: 'failed',
      reason: 'Your balance is not enough to fulfil this request',
    });
  });

  it('pays no recipient whose answer does not show the account asked for, remembers none, and ends a first send failed', async () => {
    const memo = memoMap();
    const { port } = proxy.address() as AddressInfo;
    const remembering = adapter({ ...standIn, url: `http://127.0.0.1:${port}` } as PaystackStandIn, memo);
    const recipientAnswer = (method: string, path: string) =>
      method === 'POST' && path === '/transferrecipient';
    for (const change of [
      ({ details: _d, ...data }: Json) => ({ data }),
      (data: Json) => ({ data: { ...data, details: { ...(data.details as Json), account_number: null } } }),
      (data: Json) => ({ data: { ...data, details: { ...(data.details as Json), bank_code: 58 } } }),
      (data: Json) => ({
        data: { ...data, details: { ...(data.details as Json), account_number: '0000000000' } },
      }),
    ]) {
      const unshown = order(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, 'unshown');
      patch = dataPatched(recipientAnswer, change);
      // Every send would get the same answer, and nothing was sent under the reference: failed (refunded).
      expect(await remembering.sendTransfer(unshown)).toEqual({
        status: 'failed',
        reason: 'The banking partner could not confirm the recipient account',
      });
      expect(standIn.transfer(unshown.reference)).toBeUndefined();
      expect(memo.entries.size).toBe(0);
      // A resend while an earlier send may still be in the making stays pending, never failed.
      expect(
        await remembering.sendTransfer({ ...unshown, resend: true, lastHandOverAt: Date.now() - 1_000 }),
      ).toEqual({ status: 'pending' });
      expect(standIn.transfer(unshown.reference)).toBeUndefined();
    }
    patch = () => undefined;
    const shown = order(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, 'shown');
    expect(await remembering.sendTransfer(shown)).toEqual({ status: 'pending' });
    expect(memo.entries.size).toBe(1);
  });

  it('ends failed a first send whose remembered recipient Paystack refused and whose new one shows another account', async () => {
    const memo = memoMap();
    const { port } = proxy.address() as AddressInfo;
    const remembering = adapter({ ...standIn, url: `http://127.0.0.1:${port}` } as PaystackStandIn, memo);
    patch = () => undefined;
    const first = order(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, 'fresh1');
    expect(await remembering.sendTransfer(first)).toEqual({ status: 'pending' });
    expect(memo.entries.size).toBe(1);
    // Paystack forgets the remembered code: POST /transfer under the reference is refused
    // (invalid_transfer_recipient), the recipient is made again, and comes back for another bank.
    standIn.forgetRecipients();
    patch = dataPatched(
      (method, path) => method === 'POST' && path === '/transferrecipient',
      (data) => ({ data: { ...data, details: { ...(data.details as Json), bank_code: '044' } } }),
    );
    const second = {
      ...order(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, 'fresh2'),
      account_number: first.account_number,
    };
    expect(await remembering.sendTransfer(second)).toEqual({
      status: 'failed',
      reason: 'The banking partner could not confirm the recipient account',
    });
    // The refused POST /transfer made nothing, and verify shows nothing: the refund meets no payment.
    expect(standIn.transfer(second.reference)).toBeUndefined();
    patch = () => undefined;
  });

  it('names no one from a name enquiry answered about another account or saying it failed', async () => {
    const asked = standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, BANK, 9_001);
    const resolving = (method: string, path: string) => method === 'GET' && path.startsWith('/bank/resolve');
    for (const change of [
      (data: Json) => ({ data: { ...data, account_number: '0000000000', account_name: 'SOMEONE ELSE' } }),
      (data: Json) => ({ status: false, message: 'Could not resolve', data: { ...data, account_name: 'X' } }),
    ]) {
      patch = dataPatched(resolving, change);
      await expect(partner.nameEnquiry(BANK, asked)).rejects.toBeInstanceOf(PartnerUnavailable);
    }
    patch = dataPatched(resolving, ({ account_number: _a, ...data }) => ({ data }));
    expect(await partner.nameEnquiry(BANK, asked)).toEqual(expect.any(String));
    // The description types the number asked for as an integer: echoed without its leading zeros,
    // or as a number, it is the same account.
    const leadingZero = standInAccountNumber('01234', BANK, 9_002);
    expect(leadingZero.startsWith('0')).toBe(true);
    for (const echoed of [leadingZero.replace(/^0+/, ''), Number(leadingZero)]) {
      patch = dataPatched(resolving, (data) => ({ data: { ...data, account_number: echoed } }));
      expect(await partner.nameEnquiry(BANK, leadingZero), String(echoed)).toEqual(expect.any(String));
    }
    patch = dataPatched(resolving, (data) => ({
      data: { ...data, account_number: `9${leadingZero.slice(1)}` },
    }));
    await expect(partner.nameEnquiry(BANK, leadingZero)).rejects.toBeInstanceOf(PartnerUnavailable);
    patch = () => undefined;
    expect(await partner.nameEnquiry(BANK, asked)).toEqual(expect.any(String));
  });

  it('opens no virtual account from a charge answer that failed or is in another currency; another amount is no reason', async () => {
    const va = {
      merchant_id: 'mer_charges',
      reference: 'va-1',
      name: 'Ada',
      amount: 500_000,
      expires_at: new Date(Date.now() + 30 * 60_000).toISOString(),
    };
    const charging = (method: string, path: string) => method === 'POST' && path === '/charge';
    for (const change of [
      (data: Json) => ({ status: false, message: 'Charge attempted', data }),
      (data: Json) => ({ data: { ...data, status: 'failed' } }),
      (data: Json) => ({ data: { ...data, currency: 'USD' } }),
    ]) {
      patch = dataPatched(charging, change);
      await expect(partner.openVirtualAccount(va)).rejects.toBeInstanceOf(PartnerUnavailable);
    }
    // Another amount (fees passed on to payers) opens it: payments are credited by what arrives.
    patch = dataPatched(charging, (data) => ({
      data: { ...data, amount: 507_500, requested_amount: 500_000 },
    }));
    expect((await partner.openVirtualAccount(va)).account_number).toMatch(/^\d{10}$/);
    // A reference other than ours in the answer: the account is found by either.
    patch = dataPatched(charging, (data) => ({ data: { ...data, reference: 'T685312322670591' } }));
    const opened = await partner.openVirtualAccount(va);
    expect(opened.account_ids).toEqual([
      expect.stringMatching(/^charge:va-[0-9a-f]+$/),
      'charge:T685312322670591',
    ]);
    patch = () => undefined;
    expect((await partner.openVirtualAccount(va)).account_ids).toEqual([
      expect.stringMatching(/^charge:va-/),
    ]);
  });

  it('takes no verdict from a POST /transfer answer about another reference or in another currency', async () => {
    for (const change of [
      (data: Json) => ({ data: { ...data, reference: 'np_someone_else_000000' } }),
      (data: Json) => ({ data: { ...data, currency: 'GHS' } }),
    ]) {
      const sent = order(PAYSTACK_ACCOUNT_PREFIXES.succeedsSilently, 'answered');
      patch = dataPatched(
        (method, path) => method === 'POST' && path === '/transfer',
        (data) => change({ ...data, status: 'success' }),
      );
      await expect(partner.sendTransfer(sent)).rejects.toBeInstanceOf(PartnerUnavailable);
      // Paystack has it: the requery's verify, answered truly, settles it.
      patch = () => undefined;
      await expect
        .poll(() => partner.queryTransfer(sent.reference), { timeout: 10_000, interval: 200 })
        .toEqual({ status: 'success', amount: 5_000 });
    }
  });
});

describe('Paystack transfers whose secret key cannot be read', () => {
  it('answer TransferNotSent (a PartnerUnavailable: the transfer stays pending), never a crash, and send nothing', async () => {
    // Secrets Manager throttled: the send's one read of the key fails.
    const partner = adapter(standIn, memoMap(), async () => {
      throw new Error('ThrottlingException');
    });
    const unread = order('12345', 'nokey');
    const before = standIn.requests.length;
    await expect(partner.sendTransfer(unread)).rejects.toBeInstanceOf(TransferNotSent);
    expect(standIn.requests.length).toBe(before);
    expect(standIn.transfer(unread.reference)).toBeUndefined();
  });

  it('give up on a read that hangs within the partner timeout, and send nothing', async () => {
    const partner = adapter(standIn, memoMap(), () => new Promise<string>(() => {}));
    const hung = order('12345', 'hungkey');
    const before = standIn.requests.length;
    const started = performance.now();
    await expect(partner.sendTransfer(hung)).rejects.toBeInstanceOf(TransferNotSent);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);
    expect(standIn.requests.length).toBe(before);
  });

  it('wait for no key read when the invocation has no time left for a partner call', async () => {
    // A read that would answer in 2 s (Secrets Manager slow), in an invocation with only the
    // reserve for its answer left: not waited for, and nothing sent.
    const partner = adapter(
      standIn,
      memoMap(),
      () => new Promise<string>((resolve) => setTimeout(() => resolve(standIn.secretKey), 2_000)),
    );
    const late = order('12345', 'latekey');
    const before = standIn.requests.length;
    const started = performance.now();
    const refused = await withInvocationDeadline(ANSWER_RESERVE_MS + 100, () =>
      partner.sendTransfer(late).then(
        (outcome) => outcome as unknown,
        (error: unknown) => error,
      ),
    );
    expect(refused).toBeInstanceOf(TransferNotSent);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(standIn.requests.length).toBe(before);
  });
});

describe('Paystack transfers while the secret key changes', () => {
  const tagOf = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 12);

  it('send every call of one transfer with one key, even when Secrets Manager hands out another meanwhile', async () => {
    let reads = 0;
    // The first read is this integration's key; every later one another integration's, which this
    // stand-in refuses (401). Unpinned, the recipient or the transfer would go with it.
    const partner = adapter(standIn, memoMap(), async () => {
      reads += 1;
      return reads === 1 ? standIn.secretKey : other.secretKey;
    });
    const pinned = order(PAYSTACK_ACCOUNT_PREFIXES.staysPending, 'pinned');
    expect(await partner.sendTransfer({ ...pinned, account: tagOf(standIn.secretKey) })).toEqual({
      status: 'pending',
    });
    expect(standIn.transfer(pinned.reference)).toMatchObject({ status: 'pending', amount: 5_000 });
    expect(standIn.requests.filter((r) => r.status === 401)).toEqual([]);
  });

  it('send nothing when the key is no longer the one the hand-over was counted under', async () => {
    const partner = adapter(other);
    const moved = order(PAYSTACK_ACCOUNT_PREFIXES.staysPending, 'moved');
    const before = other.requests.length;
    await expect(
      partner.sendTransfer({ ...moved, account: tagOf(standIn.secretKey) }),
    ).rejects.toBeInstanceOf(TransferNotSent);
    expect(other.requests.length).toBe(before);
    // Under its own tag, the same order goes.
    expect(await partner.sendTransfer({ ...moved, account: tagOf(other.secretKey) })).toMatchObject({
      status: expect.stringMatching(/pending|success/),
    });
  });
});

describe('Paystack recipient codes', () => {
  it('never pays a recipient Paystack hands back for the same number at another bank: the first send fails', async () => {
    // A reading of "A duplicate account number will lead to the retrieval of the existing record".
    const loose = await startPaystackStandIn({ recipientsByAccountOnly: true, settleAfterMs: SETTLE_MS });
    try {
      const partner = adapter(loose);
      const first = order('12345', 'bank1');
      expect(await partner.sendTransfer(first)).toEqual({ status: 'pending' });
      // The same ten digits at Access Bank: Paystack answers with the GTBank recipient.
      const other = { ...order('12345', 'bank2'), account_number: first.account_number, bank_code: '044' };
      // Every send would get the GTBank recipient again: failed and refunded, not held for ever.
      expect(await partner.sendTransfer(other)).toEqual({
        status: 'failed',
        reason: 'The banking partner could not confirm the recipient account',
      });
      expect(loose.transfer(other.reference)).toBeUndefined();
    } finally {
      await loose.close();
    }
  });

  it('makes a remembered recipient again when Paystack no longer knows it, and pays', async () => {
    const memo = memoMap();
    const partner = adapter(other, memo);
    const first = order('12345', 'rcp1');
    expect(await partner.sendTransfer(first)).toEqual({ status: 'pending' });
    const [remembered] = [...memo.entries.values()];

    other.forgetRecipients();
    const second = { ...order('12345', 'rcp2'), account_number: first.account_number };
    expect(await partner.sendTransfer(second)).toEqual({ status: 'pending' });
    await wait(SETTLE_MS * 3);
    expect(other.transfer(second.reference)).toMatchObject({ status: 'success' });
    // The memo now holds the new code.
    expect([...memo.entries.values()]).toHaveLength(1);
    expect([...memo.entries.values()][0]).not.toBe(remembered);
    expect(other.transfer(second.reference)?.recipient_code).toBe([...memo.entries.values()][0]);
  });

  it('makes it again too when the refusal carries only a code of the published description (validation_error), and pays', async () => {
    const described = await startPaystackStandIn({
      unknownRecipientCode: 'validation_error',
      settleAfterMs: SETTLE_MS,
    });
    try {
      const memo = memoMap();
      const partner = adapter(described, memo);
      const first = order('12345', 'rcpv1');
      expect(await partner.sendTransfer(first)).toEqual({ status: 'pending' });
      described.forgetRecipients();
      const second = { ...order('12345', 'rcpv2'), account_number: first.account_number };
      expect(await partner.sendTransfer(second)).toEqual({ status: 'pending' });
      await wait(SETTLE_MS * 3);
      expect(described.transfer(second.reference)).toMatchObject({ status: 'success' });
      expect(described.transfer(second.reference)?.recipient_code).toBe([...memo.entries.values()][0]);
      // A refusal that is not about the recipient is still final after one more try: a failed
      // transfer (and its refund), never a third send.
      const before = described.requests.length;
      const broke = { ...order('12345', 'rcpv3'), account_number: first.account_number, amount: -1 };
      expect(await partner.sendTransfer(broke)).toMatchObject({ status: 'failed' });
      const sends = described.requests.slice(before).filter((r) => r.path === '/transfer');
      expect(sends).toHaveLength(2);
    } finally {
      await described.close();
    }
  });

  it('keeps the codes of two Paystack integrations (test and live keys) apart in one memo', async () => {
    const memo = memoMap();
    const account = order('12345', 'keys').account_number;
    await adapter(standIn, memo).sendTransfer({ ...order('12345', 'k1'), account_number: account });
    const before = other.requests.length;
    const live = { ...order('12345', 'k2'), account_number: account };
    expect(await adapter(other, memo).sendTransfer(live)).toEqual({ status: 'pending' });
    // The live integration made its own recipient and was never sent the test integration's code.
    const sent = other.requests.slice(before).filter((r) => r.method === 'POST');
    expect(sent.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /transferrecipient 201',
      'POST /transfer 200',
    ]);
    expect(memo.entries.size).toBe(2);
  });
});
