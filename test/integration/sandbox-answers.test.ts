import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerAnswerUnreadable, PartnerUnavailable } from '#shared/errors.ts';
import { createSandboxPartner } from '#shared/partners/sandbox.ts';

/**
 * The sandbox adapter takes its partner's word only about what it asked (as the Paystack adapter
 * does): a transfer answer about another reference or in another currency, a refusal status that
 * says success, a name enquiry about another account, an issued number that is no account number,
 * settle, name or open nothing. Against a stand-in of the sandbox's API that answers as a test says.
 */
let answer: { status: number; body: unknown } = { status: 200, body: {} };
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(answer.status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(answer.body));
  });
});
let partner: ReturnType<typeof createSandboxPartner>;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  partner = createSandboxPartner({
    baseUrl: `http://127.0.0.1:${port}`,
    timeoutMs: 2_000,
    webhookKeys: async () => [],
  });
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const order = {
  reference: 'mer_1.t-1',
  amount: 5_000,
  bank_code: '058',
  account_number: '0123456789',
  account_name: 'ADA OBI',
  narration: null,
  countedAt: Date.now(),
};
const answering = (status: number, body: unknown) => {
  answer = { status, body };
};

describe('the sandbox adapter reading its partner', () => {
  it('says how an answer about another reference or in another currency settles nothing', async () => {
    for (const body of [
      { status: 'success', reference: 'mer_2.someone-else' },
      { status: 'success', reference: order.reference, currency: 'USD' },
    ]) {
      answering(200, body);
      await expect(partner.queryTransfer(order.reference)).rejects.toBeInstanceOf(PartnerAnswerUnreadable);
    }
  });

  it('takes no transfer verdict about another reference, in another currency, or a refusal saying success', async () => {
    for (const [status, body] of [
      [200, { status: 'success', reference: 'mer_2.someone-else' }],
      [200, { status: 'failed', reference: 'mer_2.someone-else', reason: 'x' }],
      [200, { status: 'success', reference: order.reference, currency: 'USD' }],
      [422, { status: 'success', reference: order.reference }],
      [202, { status: 'success', reference: order.reference }],
      [200, { status: 'paid', reference: order.reference }],
    ] as const) {
      answering(status, body);
      await expect(
        partner.sendTransfer({ ...order, countedAt: Date.now() }),
        JSON.stringify(body),
      ).rejects.toBeInstanceOf(PartnerUnavailable);
      if (status === 200) {
        await expect(partner.queryTransfer(order.reference), JSON.stringify(body)).rejects.toBeInstanceOf(
          PartnerUnavailable,
        );
      }
    }
    // Its own answers, as the sandbox gives them (a reference given or not).
    answering(202, { status: 'pending', reference: order.reference });
    expect(await partner.sendTransfer({ ...order, countedAt: Date.now() })).toEqual({ status: 'pending' });
    answering(422, {
      status: 'failed',
      reference: order.reference,
      reason: 'Beneficiary bank rejected the transfer',
    });
    expect(await partner.sendTransfer({ ...order, countedAt: Date.now() })).toEqual({
      status: 'failed',
      reason: 'Beneficiary bank rejected the transfer',
    });
    answering(200, { status: 'success' });
    expect(await partner.queryTransfer(order.reference)).toEqual({ status: 'success' });
  });

  it('names no one from a name enquiry about another account, or with no name', async () => {
    for (const body of [
      { account_name: 'SOMEONE ELSE', account_number: '0000000000', bank_code: '058' },
      { account_name: 'SOMEONE ELSE', account_number: '0123456789', bank_code: '011' },
      { account_name: '  ', account_number: '0123456789', bank_code: '058' },
    ]) {
      answering(200, body);
      await expect(partner.nameEnquiry('058', '0123456789'), JSON.stringify(body)).rejects.toBeInstanceOf(
        PartnerUnavailable,
      );
    }
    answering(200, { account_name: 'ADA OBI', account_number: '0123456789', bank_code: '058' });
    expect(await partner.nameEnquiry('058', '0123456789')).toBe('ADA OBI');
  });

  it('opens no account from an issued number that is no account number or names no bank', async () => {
    const wallet = { merchant_id: 'mer_1', name: 'Acme' };
    for (const body of [
      { account_number: '12', account_name: 'N', bank_code: '101' },
      { account_number: '5012345678', account_name: 'N' },
      { account_number: '5012345678', account_name: 'N', bank_code: 101 },
      { account_number: '5012345678', account_name: '', bank_code: '101' },
    ]) {
      answering(201, body);
      await expect(partner.issueWallet(wallet), JSON.stringify(body)).rejects.toBeInstanceOf(
        PartnerUnavailable,
      );
    }
    answering(201, { account_number: '5012345678', account_name: 'NAIRAPAY/ACME', bank_code: '101' });
    expect(await partner.issueWallet(wallet)).toEqual({
      account_number: '5012345678',
      account_name: 'NAIRAPAY/ACME',
      bank_code: '101',
      account_ids: ['5012345678'],
    });
  });
});
