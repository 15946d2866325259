/**
 * Drift of prompts, resources and resource templates: how the items a server lists
 * (catalog-items.ts) differ from the approved ones, judged with the same severities as tools.
 * Pure functions, deterministic output (keys in RFC 8785 order).
 *
 * Sources: MCP 2025-11-25 server/prompts (`Prompt`, `PromptArgument`), server/resources
 * (`Resource`, `ResourceTemplate`); the same in 2026-07-28.
 */

import { isDeepStrictEqual } from 'node:util';
import type { DriftSeverity, DriftStatus } from '../api/v1alpha1/mcpserver.ts';
import { CATALOG_DRIFT_MAX, CATALOG_KEY_MAX } from '../tool-record.ts';
import { approvedItemDigest, type CatalogBaseline, type CatalogBaselineItem } from './baseline.ts';
import {
  CATALOG,
  CATALOG_KINDS,
  type Catalog,
  type CatalogItem,
  type CatalogKind,
} from './catalog-items.ts';
import { compareNames } from './digest.ts';
import { highest } from './severity.ts';
import { shown } from './text.ts';

export interface CatalogChange {
  key: string;
  fields: string[];
  severity: DriftSeverity;
  /** One line per finding, e.g. `arguments: city now required`. */
  details: string[];
}

export interface CatalogDrift {
  added: string[];
  removed: string[];
  changed: CatalogChange[];
}

export type CatalogDrifts = Partial<Record<CatalogKind, CatalogDrift>>;

/**
 * Drift of every kind the baseline approves. A kind the server does not offer counts as
 * empty: approved prompts that are no longer listed are removed.
 */
export function catalogDrift(catalog: Catalog, baseline: CatalogBaseline): CatalogDrifts {
  const drifts: CatalogDrifts = {};
  for (const kind of CATALOG_KINDS) {
    const approved = baseline[kind];
    if (approved === undefined) continue;
    const drift = kindDrift(kind, catalog[kind] ?? [], approved);
    if (drift.added.length + drift.removed.length + drift.changed.length > 0) drifts[kind] = drift;
  }
  return drifts;
}

function kindDrift(
  kind: CatalogKind,
  items: readonly CatalogItem[],
  approved: readonly CatalogBaselineItem[],
): CatalogDrift {
  const listed = new Map<string, CatalogItem>();
  for (const item of items) if (!listed.has(item.key)) listed.set(item.key, item);
  const known = new Map(approved.map((entry) => [entry.key, entry]));
  const changed: CatalogChange[] = [];
  for (const entry of known.values()) {
    const current = listed.get(entry.key);
    const change = current === undefined ? undefined : compareItem(kind, entry, current);
    if (change !== undefined) changed.push(change);
  }
  return {
    added: sorted([...listed.keys()].filter((key) => !known.has(key))),
    removed: sorted([...known.keys()].filter((key) => !listed.has(key))),
    changed: changed.sort((a, b) => compareNames(a.key, b.key)),
  };
}

function compareItem(
  kind: CatalogKind,
  entry: CatalogBaselineItem,
  current: CatalogItem,
): CatalogChange | undefined {
  if (approvedItemDigest(kind, entry) === current.digest) return undefined;
  if (entry.definition === undefined) {
    const details = [
      'the baseline has only a digest: approve with definitions to see what changed',
    ];
    return { key: entry.key, fields: [], severity: 'breaking', details };
  }
  const before = { ...entry.definition, [CATALOG[kind].key]: entry.key };
  const fields = CATALOG[kind].fields.filter(
    (field) => !isDeepStrictEqual(before[field], current.definition[field]),
  );
  const verdicts = fields.map((field) => judge(field, before[field], current.definition[field]));
  return {
    key: entry.key,
    fields,
    severity: worst(verdicts.map((v) => v.severity)),
    details: verdicts.flatMap((v) => v.details),
  };
}

interface Verdict {
  severity: DriftSeverity;
  details: string[];
}

/**
 * Text the model reads is description-only, as for tools; annotations are hints (compatible);
 * a changed MIME type changes what a reader gets (breaking); prompt arguments are judged one
 * by one, as a tool's inputSchema is.
 */
