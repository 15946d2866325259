/**
 * Status of MCPServer v1alpha1, written by the operator. Kept compact: per tool only digests;
 * the full definitions live in the snapshot ConfigMap that status.discovery points to.
 */

import { Type, type Static } from '@sinclair/typebox';
import { CONDITION_MESSAGE_MAX, Condition } from '../core-v1.ts';
import { StringEnum } from '../schema.ts';
import {
  IMAGE_DIGEST_PATTERN,
  IMAGE_DIGESTS_MAX,
  MAX_TOOLS,
  resolvedPackagesSchema,
  serverInfoSchema,
} from './tools.ts';
import {
  FINDING_LEVELS,
  TEXT_FINDING_CODES,
  TEXT_FINDINGS_MAX,
  TEXT_FINDING_PLACE_MAX,
  CAPABILITIES_MAX,
  CATALOG_DRIFT_MAX,
  CATALOG_KEY_MAX,
  DIGEST_PATTERN,
  DRIFT_SEVERITIES,
  FIELD_DIGEST_PATTERN,
  FINDING_PROBLEM_MAX,
  FINDINGS_MAX,
  SERVER_TEXT_MAX,
  TOOL_FIELDS,
  TOOL_NAME_MAX,
  TOOL_NAME_PATTERN,
} from '../../tool-record.ts';

export { DRIFT_SEVERITIES };

const Time = (description: string) => Type.String({ description, format: 'date-time' });

const ToolNameField = (description: string) =>
  Type.String({ description, maxLength: TOOL_NAME_MAX, pattern: TOOL_NAME_PATTERN });

const ToolNames = (description: string) =>
  Type.Array(ToolNameField('A tool name.'), { description, maxItems: MAX_TOOLS });

const DiscoveredTool = Type.Object(
  {
    name: ToolNameField('Tool name as the server lists it.'),
    digest: Type.String({
      description:
        'SHA-256 of the whole tool (name and every compared field), abbreviated to 12 hex digits: enough to see which tools changed between two reads. The snapshot ConfigMap has it in full, with per-field digests.',
      pattern: FIELD_DIGEST_PATTERN,
    }),
  },
  {
    description: 'One discovered tool in compact form; its schemas are in the snapshot ConfigMap.',
  },
);

const CatalogSummary = (what: string) =>
  Type.Optional(
    Type.Object(
      {
        count: Type.Integer({ description: `Number of ${what} listed.`, minimum: 0 }),
        digest: Type.String({
          description: `SHA-256 over the ${what}' digests ordered by key: changes when any of them does. The snapshot ConfigMap has each definition.`,
          pattern: DIGEST_PATTERN,
        }),
      },
      {
        description: `The ${what} the server lists; present when it declares the capability.`,
      },
    ),
  );

const CatalogKeys = (description: string) =>
  Type.Optional(
    Type.Array(
      Type.String({
        description:
          'A prompt name or resource URI (template) as listed, control characters shown as escapes, cut after 256 characters.',
        maxLength: CATALOG_KEY_MAX,
      }),
      { description, maxItems: CATALOG_DRIFT_MAX },
    ),
  );

const CatalogDriftStatus = (what: string) =>
  Type.Optional(
    Type.Object(
      {
        added: CatalogKeys(`${what} listed but not approved (at most 100).`),
        removed: CatalogKeys(`Approved ${what} no longer listed (at most 100).`),
        changed: Type.Optional(
          Type.Array(
            Type.Object({
              key: Type.String({ description: 'The name or URI.', maxLength: CATALOG_KEY_MAX }),
              fields: Type.Array(Type.String({ maxLength: 32 }), {
                description: 'Fields that differ from the approved definition.',
                maxItems: 8,
              }),
              severity: StringEnum(DRIFT_SEVERITIES, {
                description: 'As for tools: breaking, widening, compatible or description-only.',
              }),
            }),
            {
              description: `Approved ${what} whose definition changed (at most 100).`,
              maxItems: CATALOG_DRIFT_MAX,
            },
          ),
        ),
      },
      { description: `How the listed ${what} differ from the approved ones.` },
    ),
  );

