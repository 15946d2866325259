/**
 * Drift: how the tools a server lists differ from the approved baseline. A pure function of
 * the snapshot, the baseline and the allowlist, with deterministic output (names in RFC 8785
 * order), so that an unchanged server produces an unchanged status and no API write.
 *
 * What can be said depends on the baseline:
 * - full definitions: which fields changed and how severe each change is (schema-diff.ts);
 * - a digest with field digests: which fields changed; severity from the field alone
 *   (title/description: description-only, annotations: widening, schemas: breaking, the most
 *   each field's change can be, since nothing shows that it is less);
 * - a digest alone: only that the tool changed, reported as breaking for the same reason.
 *
 * A removed tool and an added one that are nearly the same are also paired as a rename
 * (renames.ts); both names stay in `added` and `removed`, since approval is by name.
 */

import { isDeepStrictEqual } from 'node:util';
import type { DriftSeverity, DriftStatus } from '../api/v1alpha1/mcpserver.ts';
import { approvedToolDigest, type BaselineTool, type CatalogBaseline } from './baseline.ts';
import { type Catalog, CATALOG_KINDS } from './catalog-items.ts';
import { type DigestField, DIGEST_FIELDS, compareNames, fieldDigests } from './digest.ts';
import { type Effect, type SchemaChange, diffSchemas } from './schema-diff.ts';
import { type SnapshotTool, isToolName } from './snapshot.ts';
import { highest } from './severity.ts';
import { shown } from './text.ts';
import { type CatalogDrifts, catalogDrift } from './catalog.ts';
import {
  type ToolFeatures,
  compareFeatures,
  fieldSimilarity,
  pairRenames,
  percent,
  toolFeatures,
} from './renames.ts';

/**
 * A text the model reads that changed: shown in full by formatDrift, since it is how tools are
 * poisoned. Against a baseline of digests, `before` is unknown (the baseline has its digest
 * only) and `after` is the text now, from the snapshot.
 */
export interface TextChange {
  field: 'title' | 'description' | 'annotations.title';
  before: string | undefined;
  after: string | undefined;
}

export interface ToolChange {
  name: string;
  fields: DigestField[];
  severity: DriftSeverity;
  /** What the baseline allowed to be said about this change. */
  basis: 'definition' | 'field-digests' | 'digest';
  /** One line per finding, e.g. `inputSchema /properties/mode/enum: removed "b"`. */
  details: string[];
  texts: TextChange[];
}

/**
 * An approved tool gone and a new one nearly the same (renames.ts): one change for a reviewer.
 * Always breaking: calls to the old name fail, and the new name is not approved.
 */
export interface ToolRename {
  from: string;
  to: string;
  /** In [RENAME_SIMILARITY_MIN, 1]. */
  similarity: number;
  severity: DriftSeverity;
  /** What the old entry let be compared: its definition, or its field digests. */
  basis: 'definition' | 'field-digests';
  /** The fields that differ besides the name, and what drift says of each. */
  fields: DigestField[];
  details: string[];
  texts: TextChange[];
}

export interface Drift {
  /** Listed but not approved (the new names of renames too: approval is by name). */
  added: string[];
  /** Approved but no longer listed (the old names of renames too). */
  removed: string[];
  changed: ToolChange[];
  /** Pairs of `removed` and `added` that are one tool renamed, by new name. */
  renamed: ToolRename[];
  /** In spec.tools.allow but not listed. */
  missingAllowed: string[];
  /**
   * Listed under a name that breaks MCP's tool-name rules, as listed. Such a tool cannot be
   * approved (the API refuses the name), so it is never `added`: it is a finding of its own,
   * with or without a baseline.
   */
  invalidNames: string[];
  /** Prompts, resources and resource templates, for each kind the baseline approves (catalog.ts). */
  catalog: CatalogDrifts;
}

