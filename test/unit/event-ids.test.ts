import { describe, expect, it } from 'vitest';
import { newEventId } from '#shared/events/events.ts';

describe('event ids', () => {
  it('sort by time, then by rank among the events of one change made at that time', () => {
    const at = '2026-11-23T10:00:00.000Z';
    for (let i = 0; i < 100; i++) {
      const received = newEventId(at);
      const paid = newEventId(at, 1);
      const later = newEventId('2026-11-23T10:00:00.001Z');
      expect([later, paid, received].sort()).toEqual([received, paid, later]);
      expect(received).toMatch(/^evt_[0-9a-f]{28}$/);
      expect(paid).toMatch(/^evt_[0-9a-f]{28}$/);
    }
  });
});
