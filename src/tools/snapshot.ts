/**
 * A snapshot is what one successful discovery found, in two forms:
 * - compact, for `status.discovery`: per tool its name and abbreviated digest, so that
 *   `kubectl get -o yaml` shows which tools changed without the schemas;
 * - full: every tool definition as the server listed it, with its digests in full, which
 *   src/discovery/snapshot-configmap.ts stores in the snapshot ConfigMap.
 */

import type { DiscoveryStatus } from '../api/v1alpha1/mcpserver.ts';
import {
  CAPABILITIES_MAX,
  FINDING_PROBLEM_MAX,
  FINDINGS_MAX,
  TEXT_FINDING_PLACE_MAX,
  TEXT_FINDINGS_MAX,
  TOOL_NAME_PATTERN,
} from '../tool-record.ts';
import {
  type Digest,
  type FieldDigests,
  compareNames,
  snapshotDigest,
  toolDigests,
} from './digest.ts';
import type { Implementation } from '../mcp/schemas.ts';
import { type Finding, type ListedTool, toolFindings } from './findings.ts';
import {
  type Catalog,
  type CatalogKind,
  type ListedItem,
  catalogDigest,
  catalogItems,
} from './catalog-items.ts';
import { NAME_MAX, shown } from './text.ts';
import { FINDING_LEVELS, type TextFinding, highestLevel, judgeListing } from './text-findings.ts';

/** What a server told discovery about itself. */
export interface Discovery {
  protocolVersion: string;
  /** Self-reported, for display only (2026-07-28 server/discover: clients SHOULD NOT trust it). */
  serverInfo: Implementation | undefined;
  capabilities: Record<string, unknown>;
  /** Text a client may put in the model's prompt, so as much a poisoning vector as a description. */
  instructions: string | undefined;
  /** Tool definitions exactly as listed, in the server's order, conformant or not. */
  tools: ListedTool[];
  /** Listed entries that could not be recorded as tools (findings.ts); none when absent. */
  findings?: Finding[] | undefined;
  /** Prompts, resources and resource templates as listed, for the capabilities declared. */
  catalog?: Partial<Record<CatalogKind, ListedItem[]>> | undefined;
  /** Listed prompts and resources that could not be recorded (no key). */
  catalogFindings?: Finding[] | undefined;
}

/** One tool of a snapshot: its definition as listed and its digests in full. */
export interface SnapshotTool {
  name: string;
  digest: Digest;
  fields: FieldDigests;
  definition: ListedTool;
}

export interface Snapshot {
  digest: Digest;
  protocolVersion: string;
  serverInfo: Implementation | undefined;
  capabilities: Record<string, unknown>;
  instructions: string | undefined;
  /** Ordered by name, so that every rendering of a snapshot is deterministic. */
  tools: SnapshotTool[];
  /** How the listed tools break the MCP schema, in list order; empty for a conformant server. */
  findings: Finding[];
  /** Prompts, resources and resource templates, for the capabilities the server declares. */
  catalog: Catalog;
  /** Findings on the text the model reads (text-findings.ts), in the order of modelTexts. */
  textFindings: TextFinding[];
}

/**
 * Digest every tool and judge the text the model reads. `peerTools` maps the tool names of the
 * namespace's other MCPServers to their server, for shadowing (discovery/peer-tools.ts). Throws
 * MCPOP_NOT_CANONICAL for a definition RFC 8785 cannot represent.
 */
export function takeSnapshot(
  discovery: Discovery,
  peerTools: ReadonlyMap<string, string> = new Map(),
): Snapshot {
  const tools = discovery.tools
    .map((definition) => ({ name: definition.name, ...toolDigests(definition), definition }))
    .sort((a, b) => compareNames(a.name, b.name));
  return {
    digest: snapshotDigest(tools),
    protocolVersion: discovery.protocolVersion,
    serverInfo: discovery.serverInfo,
    capabilities: discovery.capabilities,
    instructions: discovery.instructions,
    tools,
    findings: [
      ...(discovery.findings ?? []),
      ...toolFindings(discovery.tools),
      ...(discovery.catalogFindings ?? []),
    ],
    catalog: Object.fromEntries(
      Object.entries(discovery.catalog ?? {}).map(([kind, listed]) => [
        kind,
        catalogItems(kind as CatalogKind, listed),
      ]),
    ),
    textFindings: judgeListing(discovery, peerTools),
  };
}

const TOOL_NAME = new RegExp(TOOL_NAME_PATTERN);

