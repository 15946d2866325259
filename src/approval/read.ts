/**
 * What an approval is planned from, read from the API: the MCPServer (its resourceVersion is
 * the one the write is conditioned on), the snapshot its status points to (checked to be the
 * one status describes: what is approved is exactly what discovery last saw) and the baseline
 * approved now.
 */

import { KIND } from '../api/names.ts';
import { MCP_SERVER, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { readBaseline } from '../discovery/baseline.ts';
import type { Baseline } from '../tools/baseline.ts';
import { SNAPSHOT_KEY, readSnapshot } from '../discovery/snapshot-configmap.ts';
import { operatorError } from '../errors.ts';
import type { KubeClient } from '../kube/client.ts';
import { CONFIG_MAP, objectPath } from '../kube/resources.ts';
import type { Snapshot } from '../tools/snapshot.ts';

export interface ApprovalView {
  server: StoredMCPServer;
  snapshot: Snapshot;
  baseline: Baseline;
}

/** Reads the MCPServer `namespace/name` and what an approval of it is planned from. */
export async function readApprovalView(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<ApprovalView> {
  const server = await client.request<StoredMCPServer>({
    method: 'GET',
    path: objectPath(MCP_SERVER, namespace, name),
  });
  return viewOf(client, server);
}

/** The view of a server already read. */
export async function viewOf(client: KubeClient, server: StoredMCPServer): Promise<ApprovalView> {
  const snapshot = await currentSnapshot(client, server);
  return { server, snapshot, baseline: await readBaseline(client, server) };
}

/** The snapshot status.discovery points to, refused unless it is the one status describes. */
export async function currentSnapshot(
  client: KubeClient,
  server: StoredMCPServer,
): Promise<Snapshot> {
  const { namespace, name } = server.metadata;
  const discovery = server.status?.discovery;
  const who = `${KIND} ${namespace}/${name}`;
  if (discovery?.snapshotDigest === undefined) {
    throw operatorError('MCPOP_NOT_DISCOVERED', who, 'no discovery has succeeded yet');
  }
  if (discovery.snapshotConfigMap === undefined) {
    throw operatorError(
      'MCPOP_NOT_DISCOVERED',
      who,
      'its last snapshot did not fit in a ConfigMap',
    );
  }
  const configMap = await client.request<{ data?: Record<string, string> }>({
    method: 'GET',
    path: objectPath(CONFIG_MAP, namespace, discovery.snapshotConfigMap),
  });
  const source = `ConfigMap ${namespace}/${discovery.snapshotConfigMap}`;
  const snapshot = readSnapshot(configMap.data?.[SNAPSHOT_KEY] ?? '', source);
  if (snapshot.digest !== discovery.snapshotDigest) {
    const problem = `it holds snapshot ${snapshot.digest} but status.discovery describes ${discovery.snapshotDigest}; discovery may be storing a newer one: run the command again`;
    throw operatorError('MCPOP_SNAPSHOT_INVALID', source, problem);
  }
  return snapshot;
}
