/**
 * The reconciler over the in-memory KubeClient (test/support/fake-client.ts): what one pass
 * writes, and that a pass over a server whose objects and status are already what the pass
 * would make writes nothing at all. The cluster tests check the same against the real API
 * server through the operator's request counters; this one names every request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { API_VERSION, type MCPServerSpec } from '../../src/api/v1alpha1/mcpserver.ts';
import { MCP_SERVER } from '../../src/api/v1alpha1/stored.ts';
import { Caches, RENDERED_TYPES } from '../../src/controller/caches.ts';
import { EventRecorder } from '../../src/controller/event-recorder.ts';
import { PendingWrites } from '../../src/controller/pending.ts';
import { Reconciler } from '../../src/controller/reconcile.ts';
import { endpointOf } from '../../src/controller/render/render.ts';
import { snapshotWriter } from '../../src/controller/snapshot-writer.ts';
import { egressPolicy } from '../../src/discovery/egress.ts';
import { DiscoveryService } from '../../src/discovery/service.ts';
import {
  CONFIG_MAP,
  EVENT,
  POD,
  SECRET,
  collectionPath,
  objectKey,
} from '../../src/kube/resources.ts';
import { FakeClient } from '../support/fake-client.ts';
import { testLogger } from '../support/log.ts';
import { waitFor } from '../support/wait.ts';

const NAMESPACE = 'team-a';
const KEY = `${NAMESPACE}/everything`;
const WRITES = /^(POST|PUT|PATCH|DELETE) /;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function reconcilerFor(spec: MCPServerSpec) {
  const types = [MCP_SERVER, ...Object.values(RENDERED_TYPES), POD, SECRET, CONFIG_MAP, EVENT];
  const client = new FakeClient(...new Set(types.map((type) => collectionPath(type, NAMESPACE))));
  client.create(collectionPath(MCP_SERVER, NAMESPACE), {
    apiVersion: API_VERSION,
    kind: 'MCPServer',
    metadata: { name: 'everything', namespace: NAMESPACE, generation: 1 },
    spec,
  } as never);
  const log = testLogger();
  const caches = new Caches({ client, namespaces: [NAMESPACE], log, enqueue: () => undefined });
  caches.start();
  const discovery = new DiscoveryService({
    client,
    server: (key) => caches.servers.store.get(key),
    snapshots: snapshotWriter(client, (namespace, name) =>
      caches.references.ConfigMap.store.get(objectKey(namespace, name)),
    ),
    configMapVersion: () => undefined,
    secretVersion: () => undefined,
    enqueue: () => undefined,
    log,
    egress: egressPolicy({ inCluster: false, denied: [], allowed: [] }),
    endpoint: endpointOf,
  });
  stops.push(
    () => caches.stop(),
    () => discovery.stop(),
  );
  await caches.waitForSync();
  const reconciler = new Reconciler({
    client,
    caches,
    recorder: new EventRecorder({ client, component: 'mcp-operator', instance: 'test', log }),
    renderOptions: { image: 'ghcr.io/example/mcp-operator:1.2.3' },
    pending: new PendingWrites(10_000),
    discovery,
    log,
  });
  return { client, caches, reconciler };
}

describe('Reconciler', () => {
  it('writes the objects and status once; a second pass over the result writes nothing', async () => {
    const { client, caches, reconciler } = await reconcilerFor({
      image: 'node:24-slim',
      transport: 'stdio',
      command: ['npx', '-y', '@modelcontextprotocol/server-everything'],
      discovery: { enabled: false },
    });

    await reconciler.reconcile(KEY);
    const first = client.requests.filter((request) => WRITES.test(request));
    expect(first).toEqual(
      expect.arrayContaining([
        `PATCH ${collectionPath(RENDERED_TYPES.Deployment, NAMESPACE)}/everything`,
        `PATCH ${collectionPath(RENDERED_TYPES.Service, NAMESPACE)}/everything`,
        `PATCH ${collectionPath(MCP_SERVER, NAMESPACE)}/everything/status`,
      ]),
    );
    // The watches bring the pass's writes into the caches, as they do in the operator.
    await waitFor('the caches to hold the first pass', () =>
      caches.rendered.Deployment.store.size === 1 &&
      caches.servers.store.get(KEY)?.status?.conditions !== undefined
        ? true
        : undefined,
    );

    const before = client.requests.length;
    const second = await reconciler.reconcile(KEY);
    expect(client.requests.slice(before).filter((request) => WRITES.test(request))).toEqual([]);
    expect(second).toBeUndefined();
  });
});