function judge(field: string, before: unknown, after: unknown): Verdict {
  switch (field) {
    case 'name':
    case 'title':
    case 'description':
      return { severity: 'description-only', details: [`${field} changed`] };
    case 'annotations':
      return { severity: 'compatible', details: ['annotations changed'] };
    case 'arguments':
      return judgeArguments(before, after);
    default:
      return {
        severity: 'breaking',
        details: [
          `${field}: ${JSON.stringify(before) ?? 'unset'} → ${JSON.stringify(after) ?? 'unset'}`,
        ],
      };
  }
}

interface Argument {
  name: string;
  required: boolean;
  text: unknown[];
}

/**
 * A prompt's arguments (2025-11-25 `PromptArgument`): a removed argument or a new required one
 * breaks a caller that fills the old ones; a new optional one does not; a changed description
 * or title is text the model reads.
 */
function judgeArguments(before: unknown, after: unknown): Verdict {
  const was = argumentsOf(before);
  const now = argumentsOf(after);
  if (was === undefined || now === undefined) {
    return { severity: 'breaking', details: ['arguments are not a list of named arguments'] };
  }
  const verdicts: Verdict[] = [];
  for (const [name, arg] of was) {
    const next = now.get(name);
    if (next === undefined) verdicts.push(verdict('breaking', `argument ${name} removed`));
    else if (next.required !== arg.required) {
      verdicts.push(
        next.required
          ? verdict('breaking', `argument ${name} now required`)
          : verdict('compatible', `argument ${name} no longer required`),
      );
    }
    if (next !== undefined && !isDeepStrictEqual(next.text, arg.text)) {
      verdicts.push(verdict('description-only', `argument ${name}: text changed`));
    }
  }
  for (const [name, arg] of now) {
    if (was.has(name)) continue;
    verdicts.push(
      arg.required
        ? verdict('breaking', `required argument ${name} added`)
        : verdict('compatible', `optional argument ${name} added`),
    );
  }
  return {
    severity: worst(verdicts.map((v) => v.severity)),
    details: verdicts.flatMap((v) => v.details),
  };
}

function verdict(severity: DriftSeverity, detail: string): Verdict {
  return { severity, details: [detail] };
}

function argumentsOf(value: unknown): Map<string, Argument> | undefined {
  if (value === undefined) return new Map();
  if (!Array.isArray(value)) return undefined;
  const args = new Map<string, Argument>();
  for (const arg of value as unknown[]) {
    const { name, required, title, description } = (arg ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string') return undefined;
    args.set(name, { name, required: required === true, text: [title, description] });
  }
  return args;
}

/** The worst severity; a change nothing explains (only the key's digest moved) is breaking. */
function worst(severities: readonly DriftSeverity[]): DriftSeverity {
  return highest(severities) ?? 'breaking';
}

function sorted(keys: string[]): string[] {
  return [...new Set(keys)].sort(compareNames);
}

/**
 * status.drift's part for prompts and resources: keys made visible and cut, each list bounded,
 * empty lists left out (`mcp-operator diff` shows everything).
 */
export function catalogDriftStatus(drifts: CatalogDrifts): Pick<DriftStatus, CatalogKind> {
  const status: Pick<DriftStatus, CatalogKind> = {};
  for (const kind of CATALOG_KINDS) {
    const drift = drifts[kind];
    if (drift === undefined) continue;
    const keys = (list: string[]) => list.slice(0, CATALOG_DRIFT_MAX).map(shownKey);
    status[kind] = {
      ...(drift.added.length > 0 ? { added: keys(drift.added) } : {}),
      ...(drift.removed.length > 0 ? { removed: keys(drift.removed) } : {}),
      ...(drift.changed.length > 0
        ? {
            changed: drift.changed
              .slice(0, CATALOG_DRIFT_MAX)
              .map(({ key, fields, severity }) => ({ key: shownKey(key), fields, severity })),
          }
        : {}),
    };
  }
  return status;
}

/** A prompt name or resource URI as status and messages show it. */
export function shownKey(key: string): string {
  return shown(key, CATALOG_KEY_MAX);
}
