/**
 * The types of events for merchants (API.md §8). A module of its own, without the events store:
 * the sandbox CLI checks `--events` against them without loading the configuration or a client.
 */
export const EVENT_TYPES = [
  'payment.received',
  'virtual_account.paid',
  'transfer.success',
  'transfer.failed',
  'transfer.reversed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
