import { describe, expect, it } from 'vitest';
import { type Payment, paidAt, paymentStatus } from '#shared/payments/virtual-accounts.ts';

const now = Date.parse('2026-11-21T12:00:00Z');
const future = '2026-11-21T12:30:00.000Z';
const past = '2026-11-21T11:30:00.000Z';
const payment = (amount: number, at: string): Payment => ({
  session_id: at,
  amount,
  sender_name: null,
  sender_account_number: null,
  sender_bank_code: null,
  received_at: at,
});

describe('payment status', () => {
  it.each([
    [0, future, 'pending'],
    [0, past, 'expired'],
    [400, future, 'partially_paid'],
    [400, past, 'partially_paid'],
    [1000, past, 'paid'],
    [1001, future, 'overpaid'],
  ])('with %i of 1000 received, expiring %s, is %s', (received, expiresAt, status) => {
    expect(paymentStatus({ amount: 1000, amount_received: received, expires_at: expiresAt }, now)).toBe(
      status,
    );
  });

  it('is paid at the payment that first covers the amount', () => {
    const payments = [payment(300, 'a'), payment(700, 'b'), payment(50, 'c')];
    expect(paidAt(1000, payments)).toBe('b');
    expect(paidAt(2000, payments)).toBeNull();
    expect(paidAt(100, [])).toBeNull();
  });
});
