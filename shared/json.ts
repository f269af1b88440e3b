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
  return scanJson(text).duplicates;
}

/** A JSON number literal with a fraction or an exponent, at the scanner's position. */
const NUMBER = /-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y;

/** Whether a JSON number literal's exact decimal value is a whole number (whatever a double makes of it). */
function isWholeLiteral(integer: string, fraction: string, exponent: string): boolean {
  const digits = integer + fraction;
  // The decimal point sits after this many digits; an exponent past the digits (Infinity too) is a
  // whole number, one before them (-Infinity too) leaves every digit behind the point.
  const point = Math.min(Math.max(integer.length + Number(exponent || '0'), 0), digits.length);
  return /^0*$/.test(digits.slice(point));
}

const isDigit = (code: number) => code >= 48 && code <= 57;

/**
 * One pass over valid JSON text (parse it first) for what `JSON.parse` hides:
 * - `duplicates`: keys given twice in one object (see `duplicateKeys`);
 * - `roundedFractions`: the paths of the numbers written with a fraction that `JSON.parse` reads
 *   as a whole number, the fraction being too small for a double to keep (`100.000000000000001`
 *   reads as 100, `999999999.99999999` as 1000000000). A whole number written with a fraction of
 *   zeros or an exponent (`100.0`, `1e2`) is whole and not reported.
 * At most 10 of each (10 repeats of keys, 10 rounded numbers); the scan ends at the 11th of either,
 * and `complete` says whether every one was reported: false past the 10th of either. A caller
 * deciding on some of them (a partner's money fields) must then take the body as unread.
 */
export function scanJson(text: string): {
  duplicates: string[];
  roundedFractions: string[];
  /**
   * False when some were not reported: the scan ended at the 10th repeated key (more may follow),
   * or found an 11th rounded number.
   */
  complete: boolean;
} {
  const found = new Set<string>();
  const rounded: string[] = [];
  let roundedFound = 0;
  let repeats = 0;
  const stack: Frame[] = [];
  let i = 0;
  // Each report builds its path (as long as the nesting and its keys): past the tenth of either,
  // the scan stops, so a hostile body costs ten paths at most, and says it was not read to the end.
  while (i < text.length && repeats <= MAX_REPORTED && roundedFound <= MAX_REPORTED) {
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
            repeats += 1;
            if (repeats <= MAX_REPORTED) found.add(pathOf(stack, key));
          }
          top.keys.add(key);
          top.key = key;
        }
        i = end;
        break;
      }
      case '-':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9': {
        // Plain integers, most numbers, are skipped digit by digit; only a fraction or an
        // exponent is read whole.
        let end = text[i] === '-' ? i + 1 : i;
        while (end < text.length && isDigit(text.charCodeAt(end))) end += 1;
        if (text[end] !== '.' && text[end] !== 'e' && text[end] !== 'E') {
          i = end - 1;
          break;
        }
        NUMBER.lastIndex = i;
        const literal = NUMBER.exec(text);
        if (!literal) break;
        const [whole, integer = '', fraction = '', exponent = ''] = literal;
        if (Number.isInteger(Number(whole)) && !isWholeLiteral(integer, fraction, exponent)) {
          roundedFound += 1;
          if (rounded.length < MAX_REPORTED) rounded.push(valuePath(stack));
        }
        i += whole.length - 1;
        break;
      }
    }
    i += 1;
  }
  return {
    duplicates: [...found],
    roundedFractions: rounded,
    complete: repeats <= MAX_REPORTED && roundedFound <= MAX_REPORTED,
  };
}

/** A frame's step in a path: the object's current key, or the array's current index. */
const stepOf = (frame: Frame) => (frame.kind === 'object' ? frame.key : String(frame.index));

/** Where a value sits: the keys and indexes of the objects and arrays around it. */
function valuePath(stack: readonly Frame[]): string {
  return stack.map(stepOf).join('.');
}

/** Where `key` of the innermost object sits: the steps of the frames around it, then the key. */
function pathOf(stack: readonly Frame[], key: string): string {
  return [...stack.slice(0, -1).map(stepOf), key].join('.');
}

/** The index of the quote that closes the string opening at `start`. */
function closingQuote(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}
