/**
 * Drift of prompts, resources and resource templates as people read it: lines for
 * `mcp-operator diff` (format.ts prints them after the tools) and sentences for the Drifted
 * condition (src/discovery/status-messages.ts). Keys are shown as status shows them.
 */

import { CATALOG, CATALOG_KINDS } from './catalog-items.ts';
import { type CatalogDrifts, shownKey } from './catalog.ts';

/** `2 prompts changed`, `1 resource added`, … for the summary line. */
export function catalogCounts(drifts: CatalogDrifts): string[] {
  return CATALOG_KINDS.flatMap((kind) => {
    const drift = drifts[kind];
    if (drift === undefined) return [];
    const noun = CATALOG[kind].noun;
    const count = (n: number, what: string) =>
      n === 0 ? [] : [`${n} ${noun}${n === 1 ? '' : 's'} ${what}`];
    return [
      ...count(drift.changed.length, 'changed'),
      ...count(drift.added.length, 'added'),
      ...count(drift.removed.length, 'removed'),
    ];
  });
}

/** One block per changed item, then one row per added and removed one; every item in full. */
export function catalogRows(drifts: CatalogDrifts): string[] {
  const rows: string[] = [];
  for (const kind of CATALOG_KINDS) {
    const drift = drifts[kind];
    if (drift === undefined) continue;
    const noun = CATALOG[kind].noun;
    for (const change of drift.changed) {
      const fields = change.fields.length > 0 ? change.fields.join(', ') : 'unknown fields';
      rows.push(`CHANGED  ${noun} ${change.key}  ${change.severity} (${fields})`);
      rows.push(...change.details.map((detail) => `         ${detail}`));
    }
    for (const key of drift.added) rows.push(`ADDED    ${noun} ${key}  listed, not approved`);
    for (const key of drift.removed) {
      rows.push(`REMOVED  ${noun} ${key}  approved, no longer listed`);
    }
  }
  return rows;
}

/** Names listed per sentence; status.drift and `mcp-operator diff` have them all. */
const SENTENCE_KEYS = 5;

/** One sentence per kind that drifted, for the Drifted condition. */
export function catalogSentences(drifts: CatalogDrifts): string[] {
  return CATALOG_KINDS.flatMap((kind) => {
    const drift = drifts[kind];
    if (drift === undefined) return [];
    const list = (keys: string[]) => {
      const shown = keys.slice(0, SENTENCE_KEYS).map((key) => `'${shownKey(key)}'`);
      const more = keys.length > SENTENCE_KEYS ? ` and ${keys.length - SENTENCE_KEYS} more` : '';
      return `${shown.join(', ')}${more}`;
    };
    const parts = [
      drift.changed.length > 0
        ? `changed ${list(drift.changed.map((c) => `${c.key} (${c.severity})`))}`
        : '',
      drift.added.length > 0 ? `not approved ${list(drift.added)}` : '',
      drift.removed.length > 0 ? `approved but no longer listed ${list(drift.removed)}` : '',
    ].filter((part) => part !== '');
    const what = `${CATALOG[kind].noun.charAt(0).toUpperCase()}${CATALOG[kind].noun.slice(1)}s`;
    return [`${what}: ${parts.join('; ')}.`];
  });
}
