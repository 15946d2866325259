/**
 * The server page's content: for each tool, prompt and resource, the approved definition
 * against the one discovery last saw, field by field, with what drift says about it (severity,
 * the structural changes of schemas), the findings, where the code came from, and the
 * conditions and Events as one timeline. Pure: the caller reads the server, its snapshot,
 * baseline and Events, and says whether the user may approve.
 */

import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { API_GROUP } from '../api/names.ts';
import { approvalHistory } from '../approval/index.ts';
import { driftFrom, driftInputs } from '../discovery/drift-basis.ts';
import type { Baseline, BaselineTool } from '../tools/baseline.ts';
import { CATALOG, CATALOG_KINDS, type CatalogKind } from '../tools/catalog-items.ts';
import type { CatalogDrift } from '../tools/catalog.ts';
import { DIGEST_FIELDS } from '../tools/digest.ts';
import { type Drift, type ToolChange, schemaChangeSeverity } from '../tools/drift.ts';
import { diffSchemas } from '../tools/schema-diff.ts';
import { type Snapshot, isToolName } from '../tools/snapshot.ts';
import { compareLines, compareText, pretty } from './compare.ts';
import { fleetRow } from './fleet-row.ts';
import type { ConsoleEvent } from './watch.ts';
import type {
  FieldComparison,
  ItemKind,
  Provenance,
  ReviewItem,
  SchemaChangeView,
  ServerReview,
  TimelineEntry,
} from './web/api-types.ts';

export interface ReviewInputs {
  server: StoredMCPServer;
  /** The snapshot status.discovery describes, or why there is none to show. */
  snapshot: { snapshot: Snapshot } | { problem: string };
  baseline: Baseline;
  events: readonly ConsoleEvent[];
  access: ServerReview['access'];
}

/** Fields of a tool shown as text and compared word by word: what the model reads. */
const TEXT_FIELDS = new Set(['title', 'description', 'name', 'mimeType']);

const ITEM_KIND: Record<CatalogKind, ItemKind> = {
  prompts: 'prompt',
  resources: 'resource',
  resourceTemplates: 'resourceTemplate',
};

export function serverReview(inputs: ReviewInputs): ServerReview {
  const { server, baseline } = inputs;
  const snapshot = 'snapshot' in inputs.snapshot ? inputs.snapshot.snapshot : undefined;
  const drift =
    snapshot === undefined || baseline.kind === 'invalid'
      ? undefined
      : driftFrom(snapshot, driftInputs(baseline, server));
  return {
    row: fleetRow(server),
    generation: server.metadata.generation,
    endpoint: server.status?.endpoint,
    url: server.spec.url,
    snapshot:
      snapshot === undefined
        ? undefined
        : {
            digest: snapshot.digest,
            protocolVersion: snapshot.protocolVersion,
            serverInfo: snapshot.serverInfo,
            instructions: snapshot.instructions,
          },
    snapshotProblem: 'problem' in inputs.snapshot ? inputs.snapshot.problem : undefined,
    baseline: baseline.kind,
    baselineProblem: baseline.kind === 'invalid' ? baseline.message : undefined,
    items:
      snapshot === undefined
        ? []
        : [...toolItems(snapshot, baseline, drift), ...catalogItems(snapshot, baseline, drift)],
    findings: snapshot?.findings ?? [],
    provenance: provenance(server),
    timeline: timeline(server, inputs.events),
    access: inputs.access,
    history: approvalHistory(server),
  };
}

// --- tools ------------------------------------------------------------------------------------

