/**
 * Duplicated keys in JSON text. `JSON.parse` keeps the last of two equal keys without a word, so
 * `{"amount":100,"amount":1000000000}` reads as 1,000,000,000 while a proxy, a log reader or the
 * sender's own code may read 100: the body is ambiguous and must not be acted on (API.md §11).
 *
 * A scanner of our own rather than a library: it runs only on text `JSON.parse` has accepted, so it
 * tokenises without validating (strings, and the braces, brackets, commas and colons between
 * them); it keeps an explicit stack (thousands of nesting levels cannot overflow it); and it is
 * one small function with its own tests. The maintained parsers that report duplicates are full
 * parsers of their own (a second opinion on what is valid JSON) or streaming parsers far larger
 * than this.
 */

type Frame =
  | { kind: 'object'; keys: Set<string>; key: string; awaitingKey: boolean }
  | { kind: 'array'; index: number };

/** Duplicates reported at most: enough to name the problem, bounded work for a hostile body. */
const MAX_REPORTED = 10;

/**
 * The paths of the keys given more than once in one object (`amount`, `data.amount`,
 * `items.0.name`), each once, in order of appearance, at most 10; empty when there are none. Keys
 * are compared as decoded, so `"a"` and `"\u0061"` are the same key, as `JSON.parse` sees them.
 * `text` must be valid JSON: parse it first.
 */
export function duplicateKeys(text: string): string[] {
  const found = new Set<string>();
  let repeats = 0;
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length && repeats < MAX_REPORTED) {
    const top = stack[stack.length - 1];
    switch (text[i]) {
      case '{':
        stack.push({ kind: 'object', keys: new Set(), key: '', awaitingKey: true });
        break;
      case '[':
        stack.push({ kind: 'array', index: 0 });
        break;
      case '}':
      case ']':
        stack.pop();
        break;
      case ',':
        if (top?.kind === 'object') top.awaitingKey = true;
        else if (top) top.index += 1;
        break;
      case ':':
        if (top?.kind === 'object') top.awaitingKey = false;
        break;
      case '"': {
        const end = closingQuote(text, i);
        if (top?.kind === 'object' && top.awaitingKey) {
          const raw = text.slice(i + 1, end);
          const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
          if (top.keys.has(key)) {
            found.add(pathOf(stack, key));
            repeats += 1;
          }
          top.keys.add(key);
          top.key = key;
        }
        i = end;
        break;
      }
    }
    i += 1;
  }
  return [...found];
}

/** The index of the quote that closes the string opening at `start`. */
function closingQuote(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}

/** Where `key` of the innermost object sits: the keys and indexes of the objects and arrays around it. */
function pathOf(stack: readonly Frame[], key: string): string {
  const outer = stack
    .slice(0, -1)
    .map((frame) => (frame.kind === 'object' ? frame.key : String(frame.index)));
  return [...outer, key].join('.');
}
