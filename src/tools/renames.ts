/**
 * Renames: an approved tool that is gone and a new one that reads and takes arguments nearly
 * as it did are one `renamed` change, with how similar they are. A rename is how a tool slips
 * past an approval keyed by name (the "rug pull"); telling a reviewer "search is find renamed,
 * 93% similar" beats two unrelated lines. It never carries approval over: the new name stays
 * unapproved, and the change drift until a person approves it (docs/judging.md, "Renames").
 *
 * The measure (docs/judging.md explains the choice): the Jaccard index |A ∩ B| / |A ∪ B| of
 * two tools' features, which are the words and the pairs of adjacent words of the text the
 * model reads (title, description, and every title and description inside the schemas,
 * lower-cased) and the leaves of the canonical schemas (inputSchema, outputSchema,
 * annotations, execution) as `field/pointer=JSON value`, with arrays of plain values as sets.
 * Jaccard is symmetric, 1 for identical sets and 0 for disjoint ones, blind to key order and
 * formatting, and cheap to bound. One set for all three kinds lets each count as much as it
 * says: word pairs tell "the reviews on" from "the review comments on", which single words of a
 * short description do not, and a schema of one leaf shared by every tool of a server (all
 * `{"type": "object"}`) weighs one feature, not half the answer.
 *
 * Pure. Cost is bounded whatever a server lists: each tool's features are read from at most
 * TEXT_READ_MAX characters and SCHEMA_NODES_MAX schema nodes and kept to FEATURES_MAX of each
 * kind, and at most RENAME_CANDIDATES_MAX removed × as many added tools are compared, so
 * pairing costs O(n·m) with n, m ≤ 100 and each comparison O(FEATURES_MAX).
 */

import type { DigestField } from './digest.ts';

/**
 * The similarity from which a removed and an added tool pair as a rename. Set above the most
 * alike distinct tools of any recorded real release (test/tools/findings-corpus: 86%, a
 * release that lost its schemas, where list_directory_with_sizes reads as list_directory with
 * a sentence more; 80% among releases with schemas), so that no two tools of one release ever
 * pair; a rename that edits a word of the description or adds an argument stays above it
 * (test/tools/renames.test.ts).
 */
export const RENAME_SIMILARITY_MIN = 0.87;
/** Removed and added tools each, in name order, that pairing considers; the rest stay apart. */
export const RENAME_CANDIDATES_MAX = 100;
/** Distinct words, word pairs and schema leaves kept per tool, of each. */
export const FEATURES_MAX = 512;
/** Characters of text read per tool: a 1 MB description costs what 20,000 characters cost. */
const TEXT_READ_MAX = 20_000;
/** Schema nodes visited per tool: a schema 1,000 levels deep costs what 4,096 nodes cost. */
const SCHEMA_NODES_MAX = 4096;

/** What similarity reads of a tool: its words (`w:`), word pairs (`p:`) and schema leaves (`l:`). */
export type ToolFeatures = ReadonlySet<string>;

/** A removed tool and an added one taken for the same tool renamed. */
export interface RenamePair {
  from: string;
  to: string;
  /** In [RENAME_SIMILARITY_MIN, 1]; 1 when nothing but the name changed. */
  similarity: number;
}

/** The fields whose values are schemas or hints, compared leaf by leaf. */
const SCHEMA_FIELDS = ['inputSchema', 'outputSchema', 'annotations', 'execution'] as const;
/** Keys whose string values are text the model reads, wherever they stand. */
const TEXT_KEYS = new Set(['title', 'description']);
const WORD = /[\p{L}\p{N}]+/gu;

