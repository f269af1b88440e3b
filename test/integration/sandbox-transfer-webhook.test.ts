import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/process.ts';
import { SANDBOX_TRIGGERS, type SandboxPartner, startSandboxPartner } from '#infra/local/sandbox-partner.ts';
import { toNuban } from '#shared/banks/nuban.ts';
import { parseWebhookSecrets } from '#shared/config.ts';
import { createSandboxPartner } from '#shared/partners/sandbox.ts';
import { type Received, startReceiver } from '#test/support/receiver.ts';

/**
 * The sandbox's own `transfer.success` webhook (a `66666…` transfer, left pending then settled), as
 * the service's sandbox adapter reads it: the only way this webhook is checked. End to end, the
 * requery settles the same transfer a second or two later when the webhook is lost (so an e2e test
 * passes either way); here nothing but the webhook can.
 */
const SECRET = `whsec_${Buffer.from('sandbox-transfer-webhook-secret-0123').toString('base64')}`;

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let sandbox: SandboxPartner;
let adapter: ReturnType<typeof createSandboxPartner>;

beforeAll(async () => {
  receiver = await startReceiver();
  sandbox = await startSandboxPartner({
    port: await freePort(),
    webhookUrl: receiver.url,
    webhookSecret: SECRET,
    settleAfterMs: 100,
  });
  adapter = createSandboxPartner({
    baseUrl: sandbox.url,
    timeoutMs: 2_000,
    webhookKeys: async () => parseWebhookSecrets(SECRET),
  });
});
afterAll(async () => {
  await sandbox.close();
  await receiver.close();
});

/** A delivery the receiver got, as the partner webhook's function hands it to the adapter. */
const asDelivery = ({ headers, body }: Received) => ({
  headers: Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : value]),
  ),
  rawBody: body,
  sourceIp: '127.0.0.1',
});

describe("the sandbox's transfer webhook", () => {
  it('settles the transfer it left pending: signed as the adapter checks, for its reference, as the status query tells', async () => {
    const reference = adapter.transferReference('mer_webhook', `t-${Date.now()}`);
    const sent = await adapter.sendTransfer({
      reference,
      amount: 25_000,
      bank_code: '058',
      account_number: toNuban('058', `${SANDBOX_TRIGGERS.pendingTransfers}0001`),
      account_name: 'ADA OBI',
      narration: 'webhook check',
      countedAt: Date.now(),
    });
    expect(sent).toEqual({ status: 'pending' });

    await expect.poll(() => receiver.received.length, { timeout: 5_000 }).toBe(1);
    const delivery = asDelivery(receiver.received[0] as Received);
    expect(await adapter.verifyDelivery(delivery)).toBeUndefined();
    const { events, partnersId } = adapter.eventsOf(delivery);
    expect(partnersId).toBe(true);
    expect(events).toEqual([
      {
        type: 'TransferSettled',
        partner: 'sandbox',
        reference,
        outcome: expect.objectContaining({ status: 'success' }),
      },
    ]);
    // The webhook and the status query agree, as the requery would find it.
    expect(await adapter.queryTransfer(reference)).toEqual(expect.objectContaining({ status: 'success' }));
    // One byte changed: refused, so a forged verdict never settles a transfer.
    expect(
      await adapter.verifyDelivery({ ...delivery, rawBody: delivery.rawBody.replace('success', 'failed') }),
    ).toEqual(expect.any(String));
  });
});
