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

/**
 * Whether a bridge sidecar serves the server: always for stdio; for streamable-http (proxy
 * mode) unless `spec.bridge.enabled` is false; never for a url server (nothing is deployed).
 */
export function hasBridge(server: WithSpec): boolean {
  const { image, transport, bridge } = server.spec;
  if (image === undefined) return false;
  return transport === 'stdio' || bridge?.enabled !== false;
}

/** Whether the bridge enforces the approved tools: a server with a bridge under `Enforce`. */
export function isEnforced(server: WithSpec): boolean {
  return hasBridge(server) && server.spec.tools?.driftPolicy === 'Enforce';
}

/**
 * Whether the server's bridge holds a discovery token: every server with a bridge. With it
 * discovery reads the unfiltered tool list under Enforce, and long-polls the bridge's change
 * feed (src/mcp/change-feed.ts) under either policy.
 */
export function needsDiscoveryToken(server: WithSpec): boolean {
  return hasBridge(server);
}
