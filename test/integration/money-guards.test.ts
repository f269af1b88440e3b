import { randomBytes, randomUUID } from 'node:crypto';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler } from '#functions/process-payment-events.ts';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { queryAll } from '#shared/aws/query.ts';
import { config, parseWebhookSecrets } from '#shared/config.ts';
import { sign, signatureProblem } from '#shared/crypto/standard-webhooks.ts';
import { CONTRADICTED_SETTLEMENT } from '#shared/definitions/alerts.ts';
import { CompanionConflict, credit, debit, InsufficientFunds, postAll } from '#shared/ledger/ledger.ts';
import { logger } from '#shared/logger.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import type { PaymentReceived, QueuedEvent } from '#shared/partners/partner.ts';
import { partner } from '#shared/partners/registry.ts';
import { receivePayment, receivePayments } from '#shared/payments/credit.ts';
import { createVirtualAccount } from '#shared/payments/virtual-account-opening.ts';
import { paymentItem, paymentsOf } from '#shared/payments/virtual-accounts.ts';
import { getTransaction } from '#shared/transactions/store.ts';
import { transferOwner, transferReferenceItem } from '#shared/transfers/references.ts';
import { requeryPendingTransfers } from '#shared/transfers/requery.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';
import { queuedFromSandbox } from '#test/support/events.ts';
import { aFundedPendingTransfer, aMerchant, fund } from '#test/support/merchants.ts';
import { nipSessionId, paymentEvent } from '#test/support/payments.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

const balanceOf = async (merchantId: string) => (await getMerchant(merchantId))?.balance;
const payment = (accountNumber: string, amount: number) =>
  queuedFromSandbox(
    paymentEvent({ account_number: accountNumber, amount, session_id: nipSessionId() }),
  ) as QueuedEvent & PaymentReceived;

const aTransfer = () => aFundedPendingTransfer('kill');

/** Every TransactWrite fails with a plain error (DynamoDB down for writes); reads go through. */
function failTransactWrites() {
  const real = dynamo.send.bind(dynamo) as (...args: unknown[]) => Promise<unknown>;
  vi.spyOn(dynamo, 'send').mockImplementation(((command: unknown, ...rest: unknown[]) =>
    command instanceof TransactWriteCommand
      ? Promise.reject(new Error('injected: DynamoDB unavailable'))
      : real(command, ...rest)) as typeof dynamo.send);
}

const record = (messageId: string, event: unknown) =>
  ({ messageId, body: JSON.stringify(event) }) as SQSRecord;

/**
 * The guards of money that no other test reached: each test here fails on a small bug a probe put
 * in the code (40 hand-made mutants, 2026-11-26; these survived every other test) and passes on the
 * code as it is. (A prefix of Paystack's signature, the tenth, is refused in paystack-adapter's.)
 */
/**
 * Sends `meanwhile` once, just before the first TransactWrite (another container's write landing
 * between this one's read and its transaction); says whether it was sent.
 */
function beforeFirstTransaction(meanwhile: UpdateCommand): () => boolean {
  const real = dynamo.send.bind(dynamo) as (...args: unknown[]) => Promise<unknown>;
  let sent = false;
  vi.spyOn(dynamo, 'send').mockImplementation((async (command: unknown, ...rest: unknown[]) => {
    if (command instanceof TransactWriteCommand && !sent) {
      sent = true;
      await real(meanwhile);
    }
    return real(command, ...rest);
  }) as typeof dynamo.send);
  return () => sent;
}