/** The features of a tool definition (as listed, or as approved with its definition). */
export function toolFeatures(definition: Readonly<Record<string, unknown>>): ToolFeatures {
  const features = new Set<string>();
  const kept = { w: 0, p: 0, l: 0 };
  const add = (kind: keyof typeof kept, feature: string) => {
    const key = `${kind}:${feature}`;
    if (kept[kind] === FEATURES_MAX || features.has(key)) return;
    features.add(key);
    kept[kind]++;
  };
  let budget = TEXT_READ_MAX;
  const read = (text: unknown) => {
    if (typeof text !== 'string' || budget <= 0) return;
    const part = text.slice(0, budget);
    budget -= part.length;
    let previous: string | undefined;
    for (const [word] of part.toLowerCase().matchAll(WORD)) {
      if (kept.w === FEATURES_MAX && kept.p === FEATURES_MAX) return;
      add('w', word);
      if (previous !== undefined) add('p', `${previous} ${word}`);
      previous = word;
    }
  };
  read(definition.title);
  read(definition.description);
  let nodes = SCHEMA_NODES_MAX;
  for (const field of SCHEMA_FIELDS) {
    const stack: { path: string; node: unknown }[] = [{ path: field, node: definition[field] }];
    while (stack.length > 0 && nodes-- > 0) {
      const { path, node } = stack.pop()!;
      if (node === undefined) continue;
      if (typeof node !== 'object' || node === null) {
        add('l', `${path}=${JSON.stringify(node)}`);
        continue;
      }
      if (Array.isArray(node)) {
        // Plain values as a set (a reordered `required` or `enum` is the same); schemas by place.
        for (const [i, item] of (node as unknown[]).entries()) {
          const plain = typeof item !== 'object' || item === null;
          stack.push({ path: plain ? `${path}/[]` : `${path}/${i}`, node: item });
        }
        continue;
      }
      for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
        if (TEXT_KEYS.has(key) && typeof value === 'string') read(value);
        else stack.push({ path: `${path}/${escape(key)}`, node: value });
      }
    }
  }
  return features;
}

/** RFC 6901 escaping, so that a key with a `/` cannot pose as a deeper path. */
function escape(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** |a ∩ b| / |a ∪ b|; two empty sets are the same (1). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let common = 0;
  for (const item of small) if (large.has(item)) common++;
  return common / (a.size + b.size - common);
}

/** The most jaccard can be for sets of these sizes: the smaller inside the larger. */
function jaccardBound(a: number, b: number): number {
  return a === 0 && b === 0 ? 1 : Math.min(a, b) / Math.max(a, b);
}

/** How similar two tools are, in [0, 1]: symmetric, 1 for the same features. */
export function similarity(a: ToolFeatures, b: ToolFeatures): number {
  return jaccard(a, b);
}

/**
 * How similar two tools are when the baseline has their field digests only: the share of
 * fields whose digests agree (an abbreviated approved digest agrees with the full one it
 * starts). Only a tool whose every field stayed the same reaches 1.
 */
export function fieldSimilarity(
  approved: Partial<Record<DigestField, string>>,
  listed: Partial<Record<DigestField, string>>,
): number {
  const fields = new Set([...Object.keys(approved), ...Object.keys(listed)]) as Set<DigestField>;
  if (fields.size === 0) return 1;
  let same = 0;
  for (const field of fields) {
    const was = approved[field];
    const now = listed[field];
    if (was !== undefined && now !== undefined && now.startsWith(was)) same++;
  }
  return same / fields.size;
}

/**
 * Pairs removed with added tools, one to one: every pair at or above RENAME_SIMILARITY_MIN,
 * most similar first (ties by names, so the answer does not depend on list order), each tool
 * in at most one pair. `compare` answers undefined for a pair it cannot judge. Only the first
 * RENAME_CANDIDATES_MAX of each list (the caller orders them) are considered.
 */
export function pairRenames<R extends { name: string }, A extends { name: string }>(
  removed: readonly R[],
  added: readonly A[],
  compare: (removed: R, added: A) => number | undefined,
): RenamePair[] {
  const candidates: RenamePair[] = [];
  for (const r of removed.slice(0, RENAME_CANDIDATES_MAX)) {
    for (const a of added.slice(0, RENAME_CANDIDATES_MAX)) {
      const value = compare(r, a);
      if (value !== undefined && value >= RENAME_SIMILARITY_MIN) {
        candidates.push({ from: r.name, to: a.name, similarity: value });
      }
    }
  }
  candidates.sort(
    (x, y) =>
      y.similarity - x.similarity ||
      (x.from < y.from ? -1 : x.from > y.from ? 1 : 0) ||
      (x.to < y.to ? -1 : x.to > y.to ? 1 : 0),
  );
  const taken = new Set<string>();
  const pairs: RenamePair[] = [];
  for (const pair of candidates) {
    if (taken.has(`-${pair.from}`) || taken.has(`+${pair.to}`)) continue;
    taken.add(`-${pair.from}`);
    taken.add(`+${pair.to}`);
    pairs.push(pair);
  }
  return pairs;
}

/** `compare` for pairRenames over features, skipping pairs whose sizes already rule them out. */
export function compareFeatures(a: ToolFeatures, b: ToolFeatures): number | undefined {
  return jaccardBound(a.size, b.size) < RENAME_SIMILARITY_MIN ? undefined : similarity(a, b);
}

/** A similarity as people read it: a whole percent, never rounded up to 100. */
export function percent(similarity: number): number {
  return Math.floor(similarity * 100 + 1e-9);
}
