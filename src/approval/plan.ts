/**
 * Planning an approval: what approving a server's current snapshot (all of it, or some tools)
 * would change in its baseline, entry by entry — added, changed (with the severity, fields and
 * texts drift finds) or removed, with the findings on each — and the `spec.tools.approved` it
 * would write, with the record of who approved, when, from which snapshot, and why.
 *
 * Pure: the caller reads the view (read.ts) and asks who approves (approver.ts); write.ts
 * writes the plan onto exactly the MCPServer it was planned from.
 */

import { isDeepStrictEqual } from 'node:util';
import { closestMatch } from 'leven';
import { KIND } from '../api/names.ts';
import {
  APPROVAL_CHANGES_MAX,
  type ApprovalChange,
  type ApprovalRecord,
  type ApprovedProvenance,
  type ApprovedTool,
  type DriftSeverity,
} from '../api/v1alpha1/mcpserver.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { driftFrom } from '../discovery/drift-basis.ts';
import { operatorError } from '../errors.ts';
import { type ApproveForm, approvedTools } from '../tools/approve.ts';
import type { CatalogBaseline } from '../tools/baseline.ts';
import { CATALOG_KINDS, type CatalogKind, approvedCatalog } from '../tools/catalog-items.ts';
import { compareNames } from '../tools/digest.ts';
import type { BaselineTool } from '../tools/baseline.ts';
import { type Drift, type TextChange, apartFromRenames } from '../tools/drift.ts';
import { percent } from '../tools/renames.ts';
import type { Snapshot, SnapshotTool } from '../tools/snapshot.ts';
import { withRecord } from './history.ts';
import type { ApprovalView } from './read.ts';

export type EntryKind = ApprovalChange['kind'];
export type EntryChange = ApprovalChange['change'];

/** One entry of the baseline that the approval adds, changes or removes. */
export interface PlannedEntry {
  kind: EntryKind;
  /** Its key: a tool or prompt name, a resource URI or URI template. */
  name: string;
  change: EntryChange;
  /**
   * How much it matters to callers: a changed entry's drift severity; an added one is
   * compatible (nothing that worked stops working), a removed one breaking (calls to it fail).
   */
  severity: DriftSeverity;
  /** The fields that changed, and what drift says about each (changed entries). */
  fields: string[];
  details: string[];
  /** Text the model reads: before and after for a changed entry, the new text of an added one. */
  texts: TextChange[];
  /** The digest approved (added and changed entries). */
  digest?: string | undefined;
  /** Problems found in the definition approved, as discovery or status report them. */
  findings: string[];
  /** A renamed entry: the approved name it replaces, and how alike the two are (percent). */
  from?: string | undefined;
  similarity?: number | undefined;
}

export interface ApprovalPlan {
  namespace: string;
  name: string;
  /** The write is conditioned on it: a server changed since is not approved (write.ts). */
  resourceVersion: string;
  snapshotDigest: string;
  form: ApproveForm;
  entries: PlannedEntry[];
  /** Whether it replaces or removes something approved before: a person must confirm it. */
  needsConfirmation: boolean;
  /** Listed tools whose names break MCP's tool-name rules: they cannot be approved. */
  leftOut: string[];
  /** Set when the baseline it replaces could not be read (a missing ConfigMap, say). */
  replacesInvalid?: string | undefined;
  /** `spec.tools.approved` as the approval writes it. */
  approved: Record<string, unknown>;
  /** Whether writing changes anything: false when the baseline is already this one. */
  changesSpec: boolean;
  record: ApprovalRecord;
}

export interface PlanOptions {
  form: ApproveForm;
  /** Approve only these tools (added, changed or removed); every entry when undefined. */
  tools?: readonly string[] | undefined;
  note?: string | undefined;
  /** Who approves (approver.ts), and when. */
  approvedBy: string;
  at: Date;
  /** Findings beyond the snapshot's, by tool name (those status reports). */
  findings?: ReadonlyMap<string, readonly string[]> | undefined;
}

const ENTRY_KIND: Record<CatalogKind, EntryKind> = {
  prompts: 'prompt',
  resources: 'resource',
  resourceTemplates: 'resourceTemplate',
};