describe('money guards no other test reached', () => {
  it('holds a payment of the consumer’s grouped path that would take the balance past MAX_BALANCE', async () => {
    const { merchant } = await aMerchant();
    const max = config.limits.maxBalance;
    await fund(merchant.merchant_id, max - 1_000);
    const results = await receivePayments([payment(merchant.account_number, 1_001)]);
    expect(results).toEqual([{ status: 'fulfilled', value: 'held' }]);
    expect(await balanceOf(merchant.merchant_id)).toBe(max - 1_000);
  });

  it('never applies a debit through postAll, which has no cover check', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 100);
    const entryId = `payment:test-${randomUUID()}`;
    await expect(
      postAll(merchant.merchant_id, [{ entryId, amount: -500, category: 'payment', reference: entryId }]),
    ).rejects.toThrow(RangeError);
    expect(await balanceOf(merchant.merchant_id)).toBe(100);
  });

  it('never refunds a transfer that succeeded for a failed verdict read with a stale pending record', async () => {
    const { merchantId, transfer } = await aTransfer();
    await settleTransfer(transfer, { status: 'success' });
    const errors = vi.spyOn(logger, 'error');
    const settled = await settleTransfer(transfer, { status: 'failed', reason: 'Late failure' });
    expect(settled.status).toBe('success');
    expect((await getTransaction(merchantId, transfer.reference))?.status).toBe('success');
    expect(await balanceOf(merchantId)).toBe(14_000);
    expect(errors.mock.calls.filter(([m]) => m === CONTRADICTED_SETTLEMENT)).toHaveLength(1);
  });

  it('never debits past a balance that moved without its version: the write states its cover', async () => {
    // Nothing in the service writes a balance without its version; the debit's own condition
    // (`balance >= :debit`) still refuses one that would go below zero if something ever did.
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 1_000);
    const emptied = beforeFirstTransaction(
      new UpdateCommand({
        TableName: tableName('merchants'),
        Key: { merchant_id: merchant.merchant_id },
        UpdateExpression: 'SET balance = :zero',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
    const reference = `cover-${randomUUID()}`;
    await expect(
      debit({
        entryId: `transfer:${merchant.merchant_id}:${reference}`,
        merchantId: merchant.merchant_id,
        amount: 1_000,
        category: 'transfer',
        reference,
      }),
    ).rejects.toBeInstanceOf(InsufficientFunds);
    expect(emptied()).toBe(true);
    expect(await balanceOf(merchant.merchant_id)).toBe(0);
  });

  it('never writes a payment into a virtual account twice, whatever entry id a credit of it comes under', async () => {
    // The payment's entry id normally refuses the second credit first; the payment's own item is
    // the guard for a credit of the same payment under another id (one payment id, two partners).
    const { merchant } = await aMerchant();
    const reference = `va-${randomUUID()}`;
    await createVirtualAccount(merchant.merchant_id, merchant.name, {
      amount: 4_000,
      reference,
      expires_in_minutes: 30,
    });
    const paid = {
      session_id: nipSessionId(),
      amount: 4_000,
      sender_name: null,
      sender_account_number: null,
      sender_bank_code: null,
      received_at: new Date().toISOString(),
    };
    const creditUnder = (entryId: string) =>
      credit({
        entryId,
        merchantId: merchant.merchant_id,
        amount: 4_000,
        category: 'payment',
        reference: `payment:${paid.session_id}`,
        companions: () => [paymentItem(merchant.merchant_id, reference, paid)],
      });
    await creditUnder(`payment:first:${paid.session_id}`);
    await expect(creditUnder(`payment:second:${paid.session_id}`)).rejects.toBeInstanceOf(CompanionConflict);
    expect(await balanceOf(merchant.merchant_id)).toBe(4_000);
    expect((await paymentsOf(merchant.merchant_id, reference)).payments).toHaveLength(1);
  });

  it('never lets a second transfer take a partner reference another holds: no debit, the owner kept', async () => {
    // The references the adapters derive never collide today; this is the store's own guard, the
    // one that keeps a partner's verdict (and a failed one's refund) with the transfer it is about.
    const [{ merchant: first }, { merchant: second }] = await Promise.all([aMerchant(), aMerchant()]);
    await Promise.all([fund(first.merchant_id, 10_000), fund(second.merchant_id, 10_000)]);
    const shared = `collide-${nipSessionId()}`;
    const sendUnder = (merchantId: string, reference: string) =>
      debit({
        entryId: `transfer:${merchantId}:${reference}`,
        merchantId,
        amount: 1_000,
        category: 'transfer',
        reference,
        companions: () => [transferReferenceItem('sandbox', shared, { merchant_id: merchantId, reference })],
      });
    await sendUnder(first.merchant_id, 'ref-first');
    await expect(sendUnder(second.merchant_id, 'ref-second')).rejects.toBeInstanceOf(CompanionConflict);
    expect(await transferOwner('sandbox', shared)).toEqual({
      merchant_id: first.merchant_id,
      reference: 'ref-first',
    });
    expect(await balanceOf(second.merchant_id)).toBe(10_000);
  });

  it('leaves pending a transfer the partner answers pending to the requery (API.md §7)', async () => {
    const { merchantId, transfer } = await aTransfer();
    vi.spyOn(partner(), 'queryTransfer').mockImplementation(async (reference) =>
      reference === transfer.partner_reference ? { status: 'pending' } : undefined,
    );
    await requeryPendingTransfers(Date.now() + 10_000);
    expect((await getTransaction(merchantId, transfer.reference))?.status).toBe('pending');
    expect(await balanceOf(merchantId)).toBe(14_000);
  });

  it('reports a payment whose credit failed as a batch item failure: never acknowledged, never lost', async () => {
    const { merchant } = await aMerchant();
    failTransactWrites();
    const result = await handler({
      Records: [record('m-pay', payment(merchant.account_number, 1_000))],
    } as SQSEvent);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm-pay' }]);
    expect(await balanceOf(merchant.merchant_id)).toBe(0);
  });

  it('reports a transfer verdict that could not be applied as a batch item failure', async () => {
    const { transfer } = await aTransfer();
    failTransactWrites();
    const verdict = {
      type: 'TransferSettled',
      partner: 'sandbox',
      reference: transfer.partner_reference,
      outcome: { status: 'success' },
      delivery_id: `msg_${randomUUID()}`,
      received_at: new Date().toISOString(),
    };
    const result = await handler({ Records: [record('m-verdict', verdict)] } as SQSEvent);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm-verdict' }]);
  });

  it('reads a virtual account’s total again when another container moved it under a payment', async () => {
    const { merchant } = await aMerchant();
    const { account } = await createVirtualAccount(merchant.merchant_id, merchant.name, {
      amount: 4_000,
      reference: `va-${randomUUID()}`,
      expires_in_minutes: 30,
    });
    // Another container credits 2,000 into the account between this one's read and its write.
    const moved = beforeFirstTransaction(
      new UpdateCommand({
        TableName: tableName('virtualAccounts'),
        Key: { merchant_id: merchant.merchant_id, reference: account.reference },
        UpdateExpression: 'ADD amount_received :a, payment_count :c',
        ExpressionAttributeValues: { ':a': 2_000, ':c': 1 },
      }),
    );
    expect(await receivePayment(payment(account.account_number, 2_000))).toBe('credited');
    expect(moved()).toBe(true);
    const events = await queryAll<{ type: string; data: { virtual_account?: { amount_received?: number } } }>(
      {
        TableName: tableName('events'),
        KeyConditionExpression: 'merchant_id = :m',
        ExpressionAttributeValues: { ':m': merchant.merchant_id },
        ConsistentRead: true,
      },
    );
    // This payment completed the account: its paid event is sent, and its own event says 4,000.
    expect(events.filter((e) => e.type === 'virtual_account.paid')).toHaveLength(1);
  });

  it('refuses a prefix of the right Standard Webhooks signature, and a timestamp from the future', () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const [key] = parseWebhookSecrets(secret) as [Buffer];
    const now = 1_800_000_000_000;
    const ts = String(now / 1000);
    const body = '{"type":"payment.received"}';
    const good = sign(key, 'msg_1', ts, body);
    expect(
      signatureProblem({ id: 'msg_1', timestamp: ts, signature: good, body }, [key], now),
    ).toBeUndefined();
    for (const signature of [good.slice(0, 5), good.slice(0, 20), good.slice(0, -4)]) {
      expect(signatureProblem({ id: 'msg_1', timestamp: ts, signature, body }, [key], now)).toEqual(
        expect.any(String),
      );
    }
    // Exactly 5 minutes either way is inside the ±5 minutes (API.md §4), at any fraction of now's second.
    for (const shift of [300, -300]) {
      const at = String(now / 1000 + shift);
      const signature = sign(key, 'msg_1', at, body);
      expect(
        signatureProblem({ id: 'msg_1', timestamp: at, signature, body }, [key], now + 999),
      ).toBeUndefined();
    }
    // Signed rightly, but a second more, or 6 minutes, ahead or behind: the timestamp is the reason.
    for (const shift of [301, -301, 360, -360]) {
      const at = String(now / 1000 + shift);
      const signature = sign(key, 'msg_1', at, body);
      expect(signatureProblem({ id: 'msg_1', timestamp: at, signature, body }, [key], now)).toBe(
        'timestamp outside tolerance',
      );
    }
  });
});