const Finding = Type.Object(
  {
    item: Type.String({
      description:
        'The tool as listed (control characters shown as escapes, long names cut), or #<index> for an entry without a string name.',
      maxLength: SERVER_TEXT_MAX,
    }),
    problem: Type.String({
      description:
        'How it breaks the MCP schema, e.g. "inputSchema lacks type: object", "duplicate tool name".',
      maxLength: FINDING_PROBLEM_MAX,
    }),
  },
  {
    description:
      'A listed tool that breaks the MCP schema. It is still recorded, digested and compared; the finding says what is wrong with it.',
  },
);

const TextFinding = Type.Object(
  {
    item: Type.String({
      description:
        'Where: `tool <name>`, `prompt <name>`, `resource <uri>`, `resource template <uri>` or `instructions` (control characters shown as escapes, long text cut).',
      maxLength: TEXT_FINDING_PLACE_MAX,
    }),
    field: Type.String({
      description:
        'The text within it: `description`, `title`, `inputSchema/properties/path/description`, `arguments/0/description`.',
      maxLength: TEXT_FINDING_PLACE_MAX,
    }),
    code: StringEnum(TEXT_FINDING_CODES, {
      description: 'What was found; docs/judging.md explains each code with an example.',
    }),
    level: StringEnum(FINDING_LEVELS, {
      description: 'critical, warning or info; warning and above raise the alarm by default.',
    }),
    start: Type.Integer({
      description: 'Where the span begins in the field (UTF-16 offset).',
      minimum: 0,
    }),
    end: Type.Integer({ description: 'Where the span ends (exclusive).', minimum: 0 }),
    reason: Type.String({ description: 'Why it is a finding.', maxLength: TEXT_FINDING_PLACE_MAX }),
  },
  { description: 'A finding on text the model reads.' },
);

const TextFindings = Type.Object(
  {
    level: StringEnum(FINDING_LEVELS, { description: 'The highest level found.' }),
    count: Type.Integer({ description: 'How many findings there are in all.', minimum: 0 }),
    items: Type.Array(TextFinding, {
      description: `The first ${TEXT_FINDINGS_MAX} findings, most severe first; \`mcp-operator diff\` shows them all.`,
      maxItems: TEXT_FINDINGS_MAX,
    }),
  },
  {
    description:
      'Findings on the text the model reads (descriptions, titles, names, instructions): hidden text, instructions aimed at the model, hidden blocks, shadowing of other tools. Absent when there are none.',
  },
);

/**
 * Times that discovery refreshes without another change only this often, so that a round that
 * finds nothing new writes nothing (docs/adr/0024). Prometheus has the exact times.
 */
const HEARTBEAT = (metric: string) =>
  `Refreshed when anything else in status.discovery changes, otherwise only once it is older than max(1h, 10 × spec.discovery.interval): a run that finds nothing new writes nothing. The metric ${metric} has the exact time.`;

