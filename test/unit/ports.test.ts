import { describe, expect, it } from 'vitest';
import { FETCH_BLOCKED_PORTS, portSetting } from '#infra/local/ports.ts';

/** What Node's own fetch says of a port, without anything listening: 'bad port' or another failure. */
async function fetchRefusal(port: number): Promise<string | undefined> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
    return undefined;
  } catch (error) {
    return ((error as Error).cause as Error | undefined)?.message;
  }
}

describe('the ports npm start takes', () => {
  it("lists exactly ports Node's fetch refuses, and the defaults are not among them", async () => {
    const refusals = await Promise.all([...FETCH_BLOCKED_PORTS].map(fetchRefusal));
    expect(refusals.every((refusal) => refusal === 'bad port')).toBe(true);
    for (const port of [3000, 8000, 9324, 3100, 9229, 5999, 6001, 6002, 6664, 6670]) {
      expect(await fetchRefusal(port), String(port)).not.toBe('bad port');
    }
  });

  it('refuses a blocked port with the reason and a port to use instead, and reads the rest', () => {
    expect(() => portSetting('PORT', '6000', 3000)).toThrow(
      /PORT=6000 is one of the ports Node's fetch refuses .* e\.g\. 6001$/,
    );
    expect(() => portSetting('PORT', '6665', 3000)).toThrow(/e\.g\. 6670$/);
    expect(() => portSetting('SQS_PORT', 'x', 9324)).toThrow('SQS_PORT must be a port number');
    expect(portSetting('PORT', undefined, 3000)).toBe(3000);
    expect(portSetting('PORT', '6002', 3000)).toBe(6002);
  });
});