/**
 * Whether a name follows MCP's tool-name rules (2025-11-25 server/tools "Tool Names"). Only
 * such names are stored or approved as names; the others are findings (drift.ts).
 */
export function isToolName(name: string): boolean {
  return TOOL_NAME.test(name);
}

export type CompactDiscovery = Pick<
  DiscoveryStatus,
  | 'protocolVersion'
  | 'serverInfo'
  | 'capabilities'
  | 'toolCount'
  | 'snapshotDigest'
  | 'tools'
  | 'findingCount'
  | 'findings'
  | 'textFindings'
  | CatalogKind
>;

/** Hex digits kept of a tool digest in status: enough to see which tools changed. */
const STATUS_DIGEST_HEX = 12;

/**
 * The parts of `status.discovery` a snapshot determines (times, lastError and the ConfigMap
 * name are the caller's). Per tool only its name and abbreviated digest, so that status stays
 * a few KiB for 100 tools (docs/adr/0017); the snapshot digest stays full. Full tool digests
 * and field digests are in the snapshot ConfigMap, which `approve` and `diff` read. What the
 * server chose is shown, never stored as is: names that break the rules are left to
 * status.drift.invalidNames, other text is made visible and bounded (text.ts).
 */
export function compactStatus(snapshot: Snapshot): CompactDiscovery {
  const info = snapshot.serverInfo;
  const capabilities = Object.keys(snapshot.capabilities).sort(compareNames);
  return {
    protocolVersion: snapshot.protocolVersion,
    ...(info === undefined
      ? {}
      : {
          serverInfo: { name: shown(info.name, NAME_MAX), version: shown(info.version, NAME_MAX) },
        }),
    capabilities: capabilities.slice(0, CAPABILITIES_MAX).map((key) => shown(key, NAME_MAX)),
    toolCount: snapshot.tools.length,
    snapshotDigest: snapshot.digest,
    tools: snapshot.tools
      .filter(({ name }) => isToolName(name))
      .map(({ name, digest }) => ({ name, digest: abbreviate(digest) })),
    ...compactFindings(snapshot.findings),
    ...compactTextFindings(snapshot.textFindings),
    ...catalogSummary(snapshot.catalog),
  };
}

/** The first findings and their count; nothing at all for a conformant server. */
function compactFindings(
  findings: readonly Finding[],
): Pick<CompactDiscovery, 'findingCount' | 'findings'> {
  if (findings.length === 0) return {};
  return {
    findingCount: findings.length,
    findings: findings.slice(0, FINDINGS_MAX).map(({ item, problem }) => ({
      item: shown(item, NAME_MAX),
      problem: shown(problem, FINDING_PROBLEM_MAX),
    })),
  };
}

/** The most severe findings on model-facing text first, bounded; nothing without findings. */
function compactTextFindings(
  findings: readonly TextFinding[],
): Pick<CompactDiscovery, 'textFindings'> {
  const level = highestLevel(findings);
  if (level === undefined) return {};
  const first: TextFinding[] = [];
  for (const level of FINDING_LEVELS) {
    for (const finding of findings) {
      if (first.length === TEXT_FINDINGS_MAX) break;
      if (finding.level === level) first.push(finding);
    }
  }
  return {
    textFindings: {
      level,
      count: findings.length,
      items: first.map(({ item, field, code, level, start, end, reason }) => ({
        item: shown(item, TEXT_FINDING_PLACE_MAX),
        field: shown(field, TEXT_FINDING_PLACE_MAX),
        code,
        level,
        start,
        end,
        reason: shown(reason, TEXT_FINDING_PLACE_MAX),
      })),
    },
  };
}

/**
 * `sha256:` and the first 12 hex digits, the form status and `approve --digests` fields use.
 * A copy, not a slice: V8 keeps the whole string that a slice of 13 or more characters was cut
 * from alive as long as the slice, and discovery keeps one of these per tool of every server
 * (src/discovery/results.ts), which made each cost the full digest as well.
 */
export function abbreviate(digest: Digest): string {
  const prefix = digest.slice(0, 'sha256:'.length + STATUS_DIGEST_HEX);
  return Buffer.from(prefix).toString();
}

/** Per kind the server offers, how many items it lists and their digest. */
function catalogSummary(catalog: Catalog): Pick<CompactDiscovery, CatalogKind> {
  return Object.fromEntries(
    Object.entries(catalog).map(([kind, items]) => [
      kind,
      { count: items.length, digest: catalogDigest(items) },
    ]),
  );
}
