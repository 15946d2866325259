/**
 * `mcp-operator export`: what each server publishes — tools, prompts, resources and resource
 * templates, with their digests and whether a person approved them — as one JSON document a
 * registry or catalog can ingest. The schema here is the format's definition; `npm run docs`
 * writes it as docs/export.schema.json and docs/registry.md describes it. Pure.
 */

import { Type, type Static } from '@sinclair/typebox';
import { API_VERSION } from '../api/v1alpha1/mcpserver.ts';
import { DRIFT_SEVERITIES } from '../api/v1alpha1/status.ts';
import type { RegistryProvenance } from '../api/registry-provenance.ts';
import { CATALOG_KINDS, type CatalogKind } from '../tools/catalog.ts';
import type { Drift } from '../tools/drift.ts';
import { isToolName, type Snapshot } from '../tools/snapshot.ts';

export const EXPORT_KIND = 'MCPServerCatalog';

const DIGEST = Type.String({
  pattern: '^sha256:[0-9a-f]{64}$',
  description:
    'SHA-256 over the RFC 8785 canonical JSON of the definition, as status and approvals record it.',
});

const APPROVALS = ['approved', 'changed', 'unapproved', 'no-baseline', 'invalid-name'] as const;
export type Approval = (typeof APPROVALS)[number];

const Approval = Type.Union(
  APPROVALS.map((a) => Type.Literal(a)),
  {
    description:
      'approved: in the approved baseline, unchanged. changed: approved, but the server now lists it otherwise (see change). unapproved: listed, not in the baseline. no-baseline: nothing of its kind is approved yet. invalid-name: a tool name MCP does not allow, which cannot be approved.',
  },
);

const Change = Type.Object(
  {
    fields: Type.Array(Type.String(), {
      description: 'The fields whose digests differ from the approved ones.',
    }),
    severity: Type.Union(
      DRIFT_SEVERITIES.map((s) => Type.Literal(s)),
      {
        description: 'breaking, compatible or description-only, as drift reports it.',
      },
    ),
  },
  { description: 'How an approved item changed.', additionalProperties: false },
);

const ExportedItem = Type.Object(
  {
    name: Type.String({
      description: 'The tool name, prompt name, resource URI or resource template URI template.',
    }),
    digest: DIGEST,
    fields: Type.Optional(
      Type.Record(Type.String(), DIGEST, { description: 'Digest of each field, by field name.' }),
    ),
    approval: Approval,
    change: Type.Optional(Change),
    definition: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The definition as the server listed it (server-written text: treat as data).',
    }),
  },
  { additionalProperties: false },
);
export type ExportedItem = Static<typeof ExportedItem>;