/** Plans approving `view.snapshot` as the baseline of `view.server`. */
export function planApproval(view: ApprovalView, options: PlanOptions): ApprovalPlan {
  const { server, snapshot, baseline } = view;
  const { namespace, name, resourceVersion } = server.metadata;
  const current = baseline.kind === 'tools' ? baseline : undefined;
  const named = options.tools === undefined ? undefined : new Set(options.tools);
  if (named !== undefined) checkSubset(named, snapshot, current?.tools ?? [], server);
  // Every kind the server lists is compared, approved or not: approving adds it.
  const approvedKinds: CatalogBaseline = {
    ...Object.fromEntries(Object.keys(snapshot.catalog).map((kind) => [kind, []])),
    ...current?.catalog,
  };
  const drift = driftFrom(snapshot, {
    approved: current?.tools ?? [],
    approvedCatalog: approvedKinds,
    allow: [],
  });
  // Either name of a rename selects the rename, one change: the new name approved in place of
  // the old one, which leaves the baseline.
  const subset = named === undefined ? undefined : withRenames(named, drift);
  const findings = findingsByName(snapshot, options.findings);
  const entries = [
    ...toolEntries(drift, snapshot, findings),
    ...(subset === undefined ? catalogEntries(drift, snapshot) : []),
  ].filter((entry) => subset === undefined || subset.has(entry.name));
  const approved = approvedSpec(view, options, subset);
  const record = recordOf(snapshot.digest, entries, options);
  const existing = server.spec.tools?.approved;
  return {
    namespace,
    name,
    resourceVersion: resourceVersion ?? '',
    snapshotDigest: snapshot.digest,
    form: options.form,
    entries,
    needsConfirmation: entries.some((entry) => entry.change !== 'added'),
    leftOut: drift.invalidNames,
    replacesInvalid: baseline.kind === 'invalid' ? baseline.message : undefined,
    approved: { ...approved, history: withRecord(existing?.history ?? [], record) },
    changesSpec:
      entries.length > 0 || !isDeepStrictEqual(baselineOf(existing), baselineOf(approved)),
    record,
  };
}

function withRenames(named: ReadonlySet<string>, drift: Drift): Set<string> {
  const subset = new Set(named);
  for (const { from, to } of drift.renamed) {
    if (named.has(from) || named.has(to)) subset.add(from).add(to);
  }
  return subset;
}

/** What drift and enforcement read of spec.tools.approved: all but the record and provenance. */
function baselineOf(approved: object | undefined): object {
  const forReview = new Set(['history', 'provenance']);
  return Object.fromEntries(Object.entries(approved ?? {}).filter(([key]) => !forReview.has(key)));
}

/** Each name of a subset must be a tool the server lists or the baseline approves. */
function checkSubset(
  subset: ReadonlySet<string>,
  snapshot: Snapshot,
  approved: readonly BaselineTool[],
  server: StoredMCPServer,
): void {
  const known = [...new Set([...snapshot.tools, ...approved].map((tool) => tool.name))];
  for (const tool of subset) {
    if (known.includes(tool)) continue;
    const near = closestMatch(tool, known, { maxDistance: Math.max(2, tool.length / 3) });
    const suggestion = near === undefined ? '' : `; did you mean ${near}?`;
    const who = `${KIND} ${server.metadata.namespace}/${server.metadata.name}`;
    throw operatorError('MCPOP_APPROVAL_UNKNOWN_TOOL', tool, who, suggestion);
  }
}

/** Findings per tool name: the snapshot's (schema problems) and any the caller adds. */
function findingsByName(
  snapshot: Snapshot,
  more: ReadonlyMap<string, readonly string[]> | undefined,
): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const { item, problem } of snapshot.findings) {
    found.set(item, [...(found.get(item) ?? []), problem]);
  }
  for (const [item, problems] of more ?? []) {
    found.set(item, [...new Set([...(found.get(item) ?? []), ...problems])]);
  }
  return found;
}

/** The text a model reads in a new tool: its title and description, in full. */
function newTexts(tool: SnapshotTool | undefined): TextChange[] {
  const definition: Record<string, unknown> = tool?.definition ?? {};
  return (['title', 'description'] as const).flatMap((field) => {
    const text = definition[field];
    return typeof text === 'string' ? [{ field, before: undefined, after: text }] : [];
  });
}

function toolEntries(
  drift: Drift,
  snapshot: Snapshot,
  findings: ReadonlyMap<string, string[]>,
): PlannedEntry[] {
  const listed = new Map(snapshot.tools.map((tool) => [tool.name, tool]));
  const entry = (name: string, change: EntryChange, severity: DriftSeverity) => ({
    kind: 'tool' as const,
    name,
    change,
    severity,
    fields: [] as string[],
    details: [] as string[],
    texts: [] as TextChange[],
    digest: listed.get(name)?.digest,
    findings: findings.get(name) ?? [],
  });
  const { added, removed } = apartFromRenames(drift);
  return [
    ...drift.changed.map(({ name, severity, fields, details, texts }) => ({
      ...entry(name, 'changed', severity),
      fields: [...fields],
      details,
      texts,
    })),
    ...drift.renamed.map(({ from, to, similarity, severity, fields, details, texts }) => ({
      ...entry(to, 'renamed', severity),
      fields: [...fields],
      details,
      texts,
      from,
      similarity: percent(similarity),
    })),
    ...added.map((name) => ({
      ...entry(name, 'added', 'compatible'),
      texts: newTexts(listed.get(name)),
    })),
    ...removed.map((name) => ({ ...entry(name, 'removed', 'breaking'), digest: undefined })),
  ];
}

