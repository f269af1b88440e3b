import { ThrottlingException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { dynamo, tableName } from '#shared/aws/clients.ts';
import { CONTRADICTED_SETTLEMENT } from '#shared/definitions/alerts.ts';
import { auditMerchant } from '#shared/ledger/audit.ts';
import { logger } from '#shared/logger.ts';
import { getMerchant } from '#shared/merchants/store.ts';
import { partner } from '#shared/partners/registry.ts';
import { getTransaction } from '#shared/transactions/store.ts';
import { dispatchTransfer } from '#shared/transfers/dispatch.ts';
import { failTransfer } from '#shared/transfers/operator.ts';
import { settleTransfer } from '#shared/transfers/settle.ts';
import { createTransfer } from '#shared/transfers/transfers.ts';
import { failAttempts, inScope, interceptDynamo } from '#test/support/faults.ts';
import {
  aFundedPendingTransfer,
  aMerchant,
  anAccount,
  aPendingTransfer,
  fund,
} from '#test/support/merchants.ts';

/**
 * The partner's word on a transfer that was settled already: a repeat changes nothing; a word that
 * contradicts it (paid after it failed and was refunded, failed after it succeeded) changes nothing
 * either, and is reported to operators (an alarm on AWS), never settled by guess.
 */
afterEach(() => {
  vi.restoreAllMocks();
});

const aTransfer = () => aFundedPendingTransfer('settle');

const balanceOf = async (merchantId: string) => (await getMerchant(merchantId))?.balance;
const reports = (errors: MockInstance<typeof logger.error>) =>
  errors.mock.calls.filter(([message]) => message === CONTRADICTED_SETTLEMENT);

describe('a verdict on a settled transfer', () => {
  it('reports a success after the transfer failed and its money was given back, and changes nothing', async () => {
    const { merchantId, transfer } = await aTransfer();
    const failed = await settleTransfer(transfer, { status: 'failed', reason: 'Account closed' });
    expect(await balanceOf(merchantId)).toBe(20_000);
    const errors = vi.spyOn(logger, 'error');
    expect((await settleTransfer(failed, { status: 'success' })).status).toBe('failed');
    expect(reports(errors)).toEqual([
      [
        CONTRADICTED_SETTLEMENT,
        expect.objectContaining({ reference: transfer.reference, status: 'failed', verdict: 'success' }),
      ],
    ]);
    expect((await getTransaction(merchantId, transfer.reference))?.status).toBe('failed');
    expect(await balanceOf(merchantId)).toBe(20_000);
  });

  it('reports a failure after the transfer succeeded, and changes nothing', async () => {
    const { merchantId, transfer } = await aTransfer();
    const paid = await settleTransfer(transfer, { status: 'success' });
    const errors = vi.spyOn(logger, 'error');
    expect((await settleTransfer(paid, { status: 'failed', reason: 'Late failure' })).status).toBe('success');
    expect(reports(errors)).toHaveLength(1);
    expect(await balanceOf(merchantId)).toBe(14_000);
  });

  it('reports a contradiction it meets on the way, when the record given was stale', async () => {
    const { merchantId, transfer } = await aTransfer();
    // Failed and refunded by a webhook while a requery still held the pending record.
    await settleTransfer(transfer, { status: 'failed', reason: 'Account closed' });
    const errors = vi.spyOn(logger, 'error');
    expect((await settleTransfer(transfer, { status: 'success' })).status).toBe('failed');
    expect(reports(errors)).toEqual([
      [CONTRADICTED_SETTLEMENT, expect.objectContaining({ status: 'failed', verdict: 'success' })],
    ]);
    expect(await balanceOf(merchantId)).toBe(20_000);
  });

  it('takes success after a reversal as no contradiction: the two verdicts may come in either order', async () => {
    const { merchantId, transfer } = await aTransfer();
    const errors = vi.spyOn(logger, 'error');
    const reversed = await settleTransfer(transfer, { status: 'reversed', reason: 'Returned by the bank' });
    expect(reversed.status).toBe('reversed');
    expect((await settleTransfer(reversed, { status: 'success' })).status).toBe('reversed');
    expect(reports(errors)).toEqual([]);
    expect(await balanceOf(merchantId)).toBe(20_000);
  });

  it('takes a repeated verdict, and a reversal after success, as no contradiction', async () => {
    const { merchantId, transfer } = await aTransfer();
    const errors = vi.spyOn(logger, 'error');
    const paid = await settleTransfer(transfer, { status: 'success' });
    expect((await settleTransfer(paid, { status: 'success' })).status).toBe('success');
    const reversed = await settleTransfer(paid, { status: 'reversed', reason: 'Returned by the bank' });
    expect(reversed.status).toBe('reversed');
    expect((await settleTransfer(reversed, { status: 'reversed', reason: 'again' })).status).toBe('reversed');
    expect(reports(errors)).toEqual([]);
    expect(await balanceOf(merchantId)).toBe(20_000);
  });
});

describe('a verdict for another amount than the transfer’s', () => {
  it.each([
    ['success', { status: 'success', amount: 5_001 }],
    ['failed', { status: 'failed', reason: 'Account closed', amount: 50_000 }],
  ] as const)('settles nothing on a %s for another amount, and reports it', async (verdict, outcome) => {
    const { merchantId, transfer } = await aTransfer();
    const errors = vi.spyOn(logger, 'error');
    expect((await settleTransfer(transfer, outcome)).status).toBe('pending');
    expect(reports(errors)).toEqual([
      [
        CONTRADICTED_SETTLEMENT,
        expect.objectContaining({
          reference: transfer.reference,
          verdict,
          amount: 5_000,
          verdict_amount: outcome.amount,
        }),
      ],
    ]);
    expect((await getTransaction(merchantId, transfer.reference))?.status).toBe('pending');
    expect(await balanceOf(merchantId)).toBe(14_000);
    // The same word for the transfer's own amount settles it.
    expect((await settleTransfer(transfer, { ...outcome, amount: 5_000 })).status).toBe(verdict);
  });
});

describe('a send the partner answers pending after its webhook settled the transfer', () => {
  it('answers the transfer as it stands (failed, refunded), never the stale pending', async () => {
    const { merchantId, transfer } = await aTransfer();
    // The partner's webhook overtakes its answer to the send: the transfer fails and is refunded
    // before the answer (pending) reaches the dispatch.
    vi.spyOn(partner(), 'sendTransfer').mockImplementation(async () => {
      await settleTransfer(transfer, { status: 'failed', reason: 'Account closed' });
      return { status: 'pending' };
    });
    const answered = await dispatchTransfer(transfer);
    expect(answered).toMatchObject({ status: 'failed', failure_reason: 'Account closed' });
    expect(await getTransaction(merchantId, transfer.reference)).toMatchObject({ status: 'failed' });
    expect(await balanceOf(merchantId)).toBe(20_000);
  });
});

describe('a transfer whose bookkeeping DynamoDB refuses after the debit (never an error once debited)', () => {
  const injected = { $metadata: { httpStatusCode: 400 } };
  const request = (reference: string) => ({
    reference,
    amount: 5_000,
    account_number: '0000014579',
    bank_code: '011',
  });

  it('retries a hand-over count that met a transaction on the record (TransactionConflictException)', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `conflict-${Math.random().toString(36).slice(2, 10)}`;
    const scope = `dispatch-${reference}`;
    let refused = 0;
    // A single-item write on an item a transaction is writing: the SDK does not retry it.
    const fault = interceptDynamo(
      'finalizeRequest',
      async (call, proceed) => {
        if (call.command !== 'UpdateItemCommand' || !call.tables.some((t) => t.endsWith('transactions')))
          return proceed();
        if (refused >= 2) return proceed();
        refused += 1;
        throw new TransactionConflictException({ ...injected, message: 'injected: conflict' });
      },
      scope,
    );
    const { transaction } = await inScope(scope, () =>
      createTransfer(merchant.merchant_id, request(reference)),
    ).finally(() => fault.remove());
    expect(refused).toBe(2);
    expect(transaction.status).toBe('success');
    expect(await balanceOf(merchant.merchant_id)).toBe(14_000);
  });

  it('answers pending when the partner’s answer cannot be recorded, and the requery settles it once', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `unrecorded-${Math.random().toString(36).slice(2, 10)}`;
    const send = partner().sendTransfer.bind(partner());
    let fault: { remove(): void } | undefined;
    // The partner pays it; from then on DynamoDB throttles every transaction past the SDK's retries.
    vi.spyOn(partner(), 'sendTransfer').mockImplementation(async (order) => {
      const answer = await send(order);
      fault = failAttempts(
        'TransactWriteItemsCommand',
        1_000,
        () => new ThrottlingException({ ...injected, message: 'injected: throttled' }),
      );
      return answer;
    });
    const errors = vi.spyOn(logger, 'error');
    const { transaction } = await createTransfer(merchant.merchant_id, request(reference)).finally(() =>
      fault?.remove(),
    );
    expect(transaction.status).toBe('pending');
    expect(errors.mock.calls.map(([message]) => message)).toContain(
      'transfer left pending: the partner’s answer could not be recorded',
    );
    // The partner has it (success): the requery (the test runtime's, every second) settles it, debited once.
    await expect
      .poll(async () => (await getTransaction(merchant.merchant_id, reference))?.status, { timeout: 15_000 })
      .toBe('success');
    expect(await balanceOf(merchant.merchant_id)).toBe(14_000);
  });
  it('keeps a first refusal whose refund cannot be written, and the requery gives the money back: never sent again', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `refused-${Math.random().toString(36).slice(2, 10)}`;
    let fault: { remove(): void } | undefined;
    // The partner refuses the first send outright (nothing made: an empty partner balance, say),
    // and DynamoDB then fails every transaction, the refund's included (at once: the SDK's retries
    // of a throttle would let the runtime's requery resend it meanwhile). A later send it would
    // refuse without showing the transfer, as Paystack's adapter answers a refused resend: pending.
    const sends = vi.spyOn(partner(), 'sendTransfer').mockImplementation(async (order) => {
      if (order.resend) return { status: 'pending' };
      fault = failAttempts(
        'TransactWriteItemsCommand',
        1_000,
        () => new Error('injected: DynamoDB unreachable'),
      );
      return { status: 'failed', reason: 'Insufficient balance at the partner' };
    });
    const { transaction } = await createTransfer(merchant.merchant_id, request(reference)).finally(() =>
      fault?.remove(),
    );
    expect(transaction.status).toBe('pending');
    expect(await getTransaction(merchant.merchant_id, reference)).toMatchObject({
      status: 'pending',
      dispatches: 1,
      refusal: { reason: 'Insufficient balance at the partner', dispatch: 1 },
    });
    expect(await balanceOf(merchant.merchant_id)).toBe(14_000);
    // The partner does not know it: the requery (the test runtime's, every second) applies the
    // refusal, with the reversal, instead of sending it again.
    await expect
      .poll(async () => (await getTransaction(merchant.merchant_id, reference))?.status, { timeout: 15_000 })
      .toBe('failed');
    const failed = await getTransaction(merchant.merchant_id, reference);
    expect(failed).toMatchObject({ failure_reason: 'Insufficient balance at the partner', dispatches: 1 });
    expect(await balanceOf(merchant.merchant_id)).toBe(20_000);
    // Never handed over again (the runtime's requery runs in its own process, beyond this spy):
    // one count, and the partner has never heard of it.
    expect(sends).toHaveBeenCalledTimes(1);
    expect(await partner().queryTransfer(failed?.partner_reference ?? '')).toBeUndefined();
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });
  it('lets a refusal kept for an earlier hand-over block nothing (one counted since, by a container that knew no refusals)', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `stale-refusal-${Math.random().toString(36).slice(2, 10)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    const { keepRefusal, recordDispatch } = await import('#shared/transactions/store.ts');
    expect(await keepRefusal(merchant.merchant_id, reference, { reason: 'Refused', dispatch: 1 })).toBe(true);
    // Kept for the last hand-over: no other is counted.
    expect(await recordDispatch(merchant.merchant_id, reference)).toBeUndefined();
    // A container of before the change counts one all the same (its own condition, no refusal in it).
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName('transactions'),
        Key: { merchant_id: merchant.merchant_id, reference },
        UpdateExpression: 'ADD dispatches :one',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
    // The refusal answers an earlier send, not the last: never applied, and the next hand-over goes.
    const pending = await getTransaction(merchant.merchant_id, reference);
    if (!pending) throw new Error('no transfer');
    expect((await dispatchTransfer(pending, { retry: true })).status).toBe('pending');
    expect(await balanceOf(merchant.merchant_id)).toBe(14_000);
    expect((await recordDispatch(merchant.merchant_id, reference))?.dispatch).toBe(3);
  });

  it('never lets a hand-over count land earlier in time than the last (a slow, retried count)', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `count-time-${Math.random().toString(36).slice(2, 10)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000);
    const { recordDispatch } = await import('#shared/transactions/store.ts');
    // The last count, as another container wrote it, a minute after this one's clock.
    const later = Date.now() + 60_000;
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName('transactions'),
        Key: { merchant_id: merchant.merchant_id, reference },
        UpdateExpression: 'SET dispatched_at = :later',
        ExpressionAttributeValues: { ':later': later },
      }),
    );
    // Counted with an earlier time it would make the last hand-over look older than it is: refused.
    expect(await recordDispatch(merchant.merchant_id, reference)).toBeUndefined();
    expect(await getTransaction(merchant.merchant_id, reference)).toMatchObject({
      dispatches: 1,
      dispatched_at: later,
    });
  });
});

