import { describe, expect, it } from 'vitest';
import { ValidationError } from '#shared/errors.ts';
import { errorResult } from '#shared/http/errors.ts';
import { echoable } from '#shared/text.ts';

describe('an error answer echoing what the caller sent', () => {
  it('is well-formed UTF-8 without controls or bidi overrides: a strict JSON reader takes it', () => {
    const refused = new ValidationError([
      { field: '\ud800', message: 'Unknown field' },
      { field: 'allowed_ips.0', message: 'Not an IP address or CIDR block: 10.0.0.1\u202e\u0000\n' },
    ]);
    const { body } = errorResult(refused, 'req-1');
    // No lone surrogate escape (JSON.stringify writes one as \ud800), no raw control or override.
    expect(body).not.toMatch(/\\ud[89ab]|\\u0000|\\n|\u202e/i);
    expect(JSON.parse(body).errors).toEqual([
      { field: '\ufffd', message: 'Unknown field' },
      { field: 'allowed_ips.0', message: 'Not an IP address or CIDR block: 10.0.0.1\ufffd\ufffd\ufffd' },
    ]);
  });

  it('keeps all other text as it is, emoji and accents included', () => {
    const text = 'Adébáyọ̀ 😀 Ltd (٣) — “quoted”';
    expect(echoable(text)).toBe(text);
    expect(echoable('a\u2066b\u2069c\u2028d')).toBe('a\ufffdb\ufffdc\ufffdd');
    // Every bidirectional control: the marks and the Arabic letter mark too.
    expect(echoable('\u200e\u200f\u061c\u202a')).toBe('\ufffd'.repeat(4));
  });
});
