/**
 * What each kind of request the operator makes costs the control plane, per request, on the real
 * control plane: the CPU milliseconds of the API server, etcd and kube-controller-manager (with
 * what the write sets off there), for
 * - the objects `render()` returns, POSTed as bench/floor.ts does, against applied with
 *   server-side apply as the operator does: first (the create) and again unchanged;
 * - what only an operator adds: the MCPServer itself (the user's create), the discovery token
 *   Secret, an Event, and its status, written each way the API offers and against copies of the
 *   CRD with less validation (bench/status-writes.ts).
 * It splits bench:controller's gap to its floor into what the custom resource costs any operator
 * and what the operator's choice of requests costs.
 *
 * Deployments are created paused: a rollout is the floor's work, not its request's. Each
 * measurement waits until the control plane is idle again, so what a write sets off in the
 * background is counted with it, and the rounds repeat so the spread shows.
 *
 *   node bench/api-cost.ts [--rounds=2] [N=400]
 *
 * With KUBECONFIG set it uses that cluster (other load there counts in); otherwise it starts the
 * local control plane of test/cluster.
 */
import { loadavg } from 'node:os';
import { API_VERSION } from '../src/api/v1alpha1/mcpserver.ts';
import { KIND } from '../src/api/names.ts';
import { MCP_SERVER, type StoredMCPServer } from '../src/api/v1alpha1/stored.ts';
import { RENDERED_TYPES, type RenderedKind } from '../src/controller/caches.ts';
import { discoveryTokenSecret } from '../src/controller/discovery-token.ts';
import { render } from '../src/controller/render/render.ts';
import type { KubeClient } from '../src/kube/client.ts';
import {
  EVENT,
  SECRET,
  collectionPath,
  objectPath,
  type KubeObject,
} from '../src/kube/resources.ts';
import {
  DEPLOYED_SPEC,
  benchCluster,
  cpuByName,
  createNamespace,
  pool,
  removeNamespace,
  sleep,
} from './harness.ts';
import {
  crdVariantRequests,
  installCrdVariants,
  removeCrdVariants,
  statusWriteRequests,
  type Measured,
} from './status-writes.ts';

const CONCURRENCY = 32;
/** The control plane counts as idle after two seconds in a row under this much CPU. */
const IDLE_CPU_SECONDS_PER_SECOND = 0.08;
const SHOWN = ['kube-apiserver', 'etcd', 'kube-controller-manager'];

type Cluster = Awaited<ReturnType<typeof benchCluster>>;
type Request = Parameters<KubeClient['request']>[0];

const total = (cpu: Record<string, number>) => Object.values(cpu).reduce((a, b) => a + b, 0);

async function untilIdle(cluster: Cluster): Promise<void> {
  let last = total(await cpuByName(cluster.components));
  for (let calm = 0; calm < 2;) {
    await sleep(1000);
    const now = total(await cpuByName(cluster.components));
    calm = now - last < IDLE_CPU_SECONDS_PER_SECOND ? calm + 1 : 0;
    last = now;
  }
}

/** Milliseconds of CPU per request, by process, for `n` requests made `CONCURRENCY` at a time. */
async function costOf(
  cluster: Cluster,
  n: number,
  [, requestOf, prepare]: Measured,
): Promise<Record<string, number>> {
  await prepare?.();
  await untilIdle(cluster);
  const before = await cpuByName(cluster.components);
  const indexes = Array.from({ length: n }, (_, i) => i);
  await pool(indexes, CONCURRENCY, (i) => cluster.client.request(requestOf(i)));
  await untilIdle(cluster);
  const after = await cpuByName(cluster.components);
  return Object.fromEntries(
    Object.entries(after).map(([name, seconds]) => [
      name,
      ((seconds - (before[name] ?? 0)) / n) * 1000,
    ]),
  );
}

/** An object render() returns; only a Deployment's spec is touched here. */
type Rendered = KubeObject & { spec?: Record<string, unknown> };

/**
 * The objects render() returns for `server` under `name`; without owners (as the floor POSTs
 * them) unless `owned`, when `server` must exist (the garbage collector deletes an object
 * whose owner does not).
 */
function rendered(server: StoredMCPServer, name: string, owned = false): Rendered[] {
  const named = { ...server, metadata: { ...server.metadata, name } };
  return (render(named, { image: 'mcp-operator:latest' }) as Rendered[]).map((obj) => {
    const metadata = { ...obj.metadata };
    if (!owned) delete metadata.ownerReferences;
    return obj.kind === 'Deployment'
      ? { ...obj, metadata, spec: { ...obj.spec, paused: true } }
      : { ...obj, metadata };
  });
}

const apply = (path: string, body: unknown): Request => ({
  method: 'PATCH',
  patchType: 'apply',
  path,
  query: { fieldManager: 'mcp-operator', force: true },
  body,
});