const DiscoveryStatus = Type.Object(
  {
    lastAttemptTime: Type.Optional(
      Time(
        `When discovery last ran. ${HEARTBEAT('mcp_operator_discovery_last_attempt_timestamp_seconds')}`,
      ),
    ),
    lastSuccessTime: Type.Optional(
      Time(
        `When discovery last succeeded. ${HEARTBEAT('mcp_operator_discovery_last_success_timestamp_seconds')}`,
      ),
    ),
    protocolVersion: Type.Optional(
      Type.String({
        description: 'MCP protocol version negotiated with the server.',
        maxLength: SERVER_TEXT_MAX,
      }),
    ),
    serverInfo: Type.Optional(
      serverInfoSchema(
        'What the server says it is (serverInfo of the initialize result), with control characters shown as escapes such as \\e and long values cut.',
      ),
    ),
    capabilities: Type.Optional(
      Type.Array(Type.String({ description: 'A capability name.', maxLength: SERVER_TEXT_MAX }), {
        description:
          'Capabilities the server declares, such as tools, resources, prompts (at most 32 are recorded).',
        maxItems: CAPABILITIES_MAX,
      }),
    ),
    toolCount: Type.Optional(
      Type.Integer({ description: 'Number of tools the server lists.', minimum: 0 }),
    ),
    snapshotDigest: Type.Optional(
      Type.String({
        description:
          'SHA-256 over the full tool digests ordered by name: changes when any tool does.',
        pattern: DIGEST_PATTERN,
      }),
    ),
    tools: Type.Optional(
      Type.Array(DiscoveredTool, {
        description:
          "The tools whose names follow MCP's tool-name rules, in compact form (the others are in status.drift.invalidNames).",
        maxItems: MAX_TOOLS,
      }),
    ),
    findingCount: Type.Optional(
      Type.Integer({
        description:
          'How many ways the listed tools break the MCP schema (see findings and the Conformant condition); absent when none do.',
        minimum: 0,
      }),
    ),
    findings: Type.Optional(
      Type.Array(Finding, {
        description: `The first ${FINDINGS_MAX} findings, in list order; \`mcp-operator diff\` shows them all.`,
        maxItems: FINDINGS_MAX,
      }),
    ),
    textFindings: Type.Optional(TextFindings),
    prompts: CatalogSummary('prompts'),
    resources: CatalogSummary('resources'),
    resourceTemplates: CatalogSummary('resource templates'),
    snapshotConfigMap: Type.Optional(
      Type.String({
        description:
          'Name of the ConfigMap holding the last snapshot: every tool definition as listed, with its full digest and per-field digests. Absent when the snapshot did not fit (see the Discovered condition).',
        maxLength: 253,
      }),
    ),
    lastError: Type.Optional(
      Type.String({
        description: 'Why the last discovery failed; empty after a success.',
        maxLength: CONDITION_MESSAGE_MAX,
      }),
    ),
  },
  { description: 'What the last discovery found.' },
);

const ChangedTool = Type.Object(
  {
    name: ToolNameField('Tool name.'),
    fields: Type.Array(
      StringEnum(TOOL_FIELDS, { description: 'A field of the tool definition.' }),
      { description: 'Fields that differ from the approved definition.' },
    ),
    severity: StringEnum(DRIFT_SEVERITIES, {
      description:
        'From most to least severe. breaking: callers built for the approved schema may fail (new required argument, removed property, narrowed type). widening: the tool may now do or accept more than was approved (readOnlyHint lost, destructiveHint or openWorldHint set, idempotentHint lost; an enum, pattern, maxLength or format removed, a new free-text argument). compatible: old calls stay valid and nothing widened. description-only: only the text changed, which is how a tool is poisoned; review it.',
    }),
  },
  { description: 'A tool whose definition differs from the approved one.' },
);

const RenamedTool = Type.Object(
  {
    from: ToolNameField('The approved name, no longer listed.'),
    to: ToolNameField('The new name, listed and not approved.'),
    similarity: Type.Integer({
      description:
        'How alike the two are, in percent (never rounded up to 100): the Jaccard index of the words, word pairs and schema leaves of the two (docs/judging.md, "Renames"). Paired from 87.',
      minimum: 0,
      maximum: 100,
    }),
    fields: Type.Array(
      StringEnum(TOOL_FIELDS, { description: 'A field of the tool definition.' }),
      { description: 'Fields that differ besides the name; empty for a rename alone.' },
    ),
    severity: StringEnum(DRIFT_SEVERITIES, {
      description: 'breaking: calls to the old name fail, and the new name is not approved.',
    }),
  },
  { description: 'An approved tool that the server now lists under another name.' },
);

