/**
 * Text an MCP server controls (names, versions, capability keys, error messages, descriptions)
 * as the operator stores or prints it: control characters made visible, length bounded.
 *
 * A terminal acts on what it receives: `ESC [2J` clears the screen, a bare `\r` lets the rest
 * of a line overwrite its start (so a poisoned description shows as the harmless one it
 * replaced), and bidi overrides reorder what is shown (CVE-2021-42574, "Trojan Source"). None of
 * that may reach `kubectl`, an Event or `mcp-operator diff` from a server. The escapes are
 * YAML's (YAML 1.2 §5.7), which `mcp-operator approve` prints through js-yaml, so both commands
 * show one character the same way.
 */

import { SERVER_TEXT_MAX } from '../tool-record.ts';

/** A condition message or `lastError`: long enough to act on, far below the CRD's 32768. */
export const MESSAGE_MAX = 4096;

/** What discovery shows of a server-chosen name, version or key: the CRD's bound for them. */
export const NAME_MAX = SERVER_TEXT_MAX;

/** Escapes YAML has a short form for. */
const SHORT: Record<string, string> = {
  '\u0000': '\\0',
  '\u0007': '\\a',
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\v': '\\v',
  '\f': '\\f',
  '\r': '\\r',
  '\u001b': '\\e',
  '\u0085': '\\N',
  '\u2028': '\\L',
  '\u2029': '\\P',
};

/**
 * Control characters (C0, DEL, C1), lone surrogates, line and paragraph separators, and the
 * invisible formatting characters that change how text around them is shown: the Arabic letter
 * mark, zero-width spaces and joiners, direction marks, bidi embeddings, overrides and
 * isolates, word joiners and the byte order mark.
 */
const INVISIBLE =
  /[\p{Cc}\p{Cs}\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/gu;

function escape(char: string): string {
  const short = SHORT[char];
  if (short !== undefined) return short;
  const code = char.charCodeAt(0);
  const hex = code.toString(16).toUpperCase();
  return code <= 0xff ? `\\x${hex.padStart(2, '0')}` : `\\u${hex.padStart(4, '0')}`;
}

/** `text` with every invisible or controlling character written as its escape. */
export function visible(text: string): string {
  return text.replace(INVISIBLE, escape);
}

/**
 * `text` cut to at most `max` characters, saying how much was left out. Never cuts a
 * surrogate pair in two, which JSON would carry as an invalid character.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (omitted: number) => `… (${omitted} more characters)`;
  let end = Math.max(0, max - marker(text.length).length);
  if (/[\ud800-\udbff]/.test(text.charAt(end - 1))) end -= 1;
  return `${text.slice(0, end)}${marker(text.length - end)}`;
}

/** Server-provided text for status, an Event or a terminal: visible, then bounded. */
export function shown(text: string, max: number): string {
  return clip(visible(text), max);
}
