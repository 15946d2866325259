/** Fixtures shared by the discovery unit tests. */

import type { Tool } from '../../src/mcp/schemas.ts';
import { type SnapshotTool, takeSnapshot } from '../../src/tools/snapshot.ts';

/** The snapshot tools (digests, field digests) of a 2025-11-25 server listing `tools`. */
export function snapshotOf(...tools: Tool[]): SnapshotTool[] {
  return takeSnapshot({
    protocolVersion: '2025-11-25',
    serverInfo: undefined,
    capabilities: { tools: {} },
    instructions: undefined,
    tools,
  }).tools;
}
