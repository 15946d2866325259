/**
 * Status of MCPServer v1alpha1, written by the operator. Kept compact: per tool only digests;
 * the full definitions live in the snapshot ConfigMap that status.discovery points to.
 */

import { Type, type Static } from '@sinclair/typebox';
import { Condition } from '../core-v1.ts';
import { StringEnum } from '../schema.ts';
import { DIGEST_PATTERN, FIELD_DIGEST_PATTERN, TOOL_FIELDS } from './tools.ts';

export const DRIFT_SEVERITIES = ['breaking', 'compatible', 'description-only'] as const;

const Time = (description: string) => Type.String({ description, format: 'date-time' });

const ToolNames = (description: string) =>
  Type.Array(Type.String({ description: 'A tool name.' }), { description });

const DiscoveredTool = Type.Object(
  {
    name: Type.String({ description: 'Tool name as the server lists it.' }),
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

/**
 * Times that discovery refreshes without another change only this often, so that a round that
 * finds nothing new writes nothing (docs/adr/0003). Prometheus has the exact times.
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
      Type.String({ description: 'MCP protocol version negotiated with the server.' }),
    ),
    serverInfo: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ description: 'Server name it reports.' })),
          version: Type.Optional(Type.String({ description: 'Server version it reports.' })),
        },
        { description: 'What the server says it is (serverInfo of the initialize result).' },
      ),
    ),
    capabilities: Type.Optional(
      Type.Array(Type.String({ description: 'A capability name.' }), {
        description: 'Capabilities the server declares, such as tools, resources, prompts.',
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
      Type.Array(DiscoveredTool, { description: 'The tools, in compact form.' }),
    ),
    snapshotConfigMap: Type.Optional(
      Type.String({
        description:
          'Name of the ConfigMap holding the last snapshot: every tool definition as listed, with its full digest and per-field digests. Absent when the snapshot did not fit (see the Discovered condition).',
      }),
    ),
    lastError: Type.Optional(
      Type.String({ description: 'Why the last discovery failed; empty after a success.' }),
    ),
  },
  { description: 'What the last discovery found.' },
);

const ChangedTool = Type.Object(
  {
    name: Type.String({ description: 'Tool name.' }),
    fields: Type.Array(
      StringEnum(TOOL_FIELDS, { description: 'A field of the tool definition.' }),
      { description: 'Fields that differ from the approved definition.' },
    ),
    severity: StringEnum(DRIFT_SEVERITIES, {
      description:
        'breaking: callers built for the approved schema may fail (new required argument, removed property, narrowed type). compatible: a change that keeps old calls valid. description-only: only the text changed, which is how a tool is poisoned; review it.',
    }),
  },
  { description: 'A tool whose definition differs from the approved one.' },
);

const DriftStatus = Type.Object(
  {
    added: Type.Optional(ToolNames('Tools the server lists that are not approved.')),
    removed: Type.Optional(ToolNames('Approved tools the server no longer lists.')),
    changed: Type.Optional(
      Type.Array(ChangedTool, { description: 'Approved tools whose definition changed.' }),
    ),
    missingAllowed: Type.Optional(
      ToolNames('Tools in spec.tools.allow that the server no longer lists.'),
    ),
    since: Type.Optional(Time('When the current drift was first seen.')),
  },
  { description: 'How the discovered tools differ from spec.tools.approved.' },
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
  },
  { description: 'Observed state of the MCP server, written by the operator.' },
);

export type MCPServerStatus = Static<typeof MCPServerStatus>;
export type DriftSeverity = (typeof DRIFT_SEVERITIES)[number];
export type DiscoveredTool = Static<typeof DiscoveredTool>;
export type DiscoveryStatus = Static<typeof DiscoveryStatus>;
export type DriftStatus = Static<typeof DriftStatus>;
export type ChangedTool = Static<typeof ChangedTool>;
