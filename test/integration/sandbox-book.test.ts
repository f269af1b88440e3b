import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs, { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { freePort } from '#infra/local/process.ts';
import { readBookLines, startSandboxPartner } from '#infra/local/sandbox-partner.ts';
import { toNuban } from '#shared/banks/nuban.ts';
import { PROJECT_ROOT } from '#test/support/gateway.ts';
import { type Received, startReceiver } from '#test/support/receiver.ts';

/**
 * The sandbox bank, like a real one, forgets nothing when `npm start` restarts (its book under the
 * data folder): a requery finds every transfer it took, one it left pending still ends (with its
 * webhook), a resent reference gets the first answer, and an issued account keeps its name.
 */
const SECRET = `whsec_${Buffer.from('sandbox-book-test-secret-0123456789ab').toString('base64')}`;
const dataDir = mkdtempSync(path.join(tmpdir(), 'naira-sandbox-book-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const aSandbox = async (webhookUrl: string, settleAfterMs: number) =>
  startSandboxPartner({ port: await freePort(), webhookUrl, webhookSecret: SECRET, settleAfterMs, dataDir });

async function call(url: string, method: string, route: string, body?: unknown) {
  const response = await fetch(`${url}${route}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const order = (reference: string, accountNumber: string, bankCode = '058') => ({
  reference,
  amount: 15_000,
  bank_code: bankCode,
  account_number: accountNumber,
  account_name: 'Ada Obi',
});

/** Book lines of `count` transfers left pending then ended: three lines each (answer, end, final answer). */
function endedPendingTransfers(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const reference = `np_old_${i}`;
    const end = { status: 'success', reason: null };
    return [
      { t: 'transfer', key: reference, value: { status: 202, body: { status: 'pending', reference } } },
      { t: 'pending', key: reference, value: { end, settleAt: 1 } },
      {
        t: 'transfer',
        key: reference,
        value: { status: 200, body: { status: 'success', reference, reason: null, session_id: `s${i}` } },
      },
    ].map((line) => JSON.stringify(line));
  }).flat();
}

/** Book lines of a transfer still pending, to end in success (with its webhook) as soon as read back. */
function stillPending(reference: string): string[] {
  return [
    { t: 'transfer', key: reference, value: { status: 202, body: { status: 'pending', reference } } },
    { t: 'pending', key: reference, value: { end: { status: 'success', webhook: true }, settleAt: 1 } },
  ].map((line) => JSON.stringify(line));
}

const typesOf = (deliveries: readonly Received[]) =>
  deliveries.map((delivery) => (JSON.parse(delivery.body) as { type: string }).type);

describe('the sandbox partner restarted on its data folder', () => {
  it('still knows every transfer and issued account, ends what it left pending, and delivers what it owes', async () => {
    const service = await startReceiver();
    try {
      const run = Date.now();
      const done = `np_done_${run}`;
      const pending = `np_pending_${run}`;
      const silent = `np_silent_${run}`;
      const onUs = `np_on_us_${run}`;
      // Until the restart the service is down: nothing answers where the first sandbox delivers.
      const first = await aSandbox(`http://127.0.0.1:${await freePort()}/hooks`, 1_500);
      const paid = await call(first.url, 'POST', '/v1/transfers', order(done, toNuban('058', '123456789')));
      expect(paid).toMatchObject({ status: 200, body: { status: 'success', reference: done } });
      for (const [reference, serial] of [
        [pending, '666661234'],
        [silent, '444441234'],
      ] as const) {
        const left = await call(first.url, 'POST', '/v1/transfers', order(reference, toNuban('058', serial)));
        expect(left).toMatchObject({ status: 202, body: { status: 'pending' } });
      }
      // To one of its own accounts (bank 101, serial 5…): it owes that account a payment.received.
      const ownAccount = toNuban('101', '501234567');
      const landed = await call(first.url, 'POST', '/v1/transfers', order(onUs, ownAccount, '101'));
      expect(landed.body.status).toBe('success');
      const issued = await call(first.url, 'POST', '/v1/accounts', { kind: 'wallet', name: 'Book Ltd' });
      expect(issued.status).toBe(201);
      await first.close();
      // A crash while a line was written leaves it cut: the book reads on past it, and what is
      // written after it starts a line of its own.
      appendFileSync(path.join(dataDir, 'book.jsonl'), '{"t":"transfer","key":"np_cut');

      const second = await aSandbox(service.url, 200);
      let later: Awaited<ReturnType<typeof call>>;
      try {
        expect(await call(second.url, 'GET', `/v1/transfers/${done}`)).toEqual({
          status: 200,
          body: paid.body,
        });
        // The same reference again is the same transfer: its first answer, no second payment.
        expect(
          await call(second.url, 'POST', '/v1/transfers', order(done, toNuban('058', '123456789'))),
        ).toEqual(paid);
        const enquiry = await call(second.url, 'POST', '/v1/name-enquiry', {
          bank_code: issued.body.bank_code,
          account_number: issued.body.account_number,
        });
        expect(enquiry.body.account_name).toBe('NAIRAPAY/BOOK LTD');
        // What it left pending ends after the restart: found by a requery, and told by webhook
        // where the trigger says so.
        await expect
          .poll(async () => (await call(second.url, 'GET', `/v1/transfers/${pending}`)).body.status, {
            timeout: 5_000,
          })
          .toBe('success');
        await expect
          .poll(async () => (await call(second.url, 'GET', `/v1/transfers/${silent}`)).body.status, {
            timeout: 5_000,
          })
          .toBe('failed');
        // The credit it owed its own account, not taken before the restart, is delivered after it,
        // under the webhook id its first tries carried (the service credits it once).
        await expect
          .poll(() => typesOf(service.received).sort(), { timeout: 5_000 })
          .toEqual(['payment.received', 'transfer.success']);
        const owed = service.received.find((delivery) => typesOf([delivery])[0] === 'payment.received');
        const digest = createHash('sha256').update(`on-us:${onUs}`).digest('hex');
        expect(owed?.headers['webhook-id']).toBe(`msg_${digest.slice(0, 24)}`);
        expect(JSON.parse(owed?.body ?? '{}').data).toMatchObject({
          account_number: ownAccount,
          amount: 15_000,
        });
        // A name with spaces around it is named without them.
        later = await call(second.url, 'POST', '/v1/accounts', { kind: 'wallet', name: ' After Cut Ltd  ' });
      } finally {
        await second.close();
      }
      // Started a third time: what the second wrote after the cut line is there, and nothing owed
      // or pending is sent again.
      const third = await aSandbox(service.url, 200);
      try {
        const enquiry = await call(third.url, 'POST', '/v1/name-enquiry', {
          bank_code: later.body.bank_code,
          account_number: later.body.account_number,
        });
        expect(enquiry.body.account_name).toBe('NAIRAPAY/AFTER CUT LTD');
        // A name cut at 60 characters just after a space ends in no space.
        const long = await call(third.url, 'POST', '/v1/accounts', {
          kind: 'wallet',
          name: `${'A'.repeat(50)} B`,
        });
        expect(long.body.account_name).toBe(`NAIRAPAY/${'A'.repeat(50)}`);
        const sent = service.received.length;
        await new Promise((resolve) => setTimeout(resolve, 600));
        expect(service.received.length).toBe(sent);
      } finally {
        await third.close();
      }
    } finally {
      await service.close();
    }
  });

  it('writes its book again at start, one line per entry, once most of it is superseded', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'naira-sandbox-compact-'));
    try {
      const book = path.join(folder, 'book.jsonl');
      // 1,500 ended pending transfers, and one still pending (its end due now).
      writeFileSync(book, `${[...endedPendingTransfers(1_500), ...stillPending('np_open')].join('\n')}\n`);
      const service = await startReceiver();
      const sandbox = await startSandboxPartner({
        port: await freePort(),
        webhookUrl: service.url,
        webhookSecret: SECRET,
        dataDir: folder,
      });
      try {
        // One line per transfer, its last answer, and the open one's end.
        const kept = readFileSync(book, 'utf8').trim().split('\n');
        expect(kept).toHaveLength(1_502);
        expect(JSON.parse(kept[7] ?? '{}')).toMatchObject({ t: 'transfer', value: { status: 200 } });
        expect(await call(sandbox.url, 'GET', '/v1/transfers/np_old_1499')).toEqual({
          status: 200,
          body: { status: 'success', reference: 'np_old_1499', reason: null, session_id: 's1499' },
        });
        // The one still pending ends as its end says, with its webhook; the ended ones send nothing.
        await expect
          .poll(async () => (await call(sandbox.url, 'GET', '/v1/transfers/np_open')).body.status, {
            timeout: 5_000,
          })
          .toBe('success');
        await expect.poll(() => typesOf(service.received), { timeout: 5_000 }).toEqual(['transfer.success']);
        const paid = await call(
          sandbox.url,
          'POST',
          '/v1/transfers',
          order('np_new', toNuban('058', '123456789')),
        );
        expect(paid.status).toBe(200);
      } finally {
        await sandbox.close();
        await service.close();
      }
      // What it wrote after the compaction follows it, and is read back.
      expect(readFileSync(book, 'utf8').trim().split('\n').length).toBeGreaterThan(1_502);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('keeps a credit it owes its own account through a compaction, and delivers it after the next start', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'naira-sandbox-owed-'));
    try {
      const book = path.join(folder, 'book.jsonl');
      const account = toNuban('101', '501234567');
      const owed = {
        t: 'owed',
        key: 'np_owed',
        value: { reference: 'np_owed', bank_code: '101', account_number: account, amount: 15_000 },
      };
      // Enough superseded lines that the start compacts the book.
      writeFileSync(book, `${[...endedPendingTransfers(1_500), JSON.stringify(owed)].join('\n')}\n`);
      const sandboxOn = async (webhookUrl: string) =>
        startSandboxPartner({ port: await freePort(), webhookUrl, webhookSecret: SECRET, dataDir: folder });
      // The service is down while the book is compacted: the credit is still owed after it.
      const first = await sandboxOn(`http://127.0.0.1:${await freePort()}/hooks`);
      await first.close();
      expect(readFileSync(book, 'utf8').trim().split('\n')).toHaveLength(1_501);
      const service = await startReceiver();
      const second = await sandboxOn(service.url);
      try {
        await expect.poll(() => typesOf(service.received), { timeout: 10_000 }).toEqual(['payment.received']);
        expect(JSON.parse(service.received[0]?.body ?? '{}').data).toMatchObject({
          account_number: account,
          amount: 15_000,
        });
      } finally {
        await second.close();
        await service.close();
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('syncs each line of its book to disk before it answers (an answer survives a power cut, not only a kill)', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'naira-sandbox-sync-'));
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const sandbox = await startSandboxPartner({
      port: await freePort(),
      webhookUrl: undefined,
      webhookSecret: undefined,
      dataDir: folder,
    });
    // Counted through the module's own named import: node:fs's ESM exports follow its CJS object.
    const synced = vi.spyOn(fs, 'fsyncSync');
    syncBuiltinESMExports();
    try {
      const before = synced.mock.calls.length;
      const paid = await call(
        sandbox.url,
        'POST',
        '/v1/transfers',
        order('np_synced', toNuban('058', '123456789')),
      );
      expect(paid.status).toBe(200);
      const afterTransfer = synced.mock.calls.length;
      expect(afterTransfer).toBeGreaterThan(before);
      const issued = await call(sandbox.url, 'POST', '/v1/accounts', { kind: 'wallet', name: 'Synced Ltd' });
      expect(issued.status).toBe(201);
      expect(synced.mock.calls.length).toBeGreaterThan(afterTransfer);
    } finally {
      synced.mockRestore();
      syncBuiltinESMExports();
      await sandbox.close();
    }
  });

  it('keeps its old book whole when the disk fills while it is written again', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'naira-sandbox-full-'));
    try {
      const book = path.join(folder, 'book.jsonl');
      const names = Array.from({ length: 100 }, (_, i) =>
        JSON.stringify({
          t: 'issued',
          key: `101:50000${String(i).padStart(5, '0')}`,
          value: `NAIRAPAY/MERCHANT ${i}`,
        }),
      );
      const transfers = endedPendingTransfers(1_500);
      writeFileSync(book, `${[...transfers, ...names].join('\n')}\n`);
      const before = readFileSync(book, 'utf8');
      // The compacted book: the transfers' last answers, then the names. The file size limit
      // (`ulimit -f`, 1 KiB blocks) lets the transfers through and stops halfway through the names:
      // a write takes what fits, the next one fails.
      const last = transfers.filter((_, i) => i % 3 === 2);
      const transfersBytes = Buffer.byteLength(`${last.join('\n')}\n`);
      const blocks = Math.floor((transfersBytes + Buffer.byteLength(names.join('\n')) / 2) / 1024);
      const script = [
        "const { startSandboxPartner } = await import('./infra/local/sandbox-partner.ts');",
        `const sandbox = await startSandboxPartner({ port: 0, webhookUrl: undefined, webhookSecret: undefined, dataDir: ${JSON.stringify(folder)} });`,
        'await sandbox.close();',
      ].join(' ');
      const run = spawnSync(
        'bash',
        [
          '-c',
          `ulimit -f ${blocks} && exec "$0" --import tsx --input-type=module -e "$1"`,
          process.execPath,
          script,
        ],
        { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 30_000 },
      );
      // It fails to start, saying why, and the book is as it was: nothing of it lost.
      expect(run.status, run.stdout + run.stderr).not.toBe(0);
      expect(run.stderr).toMatch(/EFBIG|file too large/i);
      expect(readFileSync(book, 'utf8')).toBe(before);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('reads its book a chunk at a time: lines across chunks, characters across chunks, a cut last line', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'naira-sandbox-lines-'));
    try {
      const file = path.join(folder, 'book.jsonl');
      writeFileSync(file, '{"a":"Ọlá"}\n\n{"b":"😀😀"}\n{"cut');
      const seen: string[] = [];
      for (const chunk of [1, 2, 3, 5, 1 << 20]) {
        seen.length = 0;
        expect(readBookLines(file, (line) => seen.push(line), chunk)).toEqual({ cut: true });
        expect(seen).toEqual(['{"a":"Ọlá"}', '', '{"b":"😀😀"}', '{"cut']);
      }
      writeFileSync(file, 'one\ntwo\n');
      expect(readBookLines(file, () => undefined, 3)).toEqual({ cut: false });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('names an issued account with at most 60 characters, never half an emoji', async () => {
    const sandbox = await aSandbox(`http://127.0.0.1:${await freePort()}/hooks`, 1_500);
    try {
      // NAIRAPAY/ and 50 letters leave one character: the emoji whole, never its first half.
      const issued = await call(sandbox.url, 'POST', '/v1/accounts', {
        kind: 'virtual_account',
        name: `${'e'.repeat(50)}${'😀'.repeat(50)}`,
      });
      expect(issued.body.account_name).toBe(`NAIRAPAY/${'E'.repeat(50)}😀`);
    } finally {
      await sandbox.close();
    }
  });
});
