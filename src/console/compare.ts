/**
 * Approved against current, as a reviewer reads it: text word by word (a poisoned description
 * is a few changed words in a long text), JSON line by line after pretty-printing. The
 * comparison is bounded: a rewrite so thorough that marking words costs more than the budget
 * is shown as the two texts whole, with a note, rather than holding up the page.
 */

import { diffLines, diffWordsWithSpace, type ChangeObject } from 'diff';
import type { TextPart } from './web/api-types.ts';

/**
 * Milliseconds one comparison may take. Myers' diff costs O(N·D); two unrelated megabyte
 * descriptions would otherwise take seconds of the console's one thread.
 */
export const COMPARE_BUDGET_MS = 100;

/** Edits past which a comparison is given up: marks over most of a text tell nothing. */
const MAX_EDITS = 5_000;

function parts(changes: ChangeObject<string>[] | undefined): TextPart[] | undefined {
  return changes?.map((c) => ({ op: c.added ? '+' : c.removed ? '-' : '=', text: c.value }));
}

/**
 * `approved` and `current` word by word. Whitespace counts: a run of newlines that pushes the
 * rest of a description out of view is a change too. Undefined when over the budget.
 */
export function compareText(approved: string, current: string): TextPart[] | undefined {
  return parts(
    diffWordsWithSpace(approved, current, { timeout: COMPARE_BUDGET_MS, maxEditLength: MAX_EDITS }),
  );
}

/** Two pretty-printed JSON texts line by line. Undefined when over the budget. */
export function compareLines(approved: string, current: string): TextPart[] | undefined {
  return parts(
    diffLines(approved, current, { timeout: COMPARE_BUDGET_MS, maxEditLength: MAX_EDITS }),
  );
}

/** A JSON value as the page shows it: two-space indented; undefined stays undefined. */
export function pretty(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value, null, 2);
}