const ExportedServer = Type.Object(
  {
    namespace: Type.String(),
    name: Type.String({ description: 'The MCPServer.' }),
    registry: Type.Optional(
      Type.Object(
        {
          url: Type.Optional(
            Type.String({
              description: 'The registry it was imported from (absent for a file or URL).',
            }),
          ),
          name: Type.String({ description: 'Its server name in the registry.' }),
          version: Type.String({ description: 'The version imported.' }),
          package: Type.Optional(
            Type.String({
              description:
                'The package that runs: npm:<name>@<version>, pypi:…, oci:<image>, remote:<url>.',
            }),
          ),
        },
        {
          description: 'Where the MCPServer was imported from (its annotations).',
          additionalProperties: false,
        },
      ),
    ),
    discovered: Type.Boolean({
      description: 'Whether a discovery has succeeded; false: the lists below are empty.',
    }),
    discoveredAt: Type.Optional(
      Type.String({ description: 'When the snapshot was taken (RFC 3339).' }),
    ),
    snapshotDigest: Type.Optional(DIGEST),
    protocolVersion: Type.Optional(Type.String()),
    serverInfo: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'What the server says it is (name, version, title).',
      }),
    ),
    baseline: Type.Union(
      [Type.Literal('approved'), Type.Literal('none'), Type.Literal('invalid')],
      {
        description:
          'approved: spec.tools.approved holds a baseline; none: nothing is approved; invalid: it does not parse (every item is then unapproved).',
      },
    ),
    driftPolicy: Type.Union([Type.Literal('Warn'), Type.Literal('Enforce')]),
    tools: Type.Array(ExportedItem),
    prompts: Type.Array(ExportedItem),
    resources: Type.Array(ExportedItem),
    resourceTemplates: Type.Array(ExportedItem),
    removed: Type.Object(
      {
        tools: Type.Array(Type.String()),
        prompts: Type.Array(Type.String()),
        resources: Type.Array(Type.String()),
        resourceTemplates: Type.Array(Type.String()),
      },
      { description: 'Approved, but no longer listed by the server.', additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type ExportedServer = Static<typeof ExportedServer>;

export const ExportDocumentSchema = Type.Object(
  {
    apiVersion: Type.Literal(API_VERSION),
    kind: Type.Literal(EXPORT_KIND),
    servers: Type.Array(ExportedServer),
  },
  {
    $id: 'https://mcp-operator.dev/schemas/mcpservercatalog.schema.json',
    title: 'MCPServerCatalog: what MCPServers publish and what of it is approved',
    description:
      'Written by `mcp-operator export`; one entry per MCPServer, sorted by namespace and name.',
    additionalProperties: false,
  },
);
export type ExportDocument = Static<typeof ExportDocumentSchema>;

/** What the export of one server is made from; `snapshot` and `drift` when it was discovered. */
export interface ServerFacts {
  namespace: string;
  name: string;
  provenance: RegistryProvenance | undefined;
  driftPolicy: 'Warn' | 'Enforce';
  baseline: 'approved' | 'none' | 'invalid';
  discoveredAt: string | undefined;
  snapshot: Snapshot | undefined;
  /** Drift against the baseline (an invalid or absent one compared as empty). */
  drift: Drift | undefined;
  /** The catalog kinds the baseline approves (an unlisted kind is `no-baseline`). */
  approvedKinds: readonly CatalogKind[];
}

export function exportServer(facts: ServerFacts): ExportedServer {
  const { snapshot, drift } = facts;
  const provenance = facts.provenance;
  const base = {
    namespace: facts.namespace,
    name: facts.name,
    ...(provenance === undefined
      ? {}
      : {
          registry: {
            ...(provenance.registry === undefined ? {} : { url: provenance.registry }),
            name: provenance.name,
            version: provenance.version,
            ...(provenance.package === undefined ? {} : { package: provenance.package }),
          },
        }),
    baseline: facts.baseline,
    driftPolicy: facts.driftPolicy,
  };
  if (snapshot === undefined || drift === undefined)
    return {
      ...base,
      discovered: false,
      tools: [],
      prompts: [],
      resources: [],
      resourceTemplates: [],
      removed: { tools: [], prompts: [], resources: [], resourceTemplates: [] },
    };
  const toolsApproved = facts.baseline !== 'none';
  const tools = snapshot.tools.map((tool): ExportedItem => {
    const change = drift.changed.find((c) => c.name === tool.name);
    const approval: Approval = !isToolName(tool.name)
      ? 'invalid-name'
      : !toolsApproved
        ? 'no-baseline'
        : drift.added.includes(tool.name)
          ? 'unapproved'
          : change !== undefined
            ? 'changed'
            : 'approved';
    return {
      name: tool.name,
      digest: tool.digest,
      fields: tool.fields,
      approval,
      ...(change === undefined
        ? {}
        : { change: { fields: change.fields, severity: change.severity } }),
      definition: tool.definition,
    };
  });
  const catalog = Object.fromEntries(
    CATALOG_KINDS.map((kind) => {
      const kindDrift = drift.catalog[kind];
      const approvedKind = facts.approvedKinds.includes(kind) && kindDrift !== undefined;
      const items = (snapshot.catalog[kind] ?? []).map((item): ExportedItem => {
        const change = kindDrift?.changed.find((c) => c.key === item.key);
        const approval: Approval = !approvedKind
          ? 'no-baseline'
          : kindDrift.added.includes(item.key)
            ? 'unapproved'
            : change !== undefined
              ? 'changed'
              : 'approved';
        return {
          name: item.key,
          digest: item.digest,
          approval,
          ...(change === undefined
            ? {}
            : { change: { fields: change.fields, severity: change.severity } }),
          definition: item.definition,
        };
      });
      return [kind, items];
    }),
  ) as Record<CatalogKind, ExportedItem[]>;
  return {
    ...base,
    discovered: true,
    ...(facts.discoveredAt === undefined ? {} : { discoveredAt: facts.discoveredAt }),
    snapshotDigest: snapshot.digest,
    protocolVersion: snapshot.protocolVersion,
    ...(snapshot.serverInfo === undefined ? {} : { serverInfo: { ...snapshot.serverInfo } }),
    tools,
    ...catalog,
    removed: {
      tools: drift.removed,
      prompts: drift.catalog.prompts?.removed ?? [],
      resources: drift.catalog.resources?.removed ?? [],
      resourceTemplates: drift.catalog.resourceTemplates?.removed ?? [],
    },
  };
}

/** The document for `servers`, sorted by namespace and name. */
export function exportDocument(servers: readonly ExportedServer[]): ExportDocument {
  return {
    apiVersion: API_VERSION,
    kind: EXPORT_KIND,
    servers: [...servers].sort(
      (a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
    ),
  };
}
