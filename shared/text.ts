/** How many characters (Unicode code points) a string has: 😀 is one, where `length` says two. */
export function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * Whether `text` is well-formed: no half of a surrogate pair (a `\ud800` escape decoded), which no
 * UTF-8 can carry and DynamoDB stores as U+FFFD, nor orders as JavaScript does.
 */
export function isWellFormed(text: string): boolean {
  return !/\p{Cs}/u.test(text);
}

/**
 * Text cut to at most `maxBytes` bytes of UTF-8, never in the middle of a character (a lone
 * surrogate counts as U+FFFD's 3 bytes, as UTF-8 writes it).
 */
export function cutUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return text;
  let end = 0;
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
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

/**
 * Text a caller sent, as an answer may echo it (a refused field's name, a refused value in its
 * message): a lone surrogate, a control character or a bidirectional control becomes U+FFFD, so the
 * answer is well-formed UTF-8 any strict JSON reader takes, and no echoed value draws the message
 * backwards or breaks its line where it is shown.
 */
export function echoable(text: string): string {
  return text.replace(/\p{Cs}|\p{Cc}|\p{Bidi_Control}|[\u2028\u2029]/gu, '\ufffd');
}
