/**
 * A planned approval as a person reads it before it is written (`mcp-operator approve --apply`
 * or `--dry-run`): each entry added, changed or removed, with its severity, the fields that
 * changed, the text the model reads (in full: rewriting it is how a tool is poisoned) and the
 * findings on it. Every line goes through `visible`, so a control character in a description
 * cannot redraw the terminal into something else.
 */

import { visible } from '../tools/text.ts';
import type { ApprovalPlan, PlannedEntry } from './plan.ts';

export function formatPlan(plan: ApprovalPlan): string {
  const who = `${plan.namespace}/${plan.name}`;
  const lines = [
    plan.entries.length === 0
      ? `${who}: snapshot ${plan.snapshotDigest} adds, changes and removes nothing approved.`
      : `${who}: approving snapshot ${plan.snapshotDigest} ${counts(plan.entries)}:`,
    ...(plan.replacesInvalid === undefined
      ? []
      : [`  the baseline it replaces is invalid: ${plan.replacesInvalid}`]),
    ...plan.entries.flatMap(entryLines),
    ...(plan.leftOut.length === 0
      ? []
      : [`LEFT OUT ${plan.leftOut.join(', ')}  names that break MCP's tool-name rules`]),
  ];
  return `${lines.map(visible).join('\n')}\n`;
}

function counts(entries: readonly PlannedEntry[]): string {
  const of = (change: PlannedEntry['change']) => entries.filter((e) => e.change === change).length;
  const parts = (['added', 'changed', 'renamed', 'removed'] as const)
    .map((change) => [of(change), change] as const)
    .filter(([n]) => n > 0)
    .map(([n, change]) => `${n} ${change}`);
  return `(${parts.join(', ')})`;
}

function entryLines(entry: PlannedEntry): string[] {
  const fields = entry.fields.length === 0 ? '' : ` (${entry.fields.join(', ')})`;
  const kind = entry.kind === 'tool' ? '' : `${entry.kind} `;
  const name = entry.from === undefined ? entry.name : `${entry.from} → ${entry.name}`;
  const similar = entry.similarity === undefined ? '' : `, ${entry.similarity}% similar`;
  return [
    `${entry.change.toUpperCase().padEnd(8)} ${kind}${name}  ${entry.severity}${similar}${fields}`,
    ...entry.texts.flatMap(({ field, before, after }) => [
      `  !! ${field}${entry.change === 'added' ? '' : ' changed'}: the model reads this text. Review it:`,
      ...(before === undefined || entry.change === 'added' ? [] : quote('-', before)),
      ...quote('+', after),
    ]),
    ...entry.details.map((detail) => `         ${detail}`),
    ...entry.findings.map((finding) => `  finding: ${finding}`),
  ];
}

function quote(sign: string, text: string | undefined): string[] {
  if (text === undefined) return [`     ${sign} (none)`];
  return text.split('\n').map((line) => `     ${sign} ${line}`);
}
