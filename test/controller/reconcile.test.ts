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

async function reconcilerFor(spec: MCPServerSpec, transientGraceMs?: number) {
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
    ...(transientGraceMs === undefined ? {} : { transientGraceMs }),
  });
  return { client, caches, reconciler };
}

describe('Reconciler', () => {
  it('writes the objects, then status once the rollout ends; a pass over the result writes nothing', async () => {
    const { client, caches, reconciler } = await reconcilerFor({
      image: 'node:24-slim',
      transport: 'stdio',
      command: ['npx', '-y', '@modelcontextprotocol/server-everything'],
      discovery: { enabled: false },
    });
    const status = `PATCH ${collectionPath(MCP_SERVER, NAMESPACE)}/everything/status`;
    const writesSince = (start: number) =>
      client.requests.slice(start).filter((request) => WRITES.test(request));

    const first = await reconciler.reconcile(KEY);
    expect(writesSince(0)).toEqual(
      expect.arrayContaining([
        `PATCH ${collectionPath(RENDERED_TYPES.Deployment, NAMESPACE)}/everything`,
        `PATCH ${collectionPath(RENDERED_TYPES.Service, NAMESPACE)}/everything`,
      ]),
    );
    // A new server's first word, "rolling out", waits a while: the rollout may end first.
    expect(writesSince(0)).not.toContain(status);
    expect(first?.requeueAfterMs).toBeGreaterThan(0);
    expect(first?.requeueAfterMs).toBeLessThanOrEqual(5_000);

    // The Deployment controller's word that the rollout is done, through the watch.
    const deployments = collectionPath(RENDERED_TYPES.Deployment, NAMESPACE);
    const deployment = client.objects.get(deployments)!.get('everything')!;
    client.update(deployments, {
      ...deployment,
      status: {
        observedGeneration: deployment.metadata.generation ?? 1,
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
      },
    } as never);
    await waitFor('the cache to hold the finished rollout', () =>
      (caches.rendered.Deployment.store.get(KEY) as { status?: { availableReplicas?: number } })
        ?.status?.availableReplicas === 1
        ? true
        : undefined,
    );
    const before = client.requests.length;
    await reconciler.reconcile(KEY);
    expect(writesSince(before)).toEqual([status]);
    await waitFor('the cache to hold the status', () =>
      caches.servers.store.get(KEY)?.status?.conditions?.[0]?.status === 'True' ? true : undefined,
    );

    const after = client.requests.length;
    const last = await reconciler.reconcile(KEY);
    expect(writesSince(after)).toEqual([]);
    expect(last).toBeUndefined();
  });

  it('renders again for a changed spec, and for a changed Secret that the pods read at start', async () => {
    const secrets = collectionPath(SECRET, NAMESPACE);
    const servers = collectionPath(MCP_SERVER, NAMESPACE);
    const deployments = collectionPath(RENDERED_TYPES.Deployment, NAMESPACE);
    const { client, caches, reconciler } = await reconcilerFor({
      image: 'node:24-slim',
      transport: 'stdio',
      command: ['npx', '-y', '@modelcontextprotocol/server-everything'],
      env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } }],
      discovery: { enabled: false },
    });
    client.create(secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: NAMESPACE },
    });
    const cached = <T>(what: string, read: () => T | undefined) =>
      waitFor(what, read, { timeoutMs: 5_000 });
    const liveDeployment = () =>
      client.objects.get(deployments)!.get('everything') as unknown as {
        metadata: { resourceVersion: string };
        spec: {
          template: {
            metadata: { annotations: Record<string, string> };
            spec: { containers: { image: string }[] };
          };
        };
      };
    const inCache = async (resourceVersion: string) =>
      cached('the cache to hold the last Deployment', () =>
        caches.rendered.Deployment.store.get(KEY)?.metadata.resourceVersion === resourceVersion
          ? true
          : undefined,
      );
    await cached('the Secret in the cache', () =>
      caches.references.Secret.store.get(`${NAMESPACE}/creds`),
    );
    await reconciler.reconcile(KEY);
    const first = liveDeployment();
    await inCache(first.metadata.resourceVersion);
    await reconciler.reconcile(KEY);
    expect(liveDeployment().metadata.resourceVersion).toBe(first.metadata.resourceVersion);

    // A new value of the Secret: only its resourceVersion reaches the checksum.
    const secret = client.objects.get(secrets)!.get('creds')!;
    const rotated = client.update(secrets, { ...secret, data: { token: 'bmV3' } } as never);
    await cached('the new Secret in the cache', () =>
      caches.references.Secret.store.get(`${NAMESPACE}/creds`)?.metadata.resourceVersion ===
      rotated.metadata.resourceVersion
        ? true
        : undefined,
    );
    await reconciler.reconcile(KEY);
    const rolled = liveDeployment();
    const checksum = (d: typeof first) =>
      d.spec.template.metadata.annotations['mcp-operator.dev/config-checksum'];
    expect(checksum(rolled)).not.toBe(checksum(first));
    await inCache(rolled.metadata.resourceVersion);

    // A new image with the same generation: what render reads is the spec itself.
    const server = client.objects.get(servers)!.get('everything')!;
    const spec = (server as unknown as { spec: MCPServerSpec }).spec;
    client.update(servers, { ...server, spec: { ...spec, image: 'node:24' } } as never);
    await cached('the new spec in the cache', () =>
      caches.servers.store.get(KEY)?.spec.image === 'node:24' ? true : undefined,
    );
    await reconciler.reconcile(KEY);
    expect(liveDeployment().spec.template.spec.containers.map((c) => c.image)).toContain('node:24');
  });

  describe('a failed apply', () => {
    const spec: MCPServerSpec = {
      image: 'node:24-slim',
      transport: 'stdio',
      command: ['npx', '-y', '@modelcontextprotocol/server-everything'],
      discovery: { enabled: false },
    };
    const applyDeployment = `PATCH ${collectionPath(RENDERED_TYPES.Deployment, NAMESPACE)}/everything`;
    const statusWrite = `PATCH ${collectionPath(MCP_SERVER, NAMESPACE)}/everything/status`;
    const eventPost = `POST ${collectionPath(EVENT, NAMESPACE)}`;
    const readyOf = (client: FakeClient) =>
      (
        client.objects.get(collectionPath(MCP_SERVER, NAMESPACE))!.get('everything') as {
          status?: { conditions?: { type: string; reason: string; message: string }[] };
        }
      ).status?.conditions?.find((c) => c.type === 'Ready');

    // The in-memory client answers as a loaded API server would: a real one cannot be made to
    // time out on one request at will.
    it('retries a timeout quietly: no ApplyFailed status or Event, and the retry applies', async () => {
      const { client, reconciler } = await reconcilerFor(spec);
      client.failNext(applyDeployment, 1, 504, 'Timeout');
      await expect(reconciler.reconcile(KEY)).rejects.toThrow(/Timeout/);
      expect(client.requests).not.toContain(statusWrite);
      expect(client.requests).not.toContain(eventPost);

      await reconciler.reconcile(KEY);
      expect(client.requests.filter((r) => r === applyDeployment)).toHaveLength(2);
      expect(readyOf(client)?.reason).not.toBe('ApplyFailed');
    });

    it('tells a refused object at once, naming it', async () => {
      const { client, reconciler } = await reconcilerFor(spec);
      client.failNext(applyDeployment, 1, 422, 'Invalid');
      await expect(reconciler.reconcile(KEY)).rejects.toThrow(/Invalid/);
      await waitFor('the ApplyFailed Event', () =>
        client.requests.includes(eventPost) ? true : undefined,
      );
      expect(readyOf(client)?.reason).toBe('ApplyFailed');
      expect(readyOf(client)?.message).toContain('Deployment/everything');
    });

    it('tells a timeout that outlasts the grace period', async () => {
      const { client, reconciler } = await reconcilerFor(spec, 0);
      client.failNext(applyDeployment, 1, 429, 'TooManyRequests');
      await expect(reconciler.reconcile(KEY)).rejects.toThrow(/TooManyRequests/);
      expect(readyOf(client)).toMatchObject({ reason: 'ApplyFailed' });
    });
  });
});
