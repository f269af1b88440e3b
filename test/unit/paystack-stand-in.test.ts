import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PAYSTACK_ACCOUNT_PREFIXES,
  PAYSTACK_BANK_CODE_OVERRIDES,
  PAYSTACK_MISSING_BANK_CODE,
  type PaystackStandIn,
  paystackBankCode,
  standInAccountName,
  standInAccountNumber,
  startPaystackStandIn,
} from '#test/support/paystack-stand-in.ts';

/** What a webhook receiver got: the raw body (the signature covers those exact bytes) and headers. */
interface Received {
  body: string;
  headers: IncomingHttpHeaders;
}

/** Paystack's answer envelope. */
interface Envelope {
  status: boolean;
  message: string;
  code?: string;
  data?: unknown;
}

/** A webhook receiver that answers 200 and keeps what it got. */
function startReceiver(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}/webhooks/paystack`, received });
    });
  });
}

async function waitFor<T>(probe: () => T | undefined, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let paystack: PaystackStandIn;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let referenceCount = 0;

beforeAll(async () => {
  receiver = await startReceiver();
  paystack = await startPaystackStandIn({ webhookUrl: receiver.url, settleAfterMs: 50 });
});

afterAll(async () => {
  await paystack.close();
  await new Promise((resolve) => receiver.server.close(resolve));
});

/** Calls the stand-in as the payments code would; `key: null` sends no Authorization. */
async function call(method: string, path: string, body?: unknown, key: string | null = paystack.secretKey) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const response = await fetch(`${paystack.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Envelope };
}

function lastRequest() {
  const request = paystack.requests.at(-1);
  if (!request) throw new Error('no request recorded');
  return request;
}

function newReference(): string {
  referenceCount += 1;
  return `po_test_reference_${String(referenceCount).padStart(6, '0')}`;
}

async function createRecipient(accountNumber: string, bankCode = '058') {
  const { json } = await call('POST', '/transferrecipient', {
    type: 'nuban',
    name: 'Ada Obi',
    account_number: accountNumber,
    bank_code: bankCode,
    currency: 'NGN',
  });
  return (json.data as { recipient_code: string }).recipient_code;
}

describe('Paystack stand-in refuses what Paystack refuses', () => {
  it('answers 401 "Invalid key" without a bearer key, and with another key', async () => {
    const missing = await call('GET', '/bank?currency=NGN', undefined, null);
    expect(missing).toEqual({ status: 401, json: { status: false, message: 'Invalid key' } });
    expect(lastRequest().problems).not.toEqual([]);

    const wrong = await call('GET', '/bank?currency=NGN', undefined, `sk_test_${'0'.repeat(40)}`);
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ status: false, message: 'Invalid key' });
  });

  it('answers 400 and records a problem when a transfer amount is a string', async () => {
    const recipient = await createRecipient('0123456789');
    const { status, json } = await call('POST', '/transfer', {
      source: 'balance',
      amount: '100000',
      recipient,
      reference: newReference(),
    });
    expect(status).toBe(400);
    expect(json.status).toBe(false);
    expect(lastRequest().problems).toEqual([expect.stringContaining('amount must be integer')]);
  });

  it('answers 400 when a transfer has no recipient', async () => {
    const { status, json } = await call('POST', '/transfer', {
      source: 'balance',
      amount: 100000,
      reference: newReference(),
    });
    expect(status).toBe(400);
    expect(json.status).toBe(false);
    expect(lastRequest().problems).toEqual(['recipient is required']);
  });

  it('answers 400 "Recipient specified is invalid" for an unknown recipient code', async () => {
    const { status, json } = await call('POST', '/transfer', {
      source: 'balance',
      amount: 100000,
      recipient: 'RCP_doesnotexist0000',
      reference: newReference(),
    });
    expect(status).toBe(400);
    expect(json).toMatchObject({ status: false, code: 'invalid_transfer_recipient' });
  });

  it('refuses a reused transfer reference without creating a second transfer', async () => {
    const recipient = await createRecipient(
      standInAccountNumber(PAYSTACK_ACCOUNT_PREFIXES.staysPending, '058'),
    );
    const reference = newReference();
    const body = { source: 'balance', amount: 50000, recipient, reference };
    expect((await call('POST', '/transfer', body)).status).toBe(200);
    const again = await call('POST', '/transfer', body);
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ status: false, message: 'Duplicate Transfer Reference' });
    expect(paystack.transfer(reference)?.status).toBe('pending');
  });
});

describe('Paystack stand-in answers as Paystack does', () => {
  it('resolves a 10-digit account number with a leading zero sent as a string', async () => {
    const { status, json } = await call('GET', '/bank/resolve?account_number=0022728151&bank_code=058');
    expect(status).toBe(200);
    expect(json.data).toMatchObject({
      account_number: '0022728151',
      account_name: standInAccountName('0022728151'),
    });
    expect(lastRequest().problems).toEqual([]);
  });

  it("lists banks under Paystack's codes with NIP codes, leaving one of ours out", async () => {
    const { json } = await call('GET', '/bank?currency=NGN&include_nip_sort_code=true');
    const banks = json.data as { code: string; nip_sort_code: string; slug: string }[];
    const kuda = banks.find((bank) => bank.nip_sort_code === '090267');
    expect(kuda?.code).toBe(PAYSTACK_BANK_CODE_OVERRIDES['090267']);
    expect(banks.some((bank) => bank.slug === 'wema-bank')).toBe(true);
    expect(paystackBankCode(PAYSTACK_MISSING_BANK_CODE)).toBeUndefined();
    expect(banks.some((bank) => bank.nip_sort_code === PAYSTACK_MISSING_BANK_CODE)).toBe(false);
  });

  it('runs recipient → transfer → transfer.success → verify', async () => {
    const accountNumber = '0123456789';
    const recipient = await createRecipient(accountNumber);
    expect(await createRecipient(accountNumber)).toBe(recipient);

    const reference = newReference();
    const queued = await call('POST', '/transfer', {
      source: 'balance',
      amount: 150000,
      recipient,
      reference,
    });
    expect(queued.status).toBe(200);
    expect(queued.json.data).toMatchObject({ reference, status: 'pending', amount: 150000 });

    const delivered = await waitFor(() =>
      receiver.received.find(
        (r) => (JSON.parse(r.body) as { data: { reference?: string } }).data.reference === reference,
      ),
    );
    expect(JSON.parse(delivered.body)).toMatchObject({
      event: 'transfer.success',
      data: { reference, amount: 150000 },
    });

    const verified = await call('GET', `/transfer/verify/${reference}`);
    expect(verified.json.data).toMatchObject({
      reference,
      status: 'success',
      recipient: { recipient_code: recipient, details: { account_number: accountNumber } },
    });
    expect((await call('GET', '/transfer/verify/po_no_such_reference_0000')).status).toBe(404);
  });

  it('signs events with the hex HMAC-SHA512 of the raw body keyed with the secret key', async () => {
    const sent = await paystack.sendEvent({
      event: 'charge.success',
      data: { id: 1, reference: 'abc', amount: 10000 },
    });
    expect(sent.status).toBe(200);
    const last = receiver.received.at(-1);
    if (!last) throw new Error('nothing received');
    const expected = createHmac('sha512', paystack.secretKey).update(last.body).digest('hex');
    expect(last.headers['x-paystack-signature']).toBe(expected);
    expect(last.headers['content-type']).toBe('application/json');
  });
});