function toolItems(snapshot: Snapshot, baseline: Baseline, drift: Drift | undefined): ReviewItem[] {
  const approved = new Map(
    (baseline.kind === 'tools' ? baseline.tools : []).map((tool) => [tool.name, tool]),
  );
  const changes = new Map((drift?.changed ?? []).map((change) => [change.name, change]));
  const listed = new Set<string>();
  const items: ReviewItem[] = [];
  for (const tool of snapshot.tools) {
    if (listed.has(tool.name)) continue;
    listed.add(tool.name);
    const entry = approved.get(tool.name);
    const change = changes.get(tool.name);
    const valid = isToolName(tool.name);
    items.push({
      kind: 'tool',
      key: tool.name,
      state:
        baseline.kind !== 'tools'
          ? 'unapproved'
          : entry === undefined || !valid
            ? 'added'
            : change === undefined
              ? 'unchanged'
              : 'changed',
      severity: change?.severity,
      basis: change?.basis,
      fields: toolFields(entry, tool.definition, change),
      schemaChanges: change === undefined ? [] : schemaChanges(entry, tool.definition, change),
      details: change?.details ?? [],
      findings: [
        ...(valid ? [] : ["The name breaks MCP's tool-name rules: it cannot be approved."]),
        ...snapshot.findings.filter((f) => f.item === tool.name).map((f) => f.problem),
      ],
      currentDigest: tool.digest,
    });
  }
  for (const entry of approved.values()) {
    if (listed.has(entry.name)) continue;
    items.push({
      kind: 'tool',
      key: entry.name,
      state: 'removed',
      severity: 'breaking',
      basis: entry.definition === undefined ? 'digest' : 'definition',
      fields: toolFields(entry, undefined, undefined),
      schemaChanges: [],
      details: ['Approved, no longer listed: calls to it fail.'],
      findings: [],
      currentDigest: undefined,
    });
  }
  return items;
}

const DIGEST_ONLY =
  'Approved as a digest: approve with definitions (the default of mcp-operator approve) to compare the text.';

function toolFields(
  entry: BaselineTool | undefined,
  current: Record<string, unknown> | undefined,
  change: ToolChange | undefined,
): FieldComparison[] {
  const approved = entry?.definition;
  const knownApproved = entry === undefined || approved !== undefined;
  return DIGEST_FIELDS.flatMap((field) => {
    const changed =
      change?.fields.includes(field) ?? (entry !== undefined && current === undefined);
    if (approved?.[field] === undefined && current?.[field] === undefined) {
      // Nothing to show, unless a digest-only baseline says this field changed.
      if (!(changed && !knownApproved && current !== undefined)) return [];
    }
    if (!changed && current?.[field] === undefined) return [];
    return [
      comparison(field, approved?.[field], current?.[field], {
        changed,
        // A digest-only baseline: the approved text is not known, only that it differed.
        approvedUnknown: changed && !knownApproved,
      }),
    ];
  });
}

function comparison(
  field: string,
  approvedValue: unknown,
  currentValue: unknown,
  { changed, approvedUnknown }: { changed: boolean; approvedUnknown: boolean },
): FieldComparison {
  const form =
    TEXT_FIELDS.has(field) && isText(approvedValue) && isText(currentValue) ? 'text' : 'json';
  const show = (value: unknown) =>
    form === 'text' ? (value as string | undefined) : pretty(value);
  const approved = approvedUnknown || !changed ? undefined : show(approvedValue);
  const current = show(currentValue);
  let parts;
  let note;
  if (approvedUnknown) note = DIGEST_ONLY;
  else if (changed && approved !== undefined && current !== undefined) {
    parts = form === 'text' ? compareText(approved, current) : compareLines(approved, current);
    if (parts === undefined)
      note = 'Too different to mark word by word: both texts are shown whole.';
  }
  return { field, changed, form, approved, current, parts, note };
}

const isText = (value: unknown) => value === undefined || typeof value === 'string';

function schemaChanges(
  entry: BaselineTool | undefined,
  current: Record<string, unknown>,
  change: ToolChange,
): SchemaChangeView[] {
  const approved = entry?.definition;
  if (approved === undefined) return [];
  return (['inputSchema', 'outputSchema'] as const).flatMap((field) => {
    if (!change.fields.includes(field)) return [];
    if (approved[field] === undefined || current[field] === undefined) return [];
    return diffSchemas(approved[field], current[field]).map((c) => ({
      field,
      path: c.path === '' ? '/' : c.path,
      effect: c.effect,
      detail: c.detail,
      severity: schemaChangeSeverity(field, c.effect),
    }));
  });
}