/** The requests the floor makes, and the same objects applied as the operator does. */
function renderedRequests(namespace: string, server: StoredMCPServer, tag: string): Measured[] {
  return kindsOf(server).flatMap((kind): Measured[] => {
    const objectOf = (name: string) => rendered(server, name).find((obj) => obj.kind === kind)!;
    const applied = (i: number) => {
      const obj = objectOf(`a${tag}-${i}`);
      return apply(objectPath(RENDERED_TYPES[kind], namespace, obj.metadata.name!), obj);
    };
    return [
      [
        `${kind}: POST`,
        (i) => ({
          method: 'POST',
          path: collectionPath(RENDERED_TYPES[kind], namespace),
          body: objectOf(`p${tag}-${i}`),
        }),
      ],
      [`${kind}: apply, create`, applied],
      [`${kind}: apply, unchanged`, applied],
    ];
  });
}

const kindsOf = (server: StoredMCPServer) =>
  [...new Set(rendered(server, 'x').map((obj) => obj.kind))] as RenderedKind[];

const serverName = (tag: string, i: number) => `m${tag}-${i}`;

/** What only an operator adds: the MCPServer itself, its status, its token Secret, an Event. */
function serverRequests(namespace: string, server: StoredMCPServer, tag: string): Measured[] {
  const name = (i: number) => serverName(tag, i);
  return [
    [
      'MCPServer: POST (the user)',
      (i) => ({
        method: 'POST',
        path: collectionPath(MCP_SERVER, namespace),
        body: {
          apiVersion: API_VERSION,
          kind: KIND,
          metadata: { name: name(i) },
          spec: DEPLOYED_SPEC,
        },
      }),
    ],
    [
      'Secret (discovery token): POST',
      (i) => {
        const secret = discoveryTokenSecret({
          ...server,
          metadata: { ...server.metadata, name: `s${tag}-${i}` },
        });
        const metadata: Record<string, unknown> = { ...secret.metadata };
        delete metadata.ownerReferences;
        return {
          method: 'POST',
          path: collectionPath(SECRET, namespace),
          body: { ...secret, metadata },
        };
      },
    ],
    [
      'Event: POST',
      (i) => ({
        method: 'POST',
        path: collectionPath(EVENT, namespace),
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: `e${tag}-${i}`, namespace },
          involvedObject: { apiVersion: API_VERSION, kind: KIND, name: name(i), namespace },
          reason: 'Applied',
          message: 'Applied ServiceAccount, Service, Deployment.',
          type: 'Normal',
          source: { component: 'mcp-operator' },
        },
      }),
    ],
  ];
}

/**
 * The rendered objects applied with their owner reference to the MCPServers of the round, as
 * the operator applies them: what ownership costs (admission of blockOwnerDeletion, the
 * garbage collector's graph).
 */
function ownedRequests(
  namespace: string,
  owners: Map<string, StoredMCPServer>,
  tag: string,
): Measured[] {
  const first = owners.values().next().value!;
  return kindsOf(first).map((kind): Measured => [
    `${kind}: apply, create, owned`,
    (i) => {
      const owner = owners.get(serverName(tag, i))!;
      const obj = rendered(owner, owner.metadata.name, true).find((o) => o.kind === kind)!;
      return apply(objectPath(RENDERED_TYPES[kind], namespace, obj.metadata.name!), obj);
    },
  ]);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 2);
  const n = Number(args.find((a) => !a.startsWith('--')) ?? 400);
  const cluster = await benchCluster();
  const namespace = await createNamespace(cluster.client, 'api-cost');
  try {
    await installCrdVariants(cluster.client);
    const server = await cluster.client.request<StoredMCPServer>({
      method: 'POST',
      path: collectionPath(MCP_SERVER, namespace),
      query: { dryRun: 'All' },
      body: { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'x' }, spec: DEPLOYED_SPEC },
    });
    console.log(`${n} requests of each kind, ${CONCURRENCY} at a time; CPU ms per request`);
    console.log(
      `${'request'.padEnd(52)}round  ${SHOWN.map((name) => name.padStart(24)).join('')}     load`,
    );
    const print = (label: string, round: number, cost: Record<string, number>) => {
      const cells = SHOWN.map((name) => (cost[name] ?? 0).toFixed(2).padStart(24)).join('');
      console.log(
        `${label.padEnd(52)}${String(round).padStart(5)}  ${cells}  ${loadavg()[0]!.toFixed(1).padStart(7)}`,
      );
    };
    const measure = async (round: number, measured: Measured[]) => {
      for (const entry of measured) print(entry[0], round, await costOf(cluster, n, entry));
    };
    for (let round = 1; round <= rounds; round++) {
      const tag = String(round);
      await measure(round, renderedRequests(namespace, server, tag));
      await measure(round, serverRequests(namespace, server, tag));
      await measure(
        round,
        statusWriteRequests(cluster.client, namespace, n, tag, (i) => serverName(tag, i)),
      );
      await measure(round, crdVariantRequests(cluster.client, namespace, tag));
      const owners = await cluster.client.request<{ items: StoredMCPServer[] }>({
        method: 'GET',
        path: collectionPath(MCP_SERVER, namespace),
      });
      const ofRound = new Map(
        owners.items
          .filter((s) => s.metadata.name.startsWith(`m${tag}-`))
          .map((s) => [s.metadata.name, s]),
      );
      await measure(round, ownedRequests(namespace, ofRound, tag));
    }
  } finally {
    await removeNamespace(cluster.client, namespace).catch(() => {});
    await removeCrdVariants(cluster.client).catch(() => {});
    await cluster.stop();
  }
}

await main();