/** Characters of an invalid name that status.drift.invalidNames keeps (visible, then cut). */
const INVALID_NAME_SHOWN = 64;

export function computeDrift(
  tools: readonly SnapshotTool[],
  baseline: readonly BaselineTool[] | undefined,
  allow: readonly string[] = [],
  catalog?: { listed: Catalog; approved: CatalogBaseline | undefined },
): Drift {
  const listed = new Map<string, SnapshotTool>();
  // A name listed twice is a finding (findings.ts); drift compares the first, as listed.
  for (const tool of tools) {
    if (isToolName(tool.name) && !listed.has(tool.name)) listed.set(tool.name, tool);
  }
  const approved = new Map((baseline ?? []).map((tool) => [tool.name, tool]));
  const changed: ToolChange[] = [];
  for (const entry of approved.values()) {
    const current = listed.get(entry.name);
    const change = current === undefined ? undefined : compareTool(entry, current);
    if (change !== undefined) changed.push(change);
  }
  const added =
    baseline === undefined ? [] : sorted([...listed.keys()].filter((n) => !approved.has(n)));
  const removed = sorted([...approved.keys()].filter((name) => !listed.has(name)));
  return {
    added,
    removed,
    changed: changed.sort((a, b) => compareNames(a.name, b.name)),
    renamed: findRenames(
      removed.map((name) => approved.get(name)!),
      added.map((name) => listed.get(name)!),
    ),
    missingAllowed: sorted(allow.filter((name) => !listed.has(name))),
    invalidNames: sorted(tools.map((t) => t.name).filter((name) => !isToolName(name))),
    catalog: catalog === undefined ? {} : catalogDrift(catalog.listed, catalog.approved ?? {}),
  };
}

export function isDrifted(drift: Drift): boolean {
  return (
    drift.added.length +
      drift.removed.length +
      drift.changed.length +
      drift.missingAllowed.length +
      drift.invalidNames.length +
      Object.keys(drift.catalog).length >
    0
  );
}

/**
 * The severity of a server's drift as a whole, for alerting: its worst changed tool, with a
 * removed tool or a missing allowed one as breaking (calls to it now fail) and an added tool or
 * an invalid name as compatible (nothing that worked stops working); prompts and resources
 * count the same way. Undefined without drift.
 */
export function serverDriftSeverity(drift: Drift): DriftSeverity | undefined {
  const items = CATALOG_KINDS.flatMap((kind) => drift.catalog[kind] ?? []);
  const removed = drift.removed.length + drift.missingAllowed.length;
  const lost = removed + items.flatMap((d) => d.removed).length > 0 ? ['breaking' as const] : [];
  const added = drift.added.length + drift.invalidNames.length;
  const gained = added + items.flatMap((d) => d.added).length > 0 ? ['compatible' as const] : [];
  const changed = [...drift.changed, ...items.flatMap((d) => d.changed)];
  return highest([...changed.map((c) => c.severity), ...lost, ...gained]);
}

/**
 * The `status.drift` form; `since` is the caller's (it knows when drift first appeared). A
 * rename is one entry of `renamed`, its names left out of `added` and `removed`.
 */
export function driftStatus(drift: Drift): Omit<DriftStatus, 'since'> {
  const { added, removed } = apartFromRenames(drift);
  return {
    added,
    removed,
    changed: drift.changed.map(({ name, fields, severity }) => ({ name, fields, severity })),
    renamed: drift.renamed.map(({ from, to, similarity, fields, severity }) => ({
      from,
      to,
      similarity: percent(similarity),
      fields,
      severity,
    })),
    missingAllowed: drift.missingAllowed,
    invalidNames: drift.invalidNames.map(shownInvalidName),
  };
}

/** An invalid name as status and condition messages show it. */
export function shownInvalidName(name: string): string {
  return shown(name, INVALID_NAME_SHOWN);
}

