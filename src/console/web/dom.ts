/**
 * The one way the page makes DOM: elements from a tag, a few known attributes and children,
 * where a string child is always a text node. Nothing here parses markup (no innerHTML,
 * insertAdjacentHTML or document.write; the page's CSP requires Trusted Types, so such a call
 * would throw). Text an MCP server wrote goes through `serverText`, which also shows the
 * characters a reader cannot see.
 */

export type Child = Node | string | number | undefined | false;

export interface Props {
  class?: string;
  id?: string;
  title?: string;
  /** Only a route of the page itself: `#/…`. */
  href?: `#/${string}` | '#/';
  role?: string;
  type?: string;
  name?: string;
  value?: string;
  for?: string;
  scope?: string;
  hidden?: boolean;
  checked?: boolean;
  disabled?: boolean;
  tabindex?: number;
  aria?: Record<string, string>;
  dataset?: Record<string, string>;
  on?: { [E in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[E]) => void };
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  const { aria, dataset, on, hidden, checked, disabled, tabindex, ...attributes } = props;
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) el.setAttribute(name, String(value));
  }
  for (const [name, value] of Object.entries(aria ?? {})) el.setAttribute(`aria-${name}`, value);
  for (const [name, value] of Object.entries(dataset ?? {})) el.dataset[name] = value;
  if (hidden === true) el.hidden = true;
  if (checked !== undefined && el instanceof HTMLInputElement) el.checked = checked;
  if (disabled === true) el.setAttribute('disabled', '');
  if (tabindex !== undefined) el.tabIndex = tabindex;
  for (const [type, listener] of Object.entries(on ?? {})) {
    el.addEventListener(type, listener as EventListener);
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Empties `el` and fills it with `children`. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

/**
 * Characters that change how text is shown or hide what it says: controls (C0 and C1; tab and
 * newline are left to pre-wrapped text, which shows them as what they are), format characters
 * (zero-width spaces and joiners, the bidi marks, embeddings, overrides and isolates of
 * CVE-2021-42574, the invisible tag characters U+E0000–E007F that can carry a hidden message),
 * lone surrogates, private-use characters, line and paragraph separators, and every other
 * default-ignorable code point (soft hyphen, variation selectors, blank Hangul fillers).
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

/** Shown as they are: pre-wrapped text lays them out. */
const LAYOUT = new Set(['\t', '\n']);

/** Names of the hidden characters a reviewer most often meets. */
const NAMES: Record<number, string> = {
  0x0d: 'CARRIAGE RETURN',
  0x1b: 'ESCAPE',
  0xad: 'SOFT HYPHEN',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
};

/**
 * Hidden characters marked one by one in a single text; past this many the rest are counted
 * in one marker, so that a megabyte of zero-width spaces cannot make a million elements.
 */
export const MARKED_MAX = 500;

export function codePointLabel(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Server-written text as DOM: text nodes, with every hidden character replaced by a visible
 * marker naming its code point (`⟨U+202E⟩`), so that a bidi override cannot reorder what
 * follows it and a zero-width character cannot hide.
 */
export function serverText(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  let start = 0;
  let marked = 0;
  let unmarked = 0;
  for (const match of text.matchAll(HIDDEN)) {
    if (LAYOUT.has(match[0])) continue;
    const at = match.index;
    if (at > start) fragment.appendChild(document.createTextNode(text.slice(start, at)));
    start = at + match[0].length;
    if (marked < MARKED_MAX) {
      fragment.appendChild(marker(match[0]));
      marked += 1;
    } else unmarked += 1;
  }
  if (start < text.length) fragment.appendChild(document.createTextNode(text.slice(start)));
  if (unmarked > 0) {
    fragment.appendChild(
      h('span', { class: 'cp' }, `⟨${unmarked} more hidden characters, not shown⟩`),
    );
  }
  return fragment;
}

function marker(char: string): HTMLElement {
  const label = codePointLabel(char);
  const name = NAMES[char.codePointAt(0) ?? 0];
  return h(
    'span',
    { class: 'cp', title: name === undefined ? `hidden character ${label}` : `${label} ${name}` },
    `⟨${label}⟩`,
  );
}

/** An ISO time as the reader's local time, and how long ago. */
export function when(iso: string | undefined): string {
  if (iso === undefined) return '—';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return `${new Date(ms).toLocaleString()} (${ago(Date.now() - ms)})`;
}

export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

export function badge(text: string, kind: string): HTMLElement {
  return h('span', { class: `badge badge-${kind}` }, text);
}
