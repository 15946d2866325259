/**
 * A snapshot is what one successful discovery found, in two forms:
 * - compact, for `status.discovery`: per tool its name and abbreviated digest, so that
 *   `kubectl get -o yaml` shows which tools changed without the schemas;
 * - full, for the snapshot ConfigMap: every tool definition as the server listed it, with its
 *   digests in full. It is size-checked against the ConfigMap limit: a tool set that does not
 *   fit is reported, never silently cut.
 */

import type { DiscoveryStatus } from '../api/v1alpha1/mcpserver.ts';
import {
  type Digest,
  type FieldDigests,
  fieldDigests,
  snapshotDigest,
  toolDigest,
} from './digest.ts';
import { Type } from '@sinclair/typebox';
import { operatorError } from '../errors.ts';
import {
  type Implementation,
  type Tool,
  ImplementationSchema,
  ToolSchema,
  checker,
} from '../mcp/schemas.ts';

/** What a server told discovery about itself. */
export interface Discovery {
  protocolVersion: string;
  /** Self-reported, for display only (2026-07-28 server/discover: clients SHOULD NOT trust it). */
  serverInfo: Implementation | undefined;
  capabilities: Record<string, unknown>;
  /** Text a client may put in the model's prompt, so as much a poisoning vector as a description. */
  instructions: string | undefined;
  /** Tool definitions exactly as listed, in the server's order. */
  tools: Tool[];
}

/** One tool of a snapshot: its definition as listed and its digests in full. */
export interface SnapshotTool {
  name: string;
  digest: Digest;
  fields: FieldDigests;
  definition: Tool;
}

export interface Snapshot {
  digest: Digest;
  protocolVersion: string;
  serverInfo: Implementation | undefined;
  capabilities: Record<string, unknown>;
  instructions: string | undefined;
  /** Ordered by name, so that every rendering of a snapshot is deterministic. */
  tools: SnapshotTool[];
}

/** Digest every tool. Throws MCPOP_NOT_CANONICAL for a definition RFC 8785 cannot represent. */
export function takeSnapshot(discovery: Discovery): Snapshot {
  const tools = discovery.tools
    .map((definition) => ({
      name: definition.name,
      digest: toolDigest(definition),
      fields: fieldDigests(definition),
      definition,
    }))
    .sort((a, b) => compareNames(a.name, b.name));
  return {
    digest: snapshotDigest(tools),
    protocolVersion: discovery.protocolVersion,
    serverInfo: discovery.serverInfo,
    capabilities: discovery.capabilities,
    instructions: discovery.instructions,
    tools,
  };
}

/** UTF-16 code unit order, the order RFC 8785 sorts keys in (and snapshotDigest uses). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type CompactDiscovery = Pick<
  DiscoveryStatus,
  'protocolVersion' | 'serverInfo' | 'capabilities' | 'toolCount' | 'snapshotDigest' | 'tools'
>;

/** Hex digits kept of a tool digest in status: enough to see which tools changed. */
const STATUS_DIGEST_HEX = 12;

/**
 * The parts of `status.discovery` a snapshot determines (times, lastError and the ConfigMap
 * name are the caller's). Per tool only its name and abbreviated digest, so that status stays
 * a few KiB for 100 tools (docs/adr/0003); the snapshot digest stays full. Full tool digests
 * and field digests are in the snapshot ConfigMap, which `approve` and `diff` read.
 */
export function compactStatus(snapshot: Snapshot): CompactDiscovery {
  const info = snapshot.serverInfo;
  return {
    protocolVersion: snapshot.protocolVersion,
    ...(info === undefined ? {} : { serverInfo: { name: info.name, version: info.version } }),
    capabilities: Object.keys(snapshot.capabilities).sort(compareNames),
    toolCount: snapshot.tools.length,
    snapshotDigest: snapshot.digest,
    tools: snapshot.tools.map(({ name, digest }) => ({ name, digest: abbreviate(digest) })),
  };
}

/** `sha256:` and the first 12 hex digits, the form status and `approve --digests` fields use. */
export function abbreviate(digest: Digest): string {
  return digest.slice(0, 'sha256:'.length + STATUS_DIGEST_HEX);
}

/** The key of the snapshot ConfigMap that holds the full snapshot. */
export const SNAPSHOT_KEY = 'snapshot.json';

/**
 * Total size of a ConfigMap's data: the API server refuses more than 1 MiB
 * (k8s.io/kubernetes pkg/apis/core/validation: ValidateConfigMap, MaxSecretSize).
 */
export const CONFIGMAP_LIMIT_BYTES = 1024 * 1024;

export type ConfigMapData =
  | { fits: true; data: Record<string, string>; bytes: number }
  | {
      fits: false;
      bytes: number;
      limit: number;
      /** The largest tools, biggest first, so the message can say what takes the room. */
      largest: { name: string; bytes: number }[];
    };

/**
 * The snapshot ConfigMap's data, or why it does not fit. JSON with one tool per line: compact
 * enough to fit hundreds of tools, still readable and greppable with `kubectl get -o yaml`.
 */
export function snapshotConfigMap(
  snapshot: Snapshot,
  limit = CONFIGMAP_LIMIT_BYTES,
): ConfigMapData {
  const header = JSON.stringify({
    snapshotDigest: snapshot.digest,
    protocolVersion: snapshot.protocolVersion,
    serverInfo: snapshot.serverInfo,
    instructions: snapshot.instructions,
  });
  const lines = snapshot.tools.map((tool) => JSON.stringify(tool));
  const text = `${header.slice(0, -1)},"tools":[\n${lines.join(',\n')}\n]}\n`;
  const bytes = Buffer.byteLength(SNAPSHOT_KEY) + Buffer.byteLength(text);
  if (bytes <= limit) return { fits: true, data: { [SNAPSHOT_KEY]: text }, bytes };
  const largest = snapshot.tools
    .map((tool, i) => ({ name: tool.name, bytes: Buffer.byteLength(lines[i] ?? '') }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 5);
  return { fits: false, bytes, limit, largest };
}

const STORED_SNAPSHOT = checker(
  Type.Object({
    snapshotDigest: Type.String(),
    protocolVersion: Type.String(),
    serverInfo: Type.Optional(ImplementationSchema),
    instructions: Type.Optional(Type.String()),
    tools: Type.Array(Type.Object({ definition: ToolSchema })),
  }),
);

/**
 * The snapshot a ConfigMap holds (what `snapshotConfigMap` wrote), with every digest computed
 * again from the definitions: an edited definition no longer matches the snapshot digest, so
 * `approve` never approves what discovery did not see. Capabilities are not stored; they are in
 * status.discovery.
 */
export function readSnapshot(text: string, source: string): Snapshot {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw operatorError('MCPOP_SNAPSHOT_INVALID', source, `not JSON: ${(error as Error).message}`);
  }
  if (!STORED_SNAPSHOT.check(value)) {
    const { path, message } = STORED_SNAPSHOT.firstError(value);
    throw operatorError('MCPOP_SNAPSHOT_INVALID', source, `${path || '/'}: ${message}`);
  }
  const snapshot = takeSnapshot({
    protocolVersion: value.protocolVersion,
    serverInfo: value.serverInfo,
    capabilities: {},
    instructions: value.instructions,
    tools: value.tools.map((tool) => tool.definition),
  });
  if (snapshot.digest !== value.snapshotDigest) {
    const problem = `its tools digest to ${snapshot.digest}, not to the ${value.snapshotDigest} it records`;
    throw operatorError('MCPOP_SNAPSHOT_INVALID', source, problem);
  }
  return snapshot;
}