/** The added and removed names that are not part of a rename, for views that show renames. */
export function apartFromRenames(drift: Drift): { added: string[]; removed: string[] } {
  const to = new Set(drift.renamed.map((r) => r.to));
  const from = new Set(drift.renamed.map((r) => r.from));
  return {
    added: drift.added.filter((name) => !to.has(name)),
    removed: drift.removed.filter((name) => !from.has(name)),
  };
}

// --- renames ----------------------------------------------------------------------------------

/**
 * The renames among removed approved tools and added listed ones (renames.ts). An approved
 * entry with a definition is compared by its features, one with field digests by them; one
 * with a bare digest cannot be, since that digest covers the name.
 */
function findRenames(
  removed: readonly BaselineTool[],
  added: readonly SnapshotTool[],
): ToolRename[] {
  if (removed.length === 0 || added.length === 0) return [];
  const features = new Map<object, ToolFeatures>();
  const featuresOf = (key: object, definition: Record<string, unknown>) => {
    let found = features.get(key);
    if (found === undefined) features.set(key, (found = toolFeatures(definition)));
    return found;
  };
  const pairs = pairRenames(removed, added, (entry, tool) => {
    if (entry.definition !== undefined) {
      return compareFeatures(
        featuresOf(entry, entry.definition),
        featuresOf(tool, tool.definition),
      );
    }
    return entry.fields === undefined ? undefined : fieldSimilarity(entry.fields, tool.fields);
  });
  const entries = new Map(removed.map((entry) => [entry.name, entry]));
  const tools = new Map(added.map((tool) => [tool.name, tool]));
  return pairs
    .map(({ from, to, similarity }) => {
      const entry = entries.get(from)!;
      const tool = tools.get(to)!;
      // What else changed, judged as if the old entry had had the new name.
      const change =
        entry.definition !== undefined
          ? fromDefinitions(to, { ...entry.definition, name: to }, tool)
          : fromFieldDigests(to, entry.fields ?? {}, tool);
      const note = `renamed from ${from} (${percent(similarity)}% similar): calls to ${from} fail, and ${to} is not approved`;
      return {
        from,
        to,
        similarity,
        severity: 'breaking' as const,
        basis: change.basis === 'definition' ? ('definition' as const) : ('field-digests' as const),
        fields: change.fields,
        details: [note, ...change.details],
        texts: change.texts,
      };
    })
    .sort((a, b) => compareNames(a.to, b.to));
}

function sorted(names: string[]): string[] {
  return [...new Set(names)].sort(compareNames);
}

function compareTool(entry: BaselineTool, current: SnapshotTool): ToolChange | undefined {
  if (approvedToolDigest(entry) === current.digest) return undefined;
  if (entry.definition !== undefined) {
    return fromDefinitions(entry.name, { ...entry.definition, name: entry.name }, current);
  }
  if (entry.fields === undefined) {
    const details = [
      'the baseline has only a digest: approve with definitions to see what changed',
    ];
    return {
      name: entry.name,
      fields: [],
      severity: 'breaking',
      basis: 'digest',
      details,
      // Which fields changed is unknown; the text the model reads now is known and shown.
      texts: textsNow(current, MODEL_TEXTS),
    };
  }
  return fromFieldDigests(entry.name, entry.fields, current);
}

// --- a baseline with field digests ----------------------------------------------------------

const SEVERITY_WITHOUT_DEFINITION: Record<DigestField, DriftSeverity> = {
  title: 'description-only',
  description: 'description-only',
  annotations: 'widening',
  inputSchema: 'breaking',
  outputSchema: 'breaking',
  execution: 'breaking',
};