// --- prompts, resources, resource templates -----------------------------------------------------

function catalogItems(
  snapshot: Snapshot,
  baseline: Baseline,
  drift: Drift | undefined,
): ReviewItem[] {
  return CATALOG_KINDS.flatMap((kind) => {
    const approvedKind = baseline.kind === 'tools' ? baseline.catalog?.[kind] : undefined;
    const approved = new Map((approvedKind ?? []).map((item) => [item.key, item]));
    const kindDrift: CatalogDrift | undefined = drift?.catalog[kind];
    const changes = new Map((kindDrift?.changed ?? []).map((c) => [c.key, c]));
    const fields = CATALOG[kind].fields;
    const listed = snapshot.catalog[kind] ?? [];
    const items: ReviewItem[] = listed.map((item) => {
      const entry = approved.get(item.key);
      const change = changes.get(item.key);
      return {
        kind: ITEM_KIND[kind],
        key: item.key,
        state:
          approvedKind === undefined
            ? 'unapproved'
            : entry === undefined
              ? 'added'
              : change === undefined
                ? 'unchanged'
                : 'changed',
        severity: change?.severity,
        basis:
          entry === undefined
            ? undefined
            : entry.definition === undefined
              ? 'digest'
              : 'definition',
        fields: fields.flatMap((field) => {
          const changed = change?.fields.includes(field) ?? false;
          if (!changed && item.definition[field] === undefined) return [];
          return [
            comparison(field, entry?.definition?.[field], item.definition[field], {
              changed,
              approvedUnknown: changed && entry?.definition === undefined,
            }),
          ];
        }),
        schemaChanges: [],
        details: change?.details ?? [],
        findings: [],
        currentDigest: item.digest,
      };
    });
    const keys = new Set(listed.map((item) => item.key));
    for (const entry of approved.values()) {
      if (keys.has(entry.key)) continue;
      items.push({
        kind: ITEM_KIND[kind],
        key: entry.key,
        state: 'removed',
        severity: 'breaking',
        basis: entry.definition === undefined ? 'digest' : 'definition',
        fields: fields.flatMap((field) =>
          entry.definition?.[field] === undefined
            ? []
            : [
                {
                  ...comparison(field, entry.definition[field], undefined, {
                    changed: true,
                    approvedUnknown: false,
                  }),
                },
              ],
        ),
        schemaChanges: [],
        details: [`Approved, no longer listed.`],
        findings: [],
        currentDigest: undefined,
      });
    }
    return items;
  });
}

// --- provenance and timeline --------------------------------------------------------------------

/** Annotations in the project's own group say where a server came from (a registry entry, say). */
const OWN_ANNOTATION = `${API_GROUP}/`;

function provenance(server: StoredMCPServer): Provenance {
  const status = server.status?.provenance;
  const approved = server.spec.tools?.approved?.provenance;
  return {
    image: status?.image ?? server.spec.image,
    imageDigests: status?.imageDigests ?? [],
    packages: status?.packages ?? [],
    serverInfo: server.status?.discovery?.serverInfo,
    codeChanged: status?.codeChanged,
    approved:
      approved === undefined
        ? undefined
        : {
            imageDigests: approved.imageDigests ?? [],
            packages: approved.packages ?? [],
            serverInfo: approved.serverInfo,
          },
    annotations: Object.entries(server.metadata.annotations ?? {})
      .filter(([key]) => key.startsWith(OWN_ANNOTATION))
      .map(([key, value]) => ({ key, value })),
  };
}

/** Conditions (as of their last transition) and Events, newest first. */
function timeline(server: StoredMCPServer, events: readonly ConsoleEvent[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    ...(server.status?.conditions ?? []).map((c) => ({
      time: c.lastTransitionTime,
      source: 'condition' as const,
      kind: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      count: undefined,
    })),
    ...events.map((e) => ({
      time: e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp,
      source: 'event' as const,
      kind: e.type ?? 'Normal',
      status: undefined,
      reason: e.reason ?? '',
      message: e.message ?? '',
      count: e.count,
    })),
  ];
  return entries.sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''));
}
