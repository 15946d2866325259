/**
 * What the fields of an MCPServer spec mean when they are left out: the defaults of
 * defaults.ts applied, in one place for render, the controller and discovery.
 */

import { parseDuration } from '../../duration.ts';
import { DEFAULTS } from './defaults.ts';
import type { MCPServerSpec } from './mcpserver.ts';

type WithSpec = { spec: MCPServerSpec };

export function discoveryEnabled(spec: MCPServerSpec): boolean {
  return spec.discovery?.enabled ?? DEFAULTS.discovery.enabled;
}

export function intervalMs(spec: MCPServerSpec): number {
  const fallback = parseDuration(DEFAULTS.discovery.interval)!;
  return parseDuration(spec.discovery?.interval ?? DEFAULTS.discovery.interval) ?? fallback;
}

export function timeoutMs(spec: MCPServerSpec): number {
  const fallback = parseDuration(DEFAULTS.discovery.timeout)!;
  return parseDuration(spec.discovery?.timeout ?? DEFAULTS.discovery.timeout) ?? fallback;
}

/** Whether the bridge enforces the approved tools: a stdio server under `driftPolicy: Enforce`. */
export function isEnforced(server: WithSpec): boolean {
  return server.spec.transport === 'stdio' && server.spec.tools?.driftPolicy === 'Enforce';
}

/**
 * Whether the server's bridge holds a discovery token: every deployed stdio server. With it
 * discovery reads the unfiltered tool list under Enforce, and long-polls the bridge's change
 * feed (src/mcp/change-feed.ts) under either policy.
 */
export function needsDiscoveryToken(server: WithSpec): boolean {
  return server.spec.image !== undefined && server.spec.transport === 'stdio';
}