function fromFieldDigests(
  name: string,
  approved: Partial<Record<DigestField, string>>,
  current: SnapshotTool,
): ToolChange {
  const fields = DIGEST_FIELDS.filter((field) => {
    const was = approved[field];
    const now = current.fields[field];
    if (was === undefined || now === undefined) return was !== now;
    return !now.startsWith(was);
  });
  return {
    name,
    fields,
    // The whole digest moved but no field did: only the name's case or a field this baseline
    // did not record can explain it, and nothing shows it harmless.
    severity: highest(fields.map((field) => SEVERITY_WITHOUT_DEFINITION[field])) ?? 'breaking',
    basis: 'field-digests',
    details: fields
      .filter((field) => !isModelText(field))
      .map((field) => `${field} changed (the baseline has digests only)`),
    texts: textsNow(current, fields.filter(isModelText)),
  };
}

/** The tool fields that are text the model reads, shown in full when they change. */
const MODEL_TEXTS = ['title', 'description'] as const;
type ModelText = (typeof MODEL_TEXTS)[number];

function isModelText(field: DigestField): field is ModelText {
  return (MODEL_TEXTS as readonly string[]).includes(field);
}

/** The texts now of `fields`, for a baseline that has their digests only. */
function textsNow(current: SnapshotTool, fields: readonly ModelText[]): TextChange[] {
  return fields.map((field) => ({
    field,
    before: undefined,
    after: text((current.definition as Record<string, unknown>)[field]),
  }));
}

// --- a baseline with full definitions -------------------------------------------------------

interface FieldVerdict {
  severity: DriftSeverity;
  details: string[];
  texts: TextChange[];
}

function fromDefinitions(
  name: string,
  approved: { name: string; [key: string]: unknown },
  current: SnapshotTool,
): ToolChange {
  const before = fieldDigests(approved);
  const fields = DIGEST_FIELDS.filter((field) => before[field] !== current.fields[field]);
  const after = current.definition as Record<string, unknown>;
  const verdicts = fields.map((field) => judgeField(field, approved[field], after[field]));
  return {
    name,
    fields,
    severity: highest(verdicts.map((v) => v.severity)) ?? 'breaking',
    basis: 'definition',
    details: verdicts.flatMap((v) => v.details),
    texts: verdicts.flatMap((v) => v.texts),
  };
}

function judgeField(field: DigestField, before: unknown, after: unknown): FieldVerdict {
  switch (field) {
    case 'title':
    case 'description':
      return {
        severity: 'description-only',
        details: [`${field} changed`],
        texts: [{ field, before: text(before), after: text(after) }],
      };
    case 'inputSchema':
      return judgeSchema(field, before, after, INPUT);
    case 'outputSchema':
      return judgeOutputSchema(before, after);
    case 'annotations':
      return judgeAnnotations(before, after);
    case 'execution':
      return judgeExecution(before, after);
  }
}

/**
 * What each kind of schema change means for the tool's callers (inputSchema) and for the
 * consumers of its structured results (outputSchema). An inputSchema that accepts more than
 * was approved (an enum, pattern, maxLength or format dropped, a bound or a type relaxed) lets
 * the model send what a reviewer ruled out, and a new free-text property is a new channel for
 * whatever the model is told to put there: both are widening. Any other new property is
 * compatible (it becoming required is its own, narrowing change); a removed one breaks both.
 */
const INPUT: Record<Effect, DriftSeverity> = {
  narrows: 'breaking',
  widens: 'widening',
  changes: 'breaking',
  text: 'description-only',
  'adds-property': 'compatible',
  'adds-free-text': 'widening',
  'removes-property': 'breaking',
};
const OUTPUT: Record<Effect, DriftSeverity> = {
  ...INPUT,
  narrows: 'compatible',
  widens: 'breaking',
  'adds-free-text': 'compatible',
};

/** What one structural change of a tool's schema means for its callers or consumers. */
export function schemaChangeSeverity(
  field: 'inputSchema' | 'outputSchema',
  effect: Effect,
): DriftSeverity {
  return (field === 'inputSchema' ? INPUT : OUTPUT)[effect];
}

