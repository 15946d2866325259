/**
 * Leader hand-over under load, on the real control plane: two operator processes with leader
 * election (default Lease timings: 15 s duration), N MCPServers (default 1000) created 32 at a
 * time. Twice in one run:
 * - plain: time until every server is Ready;
 * - hand-over: once a third of them are Ready, the leader is killed (SIGKILL: it cannot
 *   release the Lease); time until the standby leads, and until every server is Ready.
 * Then, once the new leader is quiet, every server's status is checked against its Deployment
 * (Ready, observed generation, replica counts): a stale one is counted. Each run also tells how
 * many times a replica became leader (from their logs): more than once in the plain run means a
 * leader lost its Lease on its own, under the load of the run.
 *
 *   node bench/leader-handover.ts [N=1000]
 *
 * With KUBECONFIG set it uses that cluster; otherwise it starts the local control plane of
 * test/cluster.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import type { V1Deployment } from '@kubernetes/client-node';
import type { MCPServer } from '../src/api/v1alpha1/mcpserver.ts';
import { MCP_SERVER } from '../src/api/v1alpha1/stored.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { DEPLOYMENT, collectionPath } from '../src/kube/resources.ts';
import {
  DEPLOYED_SPEC,
  benchCluster,
  createNamespace,
  createServers,
  isReady,
  patienceMs,
  quiet,
  removeNamespace,
  sleep,
  startOperatorProcess,
  waitUntil,
  WatchedCount,
  type RunningOperator,
} from './harness.ts';

const n = Number(process.argv[2] ?? 1000);
const CREATE_CONCURRENCY = 32;
/** The controller's default lease duration and retry period (client-go's). */
const LEASE_SECONDS = 15;
const RETRY_SECONDS = 2;

/** False too for a replica that has exited (it lost its Lease, or was killed). */
async function isLeader(operator: RunningOperator): Promise<boolean> {
  const text = await fetch(`${operator.url}/metrics`).then(
    (response) => response.text(),
    () => '',
  );
  return /^mcp_operator_leader 1$/m.test(text);
}

/** Times any of `replicas` became leader, from their logs. */
async function leaderships(replicas: RunningOperator[]): Promise<number> {
  const logs = await Promise.all(replicas.map((r) => readFile(r.logFile, 'utf8')));
  return logs.reduce((total, log) => total + log.split('"msg":"became leader"').length - 1, 0);
}

/** Servers whose status disagrees with their Deployment, or is not Ready for their spec. */
async function staleCount(client: KubeClient, namespace: string): Promise<number> {
  const [servers, deployments] = await Promise.all([
    client.request<{ items: MCPServer[] }>({
      method: 'GET',
      path: collectionPath(MCP_SERVER, namespace),
    }),
    client.request<{ items: V1Deployment[] }>({
      method: 'GET',
      path: collectionPath(DEPLOYMENT, namespace),
    }),
  ]);
  const byName = new Map(deployments.items.map((d) => [d.metadata?.name, d]));
  return servers.items.filter((s) => {
    const d = byName.get(s.metadata.name);
    const ready = s.status?.conditions?.find((c) => c.type === 'Ready');
    return (
      d === undefined ||
      ready?.status !== 'True' ||
      ready.observedGeneration !== s.metadata.generation ||
      s.status?.observedGeneration !== s.metadata.generation ||
      s.status?.replicas !== (d.status?.replicas ?? 0) ||
      s.status?.readyReplicas !== (d.status?.readyReplicas ?? 0)
    );
  }).length;
}

interface Run {
  readySeconds: number;
  /** Times a replica became leader. */
  leaderships: number;
  /** From the kill to the standby leading. */
  takeoverSeconds?: number;
  stale: number;
}

async function run(client: KubeClient, kubeconfig: string, kill: boolean): Promise<Run> {
  const namespace = await createNamespace(client, `bench-leader-${n}`);
  const flags = ['--leader-elect', `--leader-election-namespace=${namespace}`];
  const replicas = [
    await startOperatorProcess(kubeconfig, namespace, flags, 'operator-a'),
    await startOperatorProcess(kubeconfig, namespace, flags, 'operator-b'),
  ];
  try {
    await waitUntil(
      'a leader',
      async () => (await Promise.all(replicas.map(isLeader))).some(Boolean),
      60_000,
    );
    const leader = (await isLeader(replicas[0]!)) ? 0 : 1;
    const ready = await WatchedCount.start(client, MCP_SERVER, namespace, isReady);
    const started = Date.now();
    await createServers(client, namespace, n, CREATE_CONCURRENCY, () => DEPLOYED_SPEC);
    let takeoverSeconds: number | undefined;
    if (kill) {
      await ready.until(Math.ceil(n / 3), `a third of ${n} servers Ready`, patienceMs(n));
      const standby = replicas[1 - leader]!;
      const killed = Date.now();
      await replicas[leader]!.crash();
      while (!(await isLeader(standby))) await sleep(200);
      takeoverSeconds = (Date.now() - killed) / 1000;
    }
    await ready.until(n, `${n} servers Ready`, patienceMs(n));
    const readySeconds = (Date.now() - started) / 1000;
    await ready.stop();
    let current: RunningOperator | undefined;
    await waitUntil(
      'a leader once all are Ready',
      async () => {
        const leading = await Promise.all(replicas.map(isLeader));
        current = replicas[leading.indexOf(true)];
        return current !== undefined;
      },
      60_000,
    );
    await quiet(current!.url);
    return {
      readySeconds,
      leaderships: await leaderships(replicas),
      ...(takeoverSeconds === undefined ? {} : { takeoverSeconds }),
      stale: await staleCount(client, namespace),
    };
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await removeNamespace(client, namespace);
  }
}

const cluster = await benchCluster();
try {
  process.stderr.write(`N=${n}: plain…\n`);
  const plain = await run(cluster.client, cluster.kubeconfig, false);
  process.stderr.write(`N=${n}: plain ${plain.readySeconds.toFixed(1)} s; hand-over…\n`);
  const handover = await run(cluster.client, cluster.kubeconfig, true);
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(`leader hand-over at ${n} servers, lease ${LEASE_SECONDS} s; load average ${load}`);
  const takeover = handover.takeoverSeconds ?? Number.NaN;
  const growth = handover.readySeconds - plain.readySeconds;
  console.log(
    `plain: all Ready ${plain.readySeconds.toFixed(1)} s, stale ${plain.stale}; ` +
      `leader killed: standby led after ${takeover.toFixed(1)} s, ` +
      `all Ready ${handover.readySeconds.toFixed(1)} s ` +
      `(+${growth.toFixed(1)} s), stale ${handover.stale}; ` +
      `became leader: plain ${plain.leaderships} times, hand-over ${handover.leaderships} times`,
  );
  // The standby may take the Lease only once it has seen no renewal for a lease duration,
  // which it checks every retry period.
  const verdict = (ok: boolean) => (ok ? 'yes' : 'NO');
  console.log(
    `took over within the lease and one retry period (${LEASE_SECONDS + RETRY_SECONDS} s): ${verdict(takeover <= LEASE_SECONDS + RETRY_SECONDS)}; ` +
      `all-Ready grew by less than the lease: ${verdict(growth < LEASE_SECONDS)}; ` +
      `no stale status: ${verdict(plain.stale === 0 && handover.stale === 0)}; ` +
      `no leader lost its Lease on its own: ${verdict(plain.leaderships === 1 && handover.leaderships === 2)}`,
  );
} finally {
  await cluster.stop();
}