function catalogEntries(drift: Drift, snapshot: Snapshot): PlannedEntry[] {
  return CATALOG_KINDS.flatMap((kind) => {
    const items = drift.catalog[kind];
    if (items === undefined) return [];
    const digests = new Map((snapshot.catalog[kind] ?? []).map((item) => [item.key, item.digest]));
    const entry = (key: string, change: EntryChange, severity: DriftSeverity) => ({
      kind: ENTRY_KIND[kind],
      name: key,
      change,
      severity,
      fields: [] as string[],
      details: [] as string[],
      texts: [] as TextChange[],
      digest: change === 'removed' ? undefined : digests.get(key),
      findings: [] as string[],
    });
    return [
      ...items.changed.map((c) => ({
        ...entry(c.key, 'changed', c.severity),
        fields: c.fields,
        details: c.details,
      })),
      ...items.added.map((key) => entry(key, 'added', 'compatible')),
      ...items.removed.map((key) => entry(key, 'removed', 'breaking')),
    ];
  });
}

/** What ran when the snapshot was taken, as status says: recorded with the approval. */
export function approvedProvenance(server: StoredMCPServer): ApprovedProvenance | undefined {
  const digests = server.status?.provenance?.imageDigests;
  const packages = server.status?.provenance?.packages;
  const info = server.status?.discovery?.serverInfo;
  const provenance: ApprovedProvenance = {
    ...(digests?.length ? { imageDigests: digests } : {}),
    ...(packages?.length ? { packages } : {}),
    ...(info === undefined ? {} : { serverInfo: info }),
  };
  return Object.keys(provenance).length === 0 ? undefined : provenance;
}

/**
 * `spec.tools.approved` after the approval, without its history. All of it: the snapshot's
 * tools and catalog. A subset: the baseline as it is, with those tools taken from the snapshot
 * (or taken out, when the server no longer lists them); the catalog stays as approved.
 */
function approvedSpec(
  { server, snapshot, baseline }: ApprovalView,
  { form }: PlanOptions,
  subset: ReadonlySet<string> | undefined,
): Record<string, unknown> {
  const provenance = approvedProvenance(server);
  const head = provenance === undefined ? {} : { provenance };
  if (subset === undefined) {
    return {
      ...head,
      tools: approvedTools(snapshot.tools, form),
      ...approvedCatalog(snapshot.catalog, form),
    };
  }
  const kept = (baseline.kind === 'tools' ? baseline.tools : []).filter(
    (tool) => !subset.has(tool.name),
  );
  const taken = approvedTools(
    snapshot.tools.filter((tool) => subset.has(tool.name)),
    form,
  );
  const tools = [...kept.map(asApproved), ...taken].sort((a, b) => compareNames(a.name, b.name));
  const approved = server.spec.tools?.approved ?? {};
  const catalog = Object.fromEntries(
    CATALOG_KINDS.flatMap((kind) => (approved[kind] === undefined ? [] : [[kind, approved[kind]]])),
  );
  return { ...head, tools, ...catalog };
}

function asApproved({ name, digest, fields, definition }: BaselineTool): ApprovedTool {
  return {
    name,
    ...(digest === undefined ? {} : { digest }),
    ...(fields === undefined ? {} : { fields }),
    ...(definition === undefined
      ? {}
      : { definition: definition as NonNullable<ApprovedTool['definition']> }),
  };
}

function recordOf(
  snapshotDigest: string,
  entries: readonly PlannedEntry[],
  { approvedBy, at, note }: PlanOptions,
): ApprovalRecord {
  const changes = entries
    .slice(0, APPROVAL_CHANGES_MAX)
    .map(({ kind, name, change, digest, from, similarity }) => ({
      kind,
      name,
      change,
      ...(digest === undefined ? {} : { digest }),
      // The link kept: which approved tool this one was taken for, and how alike they were.
      ...(from === undefined ? {} : { from }),
      ...(similarity === undefined ? {} : { similarity }),
    }));
  const omitted = entries.length - changes.length;
  return {
    approvedBy,
    // RFC 3339 to the second, as Kubernetes writes times.
    approvedAt: `${at.toISOString().slice(0, 19)}Z`,
    snapshotDigest,
    ...(note === undefined || note === '' ? {} : { note }),
    ...(changes.length === 0 ? {} : { changes }),
    ...(omitted > 0 ? { omitted } : {}),
  };
}