function judgeSchema(
  field: 'inputSchema' | 'outputSchema',
  before: unknown,
  after: unknown,
  meaning: Record<Effect, DriftSeverity>,
): FieldVerdict {
  const changes = diffSchemas(before, after);
  if (changes.length === 0) {
    // Same constraints written differently (a reordered `required` or `enum`).
    return { severity: 'compatible', details: [`${field} rewritten, same meaning`], texts: [] };
  }
  return {
    severity: highest(changes.map((c) => meaning[c.effect])) ?? 'breaking',
    details: changes.map((c) => describeChange(field, c)),
    texts: [],
  };
}

function describeChange(field: string, change: SchemaChange): string {
  return `${field} ${change.path === '' ? '/' : change.path}: ${change.detail}`;
}

/** Consumers cannot have relied on structured output that was not declared; losing it breaks them. */
function judgeOutputSchema(before: unknown, after: unknown): FieldVerdict {
  if (before === undefined) {
    return { severity: 'compatible', details: ['outputSchema added'], texts: [] };
  }
  if (after === undefined) {
    return { severity: 'breaking', details: ['outputSchema removed'], texts: [] };
  }
  return judgeSchema('outputSchema', before, after, OUTPUT);
}

/**
 * Hints whose move widens what the tool may do (MCP 2025-11-25 `ToolAnnotations`): it no longer
 * claims to be read-only or idempotent, or it now says it is destructive or reaches an open
 * world. Clients decide on these what to run without asking, so a reviewer sees each such move
 * as widening, whatever the hint's default when absent.
 */
const WIDENS: Record<string, (was: unknown, now: unknown) => boolean> = {
  readOnlyHint: (was, now) => was === true && now !== true,
  destructiveHint: (was, now) => was !== true && now === true,
  openWorldHint: (was, now) => was !== true && now === true,
  idempotentHint: (was, now) => was === true && now !== true,
};

/**
 * Annotations are hints: no call breaks when they change, but a tool that stops claiming
 * readOnlyHint or starts claiming destructiveHint changes what clients let it do unasked, so
 * every hint change is spelled out and the widening ones say so. Only a changed
 * annotations.title is text.
 */
function judgeAnnotations(before: unknown, after: unknown): FieldVerdict {
  const a = record(before);
  const b = record(after);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareNames);
  const moved = keys.filter((key) => !isDeepStrictEqual(a[key], b[key]));
  const hints = moved.filter((key) => key !== 'title');
  const widened = hints.filter((key) => WIDENS[key]?.(a[key], b[key]) === true);
  const severity =
    widened.length > 0 ? 'widening' : hints.length > 0 ? 'compatible' : 'description-only';
  return {
    severity,
    details: moved.map(
      (key) =>
        `annotations.${key}: ${JSON.stringify(a[key]) ?? 'unset'} → ${JSON.stringify(b[key]) ?? 'unset'}${widened.includes(key) ? ' (widening)' : ''}`,
    ),
    texts: moved.includes('title')
      ? [{ field: 'annotations.title', before: text(a.title), after: text(b.title) }]
      : [],
  };
}

/**
 * execution.taskSupport (MCP 2025-11-25 ToolExecution; absent means "forbidden"): a caller
 * without tasks can use forbidden/optional, a caller with tasks optional/required, so only a
 * move to "optional" keeps every caller working.
 */
function judgeExecution(before: unknown, after: unknown): FieldVerdict {
  const was = record(before).taskSupport ?? 'forbidden';
  const now = record(after).taskSupport ?? 'forbidden';
  const otherKeysMoved = !isDeepStrictEqual(
    { ...record(before), taskSupport: 0 },
    { ...record(after), taskSupport: 0 },
  );
  const severity = now === 'optional' && !otherKeysMoved ? 'compatible' : 'breaking';
  const details =
    was === now
      ? ['execution changed']
      : [`execution.taskSupport: ${JSON.stringify(was)} → ${JSON.stringify(now)}`];
  return { severity, details, texts: [] };
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