describe("an operator's failing of a transfer (ops transfers fail)", () => {
  /** `ops transfers fail` an hour on, past any send's quiet time. */
  const failAnHourOn = (merchantId: string, reference: string, options: { partnerChecked?: boolean } = {}) =>
    failTransfer(merchantId, reference, {
      reason: 'never made',
      by: 'test',
      now: Date.now() + 3600_000,
      ...options,
    });

  it('refuses a transfer the partner has, whatever its status there, and changes nothing', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `operator-known-${Math.random().toString(36).slice(2, 10)}`;
    // Sent for real: the sandbox leaves transfers to 55555… pending, then pays them without a webhook.
    const { transaction } = await createTransfer(merchant.merchant_id, {
      reference,
      amount: 5_000,
      account_number: anAccount('058', '55555'),
      bank_code: '058',
    });
    expect(transaction.status).toBe('pending');
    await expect(failAnHourOn(merchant.merchant_id, reference)).rejects.toMatchObject({
      code: 'known_to_partner',
      message: expect.stringContaining('sandbox has transfer'),
    });
    expect((await getTransaction(merchant.merchant_id, reference))?.status).not.toBe('failed');
    expect(await balanceOf(merchant.merchant_id)).toBe(14_000);
  });

  it('fails a transfer sent through another partner only when the operator checked that partner (--partner-checked)', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `operator-elsewhere-${Math.random().toString(36).slice(2, 10)}`;
    // Sent through Paystack, and this shell configured with the sandbox (its PARTNER forgotten, say):
    // Paystack cannot be asked from here, so nothing is failed by default.
    const other = partner().name === 'sandbox' ? 'paystack' : 'sandbox';
    await aPendingTransfer(merchant.merchant_id, reference, 5_000, { through: other });
    await expect(failAnHourOn(merchant.merchant_id, reference)).rejects.toMatchObject({
      code: 'partner_not_asked',
      message: expect.stringContaining('--partner-checked'),
    });
    expect((await getTransaction(merchant.merchant_id, reference))?.status).toBe('pending');
    expect(await balanceOf(merchant.merchant_id)).toBe(14_000);
    // The operator looked it up with that partner: failed, given back, and the line says so.
    const { partnerAsked } = await failAnHourOn(merchant.merchant_id, reference, { partnerChecked: true });
    expect(partnerAsked).toBe(
      `not asked: sent through ${other}, not the configured ${partner().name}; ${other} checked by the operator`,
    );
    expect(await balanceOf(merchant.merchant_id)).toBe(20_000);
    expect((await auditMerchant(merchant.merchant_id)).problems).toEqual([]);
  });

  it('asks the partner about a transfer handed over under another key of it, and refuses one that key shows, flag or not', async () => {
    const { merchant } = await aMerchant();
    await fund(merchant.merchant_id, 20_000);
    const reference = `operator-other-key-${Math.random().toString(36).slice(2, 10)}`;
    await aPendingTransfer(merchant.merchant_id, reference, 5_000, { account: 'key-before' });
    const bank = partner() as { accountTag?: () => Promise<string | undefined> };
    const own = bank.accountTag;
    bank.accountTag = async () => 'key-now';
    const fail = (partnerChecked: boolean) =>
      failAnHourOn(merchant.merchant_id, reference, { partnerChecked });
    try {
      // The key of now sees it (a rotated key of the same business does): never failed by hand.
      const asked = vi.spyOn(partner(), 'queryTransfer').mockResolvedValueOnce({ status: 'success' });
      await expect(fail(true)).rejects.toMatchObject({ code: 'known_to_partner' });
      expect(asked).toHaveBeenCalledTimes(1);
      // It shows nothing: the operator's own check of the other key decides.
      await expect(fail(false)).rejects.toMatchObject({ code: 'partner_not_asked' });
      expect(await balanceOf(merchant.merchant_id)).toBe(14_000);
      expect((await fail(true)).partnerAsked).toContain('checked by the operator');
      expect(await balanceOf(merchant.merchant_id)).toBe(20_000);
    } finally {
      bank.accountTag = own;
    }
  });

  it("says the partner answered, settling nothing, when its answer is about another transfer: no 'try again'", async () => {
    const { merchantId, transfer } = await aTransfer();
    const { PartnerAnswerUnreadable } = await import('#shared/errors.ts');
    vi.spyOn(partner(), 'queryTransfer').mockRejectedValue(
      new PartnerAnswerUnreadable(30, 'it names another reference'),
    );
    const failed = failTransfer(merchantId, transfer.reference, {
      reason: 'never made',
      by: 'test',
      now: Date.now() + 3600_000,
    });
    await expect(failed).rejects.toMatchObject({
      code: 'partner_unavailable',
      message: expect.stringContaining('answered about transfer'),
    });
    await expect(failed).rejects.toMatchObject({
      message: expect.stringContaining('(it names another reference)'),
    });
    await expect(failed).rejects.not.toMatchObject({ message: expect.stringContaining('try again') });
    expect((await getTransaction(merchantId, transfer.reference))?.status).toBe('pending');
  });

  it('holds resends of a transfer it refuses as recently sent, so it can be failed once that send is over', async () => {
    const { merchantId, transfer } = await aTransfer();
    const { holdResends, recordDispatch } = await import('#shared/transactions/store.ts');
    const { OPERATOR_RETURN_MS, QUIET_AFTER_SEND_MS } = await import('#shared/transfers/operator.ts');
    // A transfer the partner never answered: nothing holds its resends.
    await holdResends(merchantId, transfer.reference, 0);
    const lastSent = Math.max(Date.parse(transfer.created_at), transfer.dispatched_at ?? 0);
    await expect(
      failTransfer(merchantId, transfer.reference, {
        reason: 'never made',
        by: 'test',
        now: lastSent + 1_000,
      }),
    ).rejects.toMatchObject({ code: 'recently_sent', message: expect.stringContaining('no resend until') });
    expect((await getTransaction(merchantId, transfer.reference))?.operator_hold_until).toBe(
      lastSent + QUIET_AFTER_SEND_MS + OPERATOR_RETURN_MS,
    );
    // A send under way when the operator ran answers after it and sets its own, shorter hold
    // (here: already over): the operator's still holds the requery's resend (it would have counted
    // one, and the wait begun again).
    await holdResends(merchantId, transfer.reference, Date.now() - 1);
    expect(await recordDispatch(merchantId, transfer.reference, { idleOnly: true })).toBeUndefined();
    // Asked again, the hold is not lengthened: the time given stands.
    await expect(
      failTransfer(merchantId, transfer.reference, {
        reason: 'never made',
        by: 'test',
        now: lastSent + 2_000,
      }),
    ).rejects.toMatchObject({ message: expect.stringContaining('no resend until') });
    expect((await getTransaction(merchantId, transfer.reference))?.operator_hold_until).toBe(
      lastSent + QUIET_AFTER_SEND_MS + OPERATOR_RETURN_MS,
    );
    const failed = await failTransfer(merchantId, transfer.reference, {
      reason: 'never made',
      by: 'test',
      now: lastSent + QUIET_AFTER_SEND_MS + 1,
    });
    expect(failed.transfer).toMatchObject({ status: 'failed' });
    expect(await balanceOf(merchantId)).toBe(20_000);
  });

  it('changes nothing when the transfer is handed to the partner again while it runs', async () => {
    const { merchantId, transfer } = await aTransfer();
    const { recordDispatch } = await import('#shared/transactions/store.ts');
    const scope = `operator-${transfer.reference}`;
    let sentMeanwhile = false;
    // Just before the reversal's transaction, a resend is counted (the requery, a merchant's retry).
    const fault = interceptDynamo(
      'initialize',
      async (call, proceed) => {
        if (call.command === 'TransactWriteItemsCommand' && !sentMeanwhile) {
          sentMeanwhile = true;
          await recordDispatch(merchantId, transfer.reference);
        }
        return proceed();
      },
      scope,
    );
    const later = Date.now() + 3600_000;
    const attempt = inScope(scope, () =>
      failTransfer(merchantId, transfer.reference, { reason: 'never made', by: 'test', now: later }),
    ).finally(() => fault.remove());
    await expect(attempt).rejects.toMatchObject({ code: 'recently_sent' });
    expect(sentMeanwhile).toBe(true);
    expect(await getTransaction(merchantId, transfer.reference)).toMatchObject({
      status: 'pending',
      dispatches: 2,
    });
    expect(await balanceOf(merchantId)).toBe(14_000);
    // Once no send is on its way any more, it can be failed: the money comes back once.
    const failed = await failTransfer(merchantId, transfer.reference, {
      reason: 'never made',
      by: 'test',
      now: later,
    });
    expect(failed.transfer).toMatchObject({ status: 'failed', failure_reason: 'never made' });
    // The partner was asked first, and had nothing.
    expect(failed.partnerAsked).toBe(`sandbox has no transfer ${transfer.partner_reference}`);
    expect(await balanceOf(merchantId)).toBe(20_000);
  });
});
