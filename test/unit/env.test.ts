import { describe, expect, it } from 'vitest';
import { number, oneOf, optional, readEnv, text, url, withDefault } from '#shared/env.ts';

describe('environment readers', () => {
  it('reads, converts and defaults each variable', () => {
    const read = readEnv(
      { PORT: '4000', MODE: 'b', NAME: 'x-1', HOME_URL: 'http://127.0.0.1:8000' },
      {
        PORT: number({ integer: true, min: 1, max: 65535 }),
        RATE: withDefault(number({ positive: true }), '2.5'),
        MODE: oneOf(['a', 'b']),
        NAME: text({ pattern: /^[a-z0-9-]+$/ }),
        HOME_URL: optional(url()),
        MISSING: optional(text()),
      },
    );
    expect(read).toEqual({
      PORT: 4000,
      RATE: 2.5,
      MODE: 'b',
      NAME: 'x-1',
      HOME_URL: 'http://127.0.0.1:8000',
      MISSING: undefined,
    });
  });

  it('refuses with every problem named in one error', () => {
    const readers = {
      PORT: number({ integer: true, min: 1, max: 65535 }),
      TIMEOUT: number({ integer: true, min: 1 }),
      MODE: oneOf(['a', 'b']),
      ENDPOINT: optional(url()),
      KEY: optional(text({ min: 32 })),
      SCHEDULE: text({ pattern: /^\d+(,\d+)*$/, message: 'Seconds, comma-separated' }),
    };
    const attempt = () =>
      readEnv(
        { PORT: '70000', TIMEOUT: '1.5', MODE: 'c', ENDPOINT: 'not a url', KEY: 'short', SCHEDULE: '1,,2' },
        readers,
      );
    expect(attempt).toThrow(/^Invalid configuration: /);
    const message = (() => {
      try {
        attempt();
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const expected of [
      'PORT: Must be at most 65535',
      'TIMEOUT: Must be a whole number',
      'MODE: Must be one of a, b',
      'ENDPOINT: Invalid URL',
      'KEY: Must be at least 32 characters',
      'SCHEDULE: Seconds, comma-separated',
    ])
      expect(message).toContain(expected);
    expect(() => readEnv({ N: 'soon' }, { N: number() })).toThrow('N: Must be a number');
    expect(() => readEnv({}, { N: number() })).toThrow('N: Required');
  });
});
