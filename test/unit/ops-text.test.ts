import { describe, expect, it } from 'vitest';
import { shown } from '#infra/cli/ops.ts';

describe("the operator CLI's text lines", () => {
  it('write a control character, a line separator or a bidirectional control as its escape: nothing acts on the terminal, no false line', () => {
    const partner = 'data.\u001b[2J\u001b[31mFAKE\nsandbox:X  credited\u2028\u202e\u0000';
    expect(shown(partner)).toBe(
      'data.\\u001b[2J\\u001b[31mFAKE\\u000asandbox:X  credited\\u2028\\u202e\\u0000',
    );
    expect(shown(partner)).not.toMatch(/[\p{Cc}\u2028\u202e]/u);
    // Ordinary text, names with diacritics and emoji included, is left as it is.
    expect(shown('sandbox:nip_1  open  5000 kobo  Adébáyọ̀ 😀')).toBe(
      'sandbox:nip_1  open  5000 kobo  Adébáyọ̀ 😀',
    );
  });
});