const DriftStatus = Type.Object(
  {
    added: Type.Optional(ToolNames('Tools the server lists that are not approved.')),
    removed: Type.Optional(ToolNames('Approved tools the server no longer lists.')),
    changed: Type.Optional(
      Type.Array(ChangedTool, {
        description: 'Approved tools whose definition changed.',
        maxItems: MAX_TOOLS,
      }),
    ),
    renamed: Type.Optional(
      Type.Array(RenamedTool, {
        description:
          'Approved tools gone and new ones nearly the same, paired as renames (their names are not repeated in added and removed). A rename is drift like any other: the new name is not approved until a person approves it (`mcp-operator approve --tool <to>`).',
        maxItems: MAX_TOOLS,
      }),
    ),
    missingAllowed: Type.Optional(
      ToolNames('Tools in spec.tools.allow that the server no longer lists.'),
    ),
    invalidNames: Type.Optional(
      Type.Array(
        Type.String({
          description:
            'A name as the server lists it, with control characters shown as escapes such as \\e and cut after 64 characters.',
          maxLength: SERVER_TEXT_MAX,
        }),
        {
          description:
            "Tools whose names break MCP's tool-name rules (1 to 128 of A-Z, a-z, 0-9, _, - and .): they cannot be approved, so under driftPolicy Enforce the bridge hides them, and an agent may mishandle them.",
          maxItems: MAX_TOOLS,
        },
      ),
    ),
    prompts: CatalogDriftStatus('prompts'),
    resources: CatalogDriftStatus('resources'),
    resourceTemplates: CatalogDriftStatus('resource templates'),
    since: Type.Optional(Time('When the current drift was first seen.')),
  },
  { description: 'How the discovered tools differ from spec.tools.approved.' },
);

const ProvenanceStatus = Type.Object(
  {
    image: Type.Optional(
      Type.String({
        description: 'spec.image as the digests below were seen running it.',
        maxLength: 1024,
      }),
    ),
    imageDigests: Type.Optional(
      Type.Array(Type.String({ pattern: IMAGE_DIGEST_PATTERN }), {
        description:
          "Digests of the image the server container runs, from the pods' status (imageID, what the node resolved the tag to), one per distinct image, sorted.",
        maxItems: IMAGE_DIGESTS_MAX,
      }),
    ),
    packages: Type.Optional(
      resolvedPackagesSchema(
        "Packages the server's command resolved when it started (an `npx` command: the version npm installed from the registry; a `uvx` command: the version uv installed from the package index), as the supervisor in the server container read them from the npx cache or the uv environment the server runs from, one per version the pods run, sorted.",
      ),
    ),
    codeChanged: Type.Optional(
      Type.Object(
        {
          since: Time('When the different code was first seen.'),
          message: Type.String({
            description:
              'What changed: the image digest a tag now resolves to, the version an npx or uvx package resolved to, or serverInfo.',
            maxLength: CONDITION_MESSAGE_MAX,
          }),
        },
        {
          description:
            'Set when the same spec started running different code: a tag moved to another digest, an unpinned npx or uvx package resolved another version (when its pod restarted, or for a new PerSession child), or the server reports another serverInfo. An Event CodeChanged is recorded and discovery runs at once. Cleared by the next change of the spec, such as approving the tools again.',
        },
      ),
    ),
  },
  {
    description:
      'Which code produced the tools: image digests, packages resolved at start, and whether they moved.',
  },
);

export const MCPServerStatus = Type.Object(
  {
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'metadata.generation this status describes.', minimum: 0 }),
    ),
    conditions: Type.Optional(
      Type.Array(Condition, {
        description: 'Ready, Discovered and Drifted, with reasons and messages.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
    endpoint: Type.Optional(
      Type.String({ description: 'URL of the MCP endpoint clients in the cluster use.' }),
    ),
    replicas: Type.Optional(Type.Integer({ description: 'Server pods that exist.', minimum: 0 })),
    readyReplicas: Type.Optional(
      Type.Integer({ description: 'Server pods that are ready.', minimum: 0 }),
    ),
    discovery: Type.Optional(DiscoveryStatus),
    drift: Type.Optional(DriftStatus),
    provenance: Type.Optional(ProvenanceStatus),
  },
  { description: 'Observed state of the MCP server, written by the operator.' },
);

export type MCPServerStatus = Static<typeof MCPServerStatus>;
export type DriftSeverity = (typeof DRIFT_SEVERITIES)[number];
export type DiscoveredTool = Static<typeof DiscoveredTool>;
export type DiscoveryStatus = Static<typeof DiscoveryStatus>;
export type DriftStatus = Static<typeof DriftStatus>;
export type ProvenanceStatus = Static<typeof ProvenanceStatus>;
export type ChangedTool = Static<typeof ChangedTool>;
export type RenamedTool = Static<typeof RenamedTool>;
export type StatusFinding = Static<typeof Finding>;
export type StatusTextFindings = Static<typeof TextFindings>;
