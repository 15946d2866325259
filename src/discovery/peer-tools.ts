/**
 * The tool names of the other MCPServers in a server's namespace, for the shadowing check of
 * the text scan (src/tools/text-findings.ts, `shadowing-name`): a description that names
 * another server's tool is telling the model how to use a tool this server does not own.
 *
 * Read from what the cache already holds (status.discovery.tools of each peer), so a run costs
 * no request. Bounded both ways, so that a namespace of 1,000 servers with 1,000 tools each
 * costs a run no more than PEER_TOOL_NAMES_MAX map entries: the peers are taken in name order
 * and their names until the cap, and a name longer than PEER_TOOL_NAME_MAX is left out (the
 * scan's identifiers are shorter; such a name is not a word anyone writes in prose).
 */

import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { compareNames } from '../tools/digest.ts';

/** Most tool names of other servers one scan looks for (docs/hostile-inputs.md). */
export const PEER_TOOL_NAMES_MAX = 5000;
/** Longest tool name looked for; longer ones are skipped. */
export const PEER_TOOL_NAME_MAX = 64;

/**
 * Lower-cased tool name → the name of the other MCPServer that lists it, for every MCPServer of
 * `peers` but `server` itself; the first server in name order wins a name two of them list.
 */
export function peerToolNames(
  server: StoredMCPServer,
  peers: readonly StoredMCPServer[],
): Map<string, string> {
  const { namespace, name: self } = server.metadata;
  let others = peers.filter(
    (peer) => peer.metadata.namespace === namespace && peer.metadata.name !== self,
  );
  const listed = others.reduce(
    (sum, peer) => sum + (peer.status?.discovery?.tools?.length ?? 0),
    0,
  );
  // Which names the cap keeps must not change from run to run; under it, order does not matter.
  if (listed > PEER_TOOL_NAMES_MAX)
    others = others.sort((a, b) => compareNames(a.metadata.name, b.metadata.name));
  const names = new Map<string, string>();
  for (const peer of others) {
    const owner = peer.metadata.name;
    for (const { name } of peer.status?.discovery?.tools ?? []) {
      if (names.size >= PEER_TOOL_NAMES_MAX) return names;
      if (name.length > PEER_TOOL_NAME_MAX) continue;
      const key = name.toLowerCase();
      const known = names.get(key);
      if (known === undefined || compareNames(owner, known) < 0) names.set(key, owner);
    }
  }
  return names;
}
