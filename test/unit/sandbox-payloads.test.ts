import { describe, expect, it } from 'vitest';
import { readSandboxDelivery } from '#shared/partners/sandbox-payloads.ts';

const payment = (data: Record<string, unknown>) =>
  JSON.stringify({
    type: 'payment.received',
    data: { session_id: 'nip_1', account_number: '0000014579', amount: 5_000, ...data },
  });

describe('sandbox deliveries read', () => {
  it('refuse an array where the event or its data is an object, naming it', () => {
    expect(readSandboxDelivery(JSON.stringify({ type: 'payment.received', data: [] }))).toEqual({
      kind: 'unusable',
      type: 'payment.received',
      reason: 'payment.received cannot be acted on: data: Must be an object',
    });
  });

  it('drop a cosmetic field that is not what it should be, never the payment', () => {
    const reading = readSandboxDelivery(payment({ sender: ['Ada'], narration: 42, paid_at: 'soon' }));
    expect(reading).toMatchObject({
      kind: 'event',
      event: { data: { sender: null, narration: null, paid_at: null, amount: 5_000 } },
    });
    // Absent, they are null too.
    expect(readSandboxDelivery(payment({}))).toMatchObject({
      kind: 'event',
      event: { data: { sender: null, narration: null, paid_at: null } },
    });
  });

  it("make a narration's control characters, overrides and line separators spaces, never a refusal", () => {
    const reading = readSandboxDelivery(
      payment({
        narration: 'Rent\u2028paid\u2029in\u202Efull\u0007ok',
        sender: { account_name: 'Ada\u2028Obi' },
      }),
    );
    expect(reading).toMatchObject({
      kind: 'event',
      event: {
        data: { narration: 'Rent paid in full ok', sender: { account_name: 'Ada Obi' }, amount: 5_000 },
      },
    });
  });

  it('refuse a money field it cannot read, with the reason', () => {
    expect(readSandboxDelivery(payment({ amount: 1.5 }))).toMatchObject({
      kind: 'unusable',
      id: 'nip_1',
      reason: 'payment.received cannot be acted on: data.amount: Must be a whole number',
    });
  });

  it('refuses half a surrogate pair in a payment id or a reference: DynamoDB would make two ids one', () => {
    const body = (id: string) =>
      JSON.stringify({
        type: 'payment.received',
        data: { session_id: id, account_number: '0000014579', amount: 5_000 },
      });
    for (const id of ['S\ud800', 'S\udbff']) {
      expect(readSandboxDelivery(body(id))).toEqual({
        kind: 'unusable',
        type: 'payment.received',
        reason: 'payment.received cannot be acted on: data.session_id: Must be well-formed text',
      });
    }
    const transfer = JSON.stringify({ type: 'transfer.success', data: { reference: 'r\udfff' } });
    expect(readSandboxDelivery(transfer)).toMatchObject({
      kind: 'unusable',
      reason: expect.stringContaining('data.reference: Must be well-formed text'),
    });
    // A whole pair is well-formed text, but no payment id (below).
    expect(readSandboxDelivery(body('S\u{1F600}'))).toMatchObject({ kind: 'unusable' });
  });

  it('takes as a payment id only what its reference payment:<id> can carry: listed, shown and fetched', () => {
    const body = (id: string) =>
      JSON.stringify({
        type: 'payment.received',
        data: { session_id: id, account_number: '0000014579', amount: 5_000 },
      });
    const refused = {
      kind: 'unusable',
      type: 'payment.received',
      reason:
        'payment.received cannot be acted on: data.session_id: Must be letters, digits, _ . = or - (a NIP session id is 30 digits)',
    };
    // A control character, a bidi override, a path's separator, a space: refused (kept for operators).
    for (const id of ['S7\u0000x', 'S8\u001b[31m', 'S5\u202Eevil', 'a/b', 'a?b', 'a b', 'S6\u2028x'])
      expect(readSandboxDelivery(body(id))).toMatchObject(refused);
    // 92 characters at most: `payment:` and the id make the 100 of GET /transactions/{reference}.
    expect(readSandboxDelivery(body('1'.repeat(93)))).toMatchObject({ kind: 'unusable' });
    for (const id of ['1'.repeat(92), '100004261126053114000000123456', 'nip_1.x=y-z'])
      expect(readSandboxDelivery(body(id))).toMatchObject({ kind: 'event' });
  });

  it("never takes a payment id that begins as a kept verdict's or refusal's does (transfer:, rejected:)", () => {
    for (const id of ['transfer:ref-1', 'rejected:77']) {
      const readable = JSON.stringify({
        type: 'payment.received',
        data: { session_id: id, account_number: '0000014579', amount: 100 },
      });
      expect(readSandboxDelivery(readable)).toEqual({
        kind: 'unusable',
        type: 'payment.received',
        reason:
          'payment.received cannot be acted on: data.session_id: Must not begin with transfer: or rejected:',
      });
      // Kept for another reason, it is kept under its body's hash, never under that id.
      const ambiguous = readable.replace('"amount":100', '"amount":100,"amount":100');
      const reading = readSandboxDelivery(ambiguous);
      expect(reading).toMatchObject({ kind: 'unusable' });
      expect(reading).not.toHaveProperty('id');
    }
  });
});
