/** How many characters (Unicode code points) a string has: 😀 is one, where `length` says two. */
export function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * `text`'s first `max` characters (code points): never half of an emoji. `slice` counts UTF-16
 * units, and a cut between a surrogate pair leaves a lone surrogate, which no UTF-8 can carry (a
 * strict JSON reader refuses the answer).
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = 0;
  let count = 0;
  for (const char of text) {
    if (count === max) break;
    end += char.length;
    count++;
  }
  return text.slice(0, end);
}
