/**
 * Drift as a person reads it (`mcp-operator diff`): one block per tool, changed tools first.
 * A changed description or title is printed in full, old and new, because that text is what
 * the model reads and rewriting it is how a tool is poisoned ("rug pull"). Every line goes to
 * a terminal with its control characters made visible (text.ts), as `approve` prints them:
 * a `\r` or an escape sequence in a description must not redraw it as the text it replaced.
 */

import type { Drift, TextChange, ToolChange, ToolRename } from './drift.ts';
import { apartFromRenames, isDrifted } from './drift.ts';
import { percent } from './renames.ts';
import { visible } from './text.ts';
import { catalogCounts, catalogRows } from './catalog-format.ts';

const INVALID_NOTE =
  "the name breaks MCP's tool-name rules (1 to 128 of A-Z a-z 0-9 _ - .): it cannot be approved";

export function formatDrift(drift: Drift): string {
  if (!isDrifted(drift)) return 'No drift: the listed tools match the approved baseline.\n';
  const lines = [summary(drift), ''];
  const { added, removed } = apartFromRenames(drift);
  for (const change of drift.changed) lines.push(...formatChange(change));
  for (const rename of drift.renamed) lines.push(...formatRename(rename));
  for (const name of added) lines.push(row('ADDED', name, 'listed, not approved'));
  for (const name of removed) lines.push(row('REMOVED', name, 'approved, no longer listed'));
  for (const name of drift.missingAllowed) {
    lines.push(row('MISSING', name, 'in spec.tools.allow, not listed by the server'));
  }
  for (const name of drift.invalidNames) lines.push(row('INVALID', name, INVALID_NOTE));
  lines.push(...catalogRows(drift.catalog));
  return `${lines.map(visible).join('\n')}\n`;
}

function summary(drift: Drift): string {
  const poisoned = drift.changed.filter((c) => c.basis !== 'digest' && c.texts.length > 0).length;
  const { added, removed } = apartFromRenames(drift);
  const parts = [
    count(drift.changed.length, 'changed'),
    count(drift.renamed.length, 'renamed'),
    count(added.length, 'added'),
    count(removed.length, 'removed'),
    count(drift.missingAllowed.length, 'allowlisted but missing'),
    count(drift.invalidNames.length, "with a name that breaks MCP's tool-name rules"),
    ...catalogCounts(drift.catalog),
  ].filter((part) => part !== '');
  const warning = poisoned > 0 ? ` — ${poisoned} with changed text the model reads` : '';
  return `Drift: ${parts.join(', ')}${warning}.`;
}

function count(n: number, what: string): string {
  return n === 0 ? '' : `${n} ${n === 1 ? 'tool' : 'tools'} ${what}`;
}

function row(kind: string, name: string, note: string): string {
  return `${kind.padEnd(8)} ${name}  ${note}`;
}

function formatChange(change: ToolChange): string[] {
  const fields = change.fields.length > 0 ? change.fields.join(', ') : 'unknown fields';
  const lines = [row('CHANGED', change.name, `${change.severity} (${fields})`)];
  for (const text of change.texts) lines.push(...formatText(text, change.basis));
  for (const detail of change.details) lines.push(`         ${detail}`);
  return lines;
}

/**
 * `RENAMED  old → new  93% similar, breaking (fields)`, then what else changed: the text the
 * model reads in full, as for a changed tool.
 */
function formatRename(rename: ToolRename): string[] {
  const fields = rename.fields.length > 0 ? ` (${rename.fields.join(', ')})` : '';
  const lines = [
    row(
      'RENAMED',
      `${rename.from} → ${rename.to}`,
      `${percent(rename.similarity)}% similar, ${rename.severity}${fields}`,
    ),
  ];
  for (const text of rename.texts) lines.push(...formatText(text, rename.basis));
  for (const detail of rename.details) lines.push(`         ${detail}`);
  return lines;
}

/**
 * A text the model reads, in full: old and new against definitions; against digests, the
 * text now (from the snapshot), since the baseline has only its digest.
 */
export function formatText(change: TextChange, basis: ToolChange['basis']): string[] {
  if (basis === 'definition') {
    return [
      `  !! ${change.field} changed: the model reads this text. Review it before approving:`,
      ...quote('-', change.before),
      ...quote('+', change.after),
    ];
  }
  const heading =
    basis === 'field-digests'
      ? `${change.field} changed; the baseline has its digest only. The text now, which the model reads:`
      : `${change.field} now (the baseline has one digest only, so what changed is unknown); the model reads it:`;
  return [`  !! ${heading}`, ...quote('+', change.after)];
}

function quote(sign: string, text: string | undefined): string[] {
  if (text === undefined) return [`     ${sign} (none)`];
  return text.split('\n').map((line) => `     ${sign} ${line}`);
}

/**
 * An error message as a condition or event shows it: capitalized (unless it starts with a URL,
 * which reads wrong as `Http://`), ending with a period.
 */
export function sentence(text: string): string {
  const capital = /^[a-z][a-z0-9+.-]*:\/\//.test(text)
    ? text
    : text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}
