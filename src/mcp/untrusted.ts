/**
 * Reading JSON that a client or a server wrote. Two things in it can hurt the reader even
 * when it parses:
 *
 * - Nesting. `JSON.parse` takes any depth, but serializing the value again (for a child's
 *   stdin, a client's answer, a digest) recurses, and past about 5,000 levels it throws
 *   `RangeError` — 20 KB of brackets do it. Messages are refused above MAX_NESTING_DEPTH, as
 *   text, before anything else reads them.
 * - Keys. A name a client or server chose (`toString`, `constructor`, `__proto__`) used as a
 *   key of a plain object finds what Object.prototype holds. `ownValue` reads own keys only.
 */

/**
 * The deepest nesting of objects and arrays a message may have. Far beyond any real schema or
 * result (JSON Schema documents rarely pass 20), far below where serializing fails.
 */
export const MAX_NESTING_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/**
 * Whether JSON text, as UTF-8 bytes, nests objects and arrays deeper than `limit`. One pass,
 * strings skipped with `indexOf` (most of a large message is strings); the text need not be
 * valid JSON (the parser judges that). Every byte it looks at is ASCII, and no byte of a
 * multi-byte UTF-8 sequence is.
 */
export function nestsDeeperThan(bytes: Uint8Array, limit = MAX_NESTING_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) i = endOfString(bytes, i);
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}

/** Past this many bytes into a string, the rest is searched with `indexOf` (native). */
const SHORT_STRING = 64;

/** The index of the quote that ends the string opened at `open`; the length if none does. */
function endOfString(bytes: Uint8Array, open: number): number {
  const short = Math.min(bytes.length, open + SHORT_STRING);
  for (let i = open + 1; i < short; i++) {
    const c = bytes[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  for (let quote = short - 1; ;) {
    quote = bytes.indexOf(QUOTE, quote + 1);
    if (quote === -1) return bytes.length;
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
}

/** `record[key]` when `key` is the record's own, else undefined: never Object.prototype's. */
export function ownValue<T>(
  record: Readonly<Record<string, T>> | undefined,
  key: string,
): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
