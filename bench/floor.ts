/**
 * The cluster's own floor for N servers: what kube-controller-manager, the scheduler and kwok
 * cost anyway, without the operator. The objects `render()` returns for each server, and the
 * discovery token Secret its bridge mounts (a kubelet starts no pod whose Secret volume is
 * missing), are POSTed directly, `concurrency` servers at a time, each server's in two rounds
 * as the operator writes them (what its pods need, then the Deployment and Services together:
 * isPodPrerequisite), until every Deployment is available (told by a watch). Owner references are dropped: their
 * owner does not exist here, and the garbage collector would delete the objects.
 *
 * The servers are the API server's own defaulting of the spec (a dry-run create), so render
 * sees exactly what the operator's cache would hold.
 */
import { randomUUID } from 'node:crypto';
import type { V1Deployment } from '@kubernetes/client-node';
import { API_VERSION, type MCPServer } from '../src/api/v1alpha1/mcpserver.ts';
import { KIND } from '../src/api/names.ts';
import { MCP_SERVER, type StoredMCPServer } from '../src/api/v1alpha1/stored.ts';
import { RENDERED_TYPES, type RenderedKind } from '../src/controller/caches.ts';
import { discoveryTokenSecret } from '../src/controller/discovery-token.ts';
import { needsDiscoveryToken } from '../src/api/v1alpha1/spec.ts';
import { isPodPrerequisite, render } from '../src/controller/render/render.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { DEPLOYMENT, SECRET, collectionPath, type KubeObject } from '../src/kube/resources.ts';
import { WatchedCount, patienceMs, pool } from './harness.ts';
import { rolloutMs } from './timeline.ts';
import { placements, type Slot } from './layout.ts';

/** The operator's default --bridge-image, as the bench runs it. */
const BRIDGE_IMAGE = 'mcp-operator:latest';

/** Each `srv-<i>` of a layout as the API server stores it: defaulted, with a uid of its own. */
async function storedServers(
  client: KubeClient,
  layout: readonly Slot[],
  spec: MCPServer['spec'],
): Promise<StoredMCPServer[]> {
  const defaulted = await client.request<StoredMCPServer>({
    method: 'POST',
    path: collectionPath(MCP_SERVER, layout[0]!.namespace),
    query: { dryRun: 'All' },
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'srv-0' }, spec },
  });
  return placements(layout).map(({ namespace, index }) => ({
    ...defaulted,
    metadata: {
      ...defaulted.metadata,
      namespace,
      name: `srv-${index}`,
      uid: randomUUID(),
      generation: 1,
    },
  }));
}

/** Whether a Deployment has rolled out its current spec to every replica. */
export function isAvailable(d: KubeObject & V1Deployment): boolean {
  const want = d.spec?.replicas ?? 1;
  return (
    (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) &&
    (d.status?.updatedReplicas ?? 0) >= want &&
    (d.status?.availableReplicas ?? 0) >= want
  );
}

/**
 * Seconds from the first POST until the Deployment of every server of `layout` is available,
 * and each Deployment's rollout (milliseconds from seen to available); `progress` hears how
 * many are available each time they are counted.
 */
export async function floorSeconds(
  client: KubeClient,
  layout: readonly Slot[],
  concurrency: number,
  spec: MCPServer['spec'],
  progress: (available: number) => void = () => {},
): Promise<{ seconds: number; rolloutMs: number[] }> {
  const servers = await storedServers(client, layout, spec);
  const n = servers.length;
  const namespaces = layout.map((slot) => slot.namespace);
  const available = await WatchedCount.start(client, DEPLOYMENT, namespaces, isAvailable);
  try {
    const started = Date.now();
    const create = (obj: KubeObject) => {
      const metadata = { ...obj.metadata };
      delete metadata.ownerReferences;
      const type = obj.kind === SECRET.kind ? SECRET : RENDERED_TYPES[obj.kind as RenderedKind];
      return client.request({
        method: 'POST',
        path: collectionPath(type, obj.metadata.namespace),
        body: { ...obj, metadata },
      });
    };
    // Counted while the POSTs still go out, so that a run cut short says how far it got.
    await Promise.all([
      pool(servers, concurrency, async (server) => {
        const objects = render(server, { image: BRIDGE_IMAGE }) as KubeObject[];
        const token = needsDiscoveryToken(server)
          ? [discoveryTokenSecret(server) as KubeObject]
          : [];
        const prerequisites = objects.filter((obj) => isPodPrerequisite(obj.kind));
        await Promise.all([...token, ...prerequisites].map(create));
        await Promise.all(objects.filter((obj) => !isPodPrerequisite(obj.kind)).map(create));
      }),
      available.until(n, `${n} floor Deployments available`, patienceMs(n), progress),
    ]);
    return { seconds: (Date.now() - started) / 1000, rolloutMs: rolloutMs(available) };
  } finally {
    await available.stop();
  }
}
