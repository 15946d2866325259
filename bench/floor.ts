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
 *
 * Beside it, the least operator (leastOperatorSeconds): what no operator can save over the
 * floor, since the MCPServers and one status write each are what a user asks for and reads.
 */
import { randomUUID } from 'node:crypto';
import type { V1Deployment } from '@kubernetes/client-node';
import {
  API_VERSION,
  type MCPServer,
  type MCPServerStatus,
} from '../src/api/v1alpha1/mcpserver.ts';
import { KIND } from '../src/api/names.ts';
import { MCP_SERVER, type StoredMCPServer } from '../src/api/v1alpha1/stored.ts';
import { RENDERED_TYPES, type RenderedKind } from '../src/controller/caches.ts';
import { discoveryTokenSecret } from '../src/controller/discovery-token.ts';
import { needsDiscoveryToken } from '../src/api/v1alpha1/spec.ts';
import { endpointOf, isPodPrerequisite, render } from '../src/controller/render/render.ts';
import { deploymentReadiness } from '../src/controller/readiness.ts';
import { computeStatus } from '../src/controller/ready-status.ts';
import { statusWrite } from '../src/controller/reconcile.ts';
import { NO_BASELINE } from '../src/tools/baseline.ts';
import { discoveryStatus, withDiscovery } from '../src/discovery/discovery-status.ts';
import type { KubeClient } from '../src/kube/client.ts';
import {
  DEPLOYMENT,
  SECRET,
  collectionPath,
  keyOf,
  type KubeObject,
} from '../src/kube/resources.ts';
import { WatchedCount, createServer, isReady, patienceMs, pool } from './harness.ts';
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
 * POSTs `server`'s rendered objects (and the discovery token Secret its bridge mounts) in the
 * operator's two rounds: what its pods need, then the Deployment and Services together.
 * `owned` keeps the owner references render gives them: only when the MCPServer exists.
 */
async function createRendered(
  client: KubeClient,
  server: StoredMCPServer,
  owned: boolean,
): Promise<void> {
  const create = (obj: KubeObject) => {
    const metadata = { ...obj.metadata };
    if (!owned) delete metadata.ownerReferences;
    const type = obj.kind === SECRET.kind ? SECRET : RENDERED_TYPES[obj.kind as RenderedKind];
    return client.request({
      method: 'POST',
      path: collectionPath(type, obj.metadata.namespace),
      body: { ...obj, metadata },
    });
  };
  const objects = render(server, { image: BRIDGE_IMAGE }) as KubeObject[];
  const token = needsDiscoveryToken(server) ? [discoveryTokenSecret(server) as KubeObject] : [];
  const prerequisites = objects.filter((obj) => isPodPrerequisite(obj.kind));
  await Promise.all([...token, ...prerequisites].map(create));
  await Promise.all(objects.filter((obj) => !isPodPrerequisite(obj.kind)).map(create));
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
    // Counted while the POSTs still go out, so that a run cut short says how far it got.
    await Promise.all([
      pool(servers, concurrency, (server) => createRendered(client, server, false)),
      available.until(n, `${n} floor Deployments available`, patienceMs(n), progress),
    ]);
    return { seconds: (Date.now() - started) / 1000, rolloutMs: rolloutMs(available) };
  } finally {
    await available.stop();
  }
}

/** The status an operator writes once `server`'s Deployment is available. */
function readyStatus(
  server: StoredMCPServer,
  deployment: V1Deployment,
  now: Date,
): MCPServerStatus {
  const generation = server.metadata.generation ?? 0;
  const computed = computeStatus({
    generation,
    current: undefined,
    readiness: deploymentReadiness(deployment, []),
    endpoint: endpointOf(server),
    replicas: {
      replicas: deployment.status?.replicas ?? 0,
      readyReplicas: deployment.status?.readyReplicas ?? 0,
    },
    now,
  });
  const discovery = discoveryStatus({
    server,
    previous: undefined,
    result: undefined,
    baseline: NO_BASELINE,
    now,
  });
  return withDiscovery(computed, discovery);
}

/**
 * The least any operator adds to the floor, as seconds until every server of `layout` is Ready:
 * each MCPServer POSTed (as the operator phase does), its rendered objects POSTed the moment it
 * exists (no watch, queue or reconcile between), and one status write, the operator's own, once
 * its Deployment is available. What the operator phase takes beyond this is the operator's.
 */
export async function leastOperatorSeconds(
  client: KubeClient,
  layout: readonly Slot[],
  concurrency: number,
  spec: MCPServer['spec'],
  progress: (ready: number) => void = () => {},
): Promise<number> {
  const n = layout.reduce((sum, slot) => sum + slot.count, 0);
  const namespaces = layout.map((slot) => slot.namespace);
  const created = new Map<string, StoredMCPServer>();
  const writes: Promise<unknown>[] = [];
  const markReady = (deployment: KubeObject & V1Deployment) => {
    const server = created.get(keyOf(deployment));
    if (server === undefined) return;
    created.delete(keyOf(deployment));
    writes.push(
      client.request(statusWrite(server.metadata, readyStatus(server, deployment, new Date()))),
    );
  };
  const ready = await WatchedCount.start(client, MCP_SERVER, namespaces, isReady);
  const available = await WatchedCount.start(
    client,
    DEPLOYMENT,
    namespaces,
    isAvailable,
    markReady,
  );
  try {
    const started = Date.now();
    await Promise.all([
      pool(placements(layout), concurrency, async (placement) => {
        const server = await createServer(client, placement, spec);
        created.set(keyOf(server), server);
        await createRendered(client, server, true);
      }),
      ready.until(n, `${n} servers Ready (least operator)`, patienceMs(n), progress),
    ]);
    await Promise.all(writes);
    return (Date.now() - started) / 1000;
  } finally {
    await Promise.all([ready.stop(), available.stop()]);
  }
}
