import { describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/process.ts';
import { startSandboxPartner } from '#infra/local/sandbox-partner.ts';
import { toNuban } from '#shared/banks/nuban.ts';
import { startReceiver } from '#test/support/receiver.ts';

/**
 * The sandbox's transfers to its own accounts (README, "Sandbox partner bank"): the receiving account
 * is told by `payment.received`, once per transfer reference, whatever the sandbox forgot.
 */
const SECRET = `whsec_${Buffer.from('sandbox-on-us-test-secret-0123456789').toString('base64')}`;

async function aSandbox(webhookUrl: string) {
  return startSandboxPartner({ port: await freePort(), webhookUrl, webhookSecret: SECRET, bankCode: '101' });
}

async function send(url: string, order: Record<string, unknown>) {
  const response = await fetch(`${url}/v1/transfers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(order),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A transfer order to an account of the sandbox's bank (101) with serial `serial`. */
const onUsOrder = (reference: string, serial: string, amount: number, narration?: string) => ({
  reference: `${reference}_${Date.now()}`,
  amount,
  bank_code: '101',
  account_number: toNuban('101', serial),
  account_name: 'NAIRAPAY/ACME LTD',
  ...(narration ? { narration } : {}),
});

describe("a sandbox transfer to one of the sandbox's own accounts", () => {
  it('is one payment, however often its reference is sent, also by a sandbox restarted in between', async () => {
    const service = await startReceiver();
    try {
      const order = onUsOrder('np_on_us', '501234567', 25_000, 'Invoice 7');
      const first = await aSandbox(service.url);
      expect((await send(first.url, order)).body).toMatchObject({ status: 'success' });
      expect((await send(first.url, order)).body).toMatchObject({ status: 'success' });
      await first.close();
      // Restarted: it forgot the transfer and makes it again, as the same payment.
      const second = await aSandbox(service.url);
      expect((await send(second.url, order)).body).toMatchObject({ status: 'success' });
      await second.close();

      await expect.poll(() => service.received.length, { timeout: 5_000 }).toBe(2);
      const deliveries = service.received.map((request) => ({
        id: request.headers['webhook-id'],
        event: JSON.parse(request.body) as { type: string; data: Record<string, unknown> },
      }));
      expect(deliveries[0]?.event).toMatchObject({
        type: 'payment.received',
        data: { account_number: order.account_number, amount: 25_000, narration: 'Invoice 7' },
      });
      expect(deliveries[1]?.id).toBe(deliveries[0]?.id);
      expect(deliveries[1]?.event.data.session_id).toBe(deliveries[0]?.event.data.session_id);
    } finally {
      await service.close();
    }
  });

  it('is delivered again, under the same webhook-id, until the service takes it', async () => {
    const service = await startReceiver((n) => (n < 3 ? 503 : 200));
    const sandbox = await aSandbox(service.url);
    try {
      const order = onUsOrder('np_on_us_retry', '509876543', 1_000);
      expect((await send(sandbox.url, order)).body).toMatchObject({ status: 'success' });
      await expect.poll(() => service.received.length, { timeout: 10_000 }).toBe(3);
      expect(new Set(service.received.map((request) => request.headers['webhook-id'])).size).toBe(1);
    } finally {
      await sandbox.close();
      await service.close();
    }
  });

  it('is an ordinary transfer to an account of another bank, or to a trigger account: no payment', async () => {
    const service = await startReceiver();
    const sandbox = await aSandbox(service.url);
    try {
      const base = { amount: 1_000, account_name: 'ADA OBI' };
      await send(sandbox.url, {
        ...base,
        reference: 'elsewhere',
        bank_code: '058',
        account_number: toNuban('058', '501234567'),
      });
      await send(sandbox.url, {
        ...base,
        reference: 'pending',
        bank_code: '101',
        account_number: toNuban('101', '555550001'),
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(service.received).toEqual([]);
    } finally {
      await sandbox.close();
      await service.close();
    }
  });
});
