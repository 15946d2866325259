/**
 * The sentences of the Discovered and Drifted conditions that are more than one line of
 * code: what drifted, in a message short enough for `kubectl describe`.
 */

import { type Drift, apartFromRenames, shownInvalidName } from '../tools/drift.ts';
import { percent } from '../tools/renames.ts';
import { catalogSentences } from '../tools/catalog-format.ts';

/** Names listed in a condition message; status.drift and `mcp-operator diff` have them all. */
const MESSAGE_NAMES = 10;

function names(list: readonly string[]): string {
  const shown = list.slice(0, MESSAGE_NAMES).join(', ');
  return list.length > MESSAGE_NAMES ? `${shown} and ${list.length - MESSAGE_NAMES} more` : shown;
}

/** One sentence per kind of drift, and how to see the details. */
export function driftMessage(server: { name: string; namespace: string }, drift: Drift): string {
  const { name, namespace } = server;
  const changed = drift.changed.map(
    (c) => `${c.name} (${c.severity}${c.fields.length > 0 ? `: ${c.fields.join(', ')}` : ''})`,
  );
  const text = drift.changed.some((c) =>
    c.fields.some((f) => f === 'description' || f === 'title'),
  );
  const renamed = drift.renamed.map(
    (r) => `${r.from} → ${r.to} (${percent(r.similarity)}% similar, not approved)`,
  );
  const { added, removed } = apartFromRenames(drift);
  const parts = [
    changed.length > 0 ? `Changed: ${names(changed)}.` : '',
    text ? 'Text the model reads changed: review it before approving.' : '',
    renamed.length > 0 ? `Renamed: ${names(renamed)}.` : '',
    added.length > 0 ? `Not approved: ${names(added)}.` : '',
    removed.length > 0 ? `Approved but no longer listed: ${names(removed)}.` : '',
    drift.missingAllowed.length > 0
      ? `In spec.tools.allow but not listed: ${names(drift.missingAllowed)}.`
      : '',
    drift.invalidNames.length > 0
      ? `Names that break MCP's tool-name rules, which cannot be approved: ${names(drift.invalidNames.map((n) => `'${shownInvalidName(n)}'`))}.`
      : '',
    ...catalogSentences(drift.catalog),
    `See \`mcp-operator diff ${name} -n ${namespace}\`.`,
  ];
  return parts.filter((part) => part !== '').join(' ');
}

/** `1 tool`, `3 tools`. */
export function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}
