import { describe, expect, it } from 'vitest';
import { FETCH_BLOCKED_PORTS } from '#infra/local/ports.ts';

/** What Node's own fetch says of a port, without anything listening: 'bad port' or another failure. */
async function fetchRefusal(port: number): Promise<string | undefined> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
    return undefined;
  } catch (error) {
    return ((error as Error).cause as Error | undefined)?.message;
  }
}

describe("the ports Node's fetch refuses", () => {
  it('are the listed ones, and the defaults of npm start are not among them', async () => {
    const refusals = await Promise.all([...FETCH_BLOCKED_PORTS].map(fetchRefusal));
    expect(refusals.every((refusal) => refusal === 'bad port')).toBe(true);
    for (const port of [3000, 8000, 9324, 3100, 9229, 4010, 5999, 6001, 6002, 6664, 6670]) {
      expect(await fetchRefusal(port), String(port)).not.toBe('bad port');
    }
  });
});
