/**
 * The full snapshot in its ConfigMap: every tool definition as the server listed it, with its
 * digests in full. It is size-checked against the ConfigMap limit: a tool set that does not fit
 * is reported, never silently cut. `approve` and `diff` read it back, digests recomputed.
 */

import { Type } from '@sinclair/typebox';
import { operatorError } from '../errors.ts';
import { ImplementationSchema, checker } from '../mcp/schemas.ts';
import { CATALOG_KINDS } from '../tools/catalog-items.ts';
import { type Snapshot, takeSnapshot } from '../tools/snapshot.ts';

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
    findings: snapshot.findings,
  });
  const lines = snapshot.tools.map((tool) => JSON.stringify(tool));
  const text = `${header.slice(0, -1)},"tools":[\n${lines.join(',\n')}\n]${catalogText(snapshot)}}\n`;
  const bytes = Buffer.byteLength(SNAPSHOT_KEY) + Buffer.byteLength(text);
  if (bytes <= limit) return { fits: true, data: { [SNAPSHOT_KEY]: text }, bytes };
  const largest = snapshot.tools
    .map((tool, i) => ({ name: tool.name, bytes: Buffer.byteLength(lines[i] ?? '') }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 5);
  return { fits: false, bytes, limit, largest };
}

/** Each kind's definitions as listed, one per line; digests are recomputed on reading. */
function catalogText(snapshot: Snapshot): string {
  const kinds = CATALOG_KINDS.filter((kind) => snapshot.catalog[kind] !== undefined);
  if (kinds.length === 0) return '';
  const lists = kinds.map((kind) => {
    const lines = (snapshot.catalog[kind] ?? []).map((item) => JSON.stringify(item.definition));
    return `"${kind}":[${lines.length === 0 ? '' : `\n${lines.join(',\n')}\n`}]`;
  });
  return `,"catalog":{\n${lists.join(',\n')}\n}`;
}

const Definitions = Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown())));

const STORED_SNAPSHOT = checker(
  Type.Object({
    snapshotDigest: Type.String(),
    protocolVersion: Type.String(),
    serverInfo: Type.Optional(ImplementationSchema),
    instructions: Type.Optional(Type.String()),
    findings: Type.Optional(
      Type.Array(Type.Object({ item: Type.String(), problem: Type.String() })),
    ),
    // Conformant or not, as discovery recorded them (src/tools/findings.ts).
    tools: Type.Array(
      Type.Object({
        definition: Type.Object({ name: Type.String() }, { additionalProperties: true }),
      }),
    ),
    catalog: Type.Optional(
      Type.Object({ prompts: Definitions, resources: Definitions, resourceTemplates: Definitions }),
    ),
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
    catalog: value.catalog,
  });
  if (snapshot.digest !== value.snapshotDigest) {
    const problem = `its tools digest to ${snapshot.digest}, not to the ${value.snapshotDigest} it records`;
    throw operatorError('MCPOP_SNAPSHOT_INVALID', source, problem);
  }
  // What discovery found, including entries it could not record as tools.
  return { ...snapshot, findings: value.findings ?? snapshot.findings };
}
