import { describe, expect, it } from 'vitest';
import { codePoints, cutText } from '#shared/text.ts';

describe('text cut by characters', () => {
  it.each([
    ['short text as it is', 'abc', 5, 'abc'],
    ['ASCII cut as slice cuts it', 'abcdef', 3, 'abc'],
    ['never between the halves of an emoji', `a${'😀'.repeat(3)}`, 2, 'a😀'],
    ['emoji counted one each', '😀😀😀', 3, '😀😀😀'],
    ['to nothing', '😀', 0, ''],
  ])('%s', (_, text, max, cut) => {
    expect(cutText(text, max)).toBe(cut);
    expect(codePoints(cutText(text, max))).toBeLessThanOrEqual(max);
    expect(/\p{Cs}/u.test(cutText(text, max))).toBe(false);
  });
});
