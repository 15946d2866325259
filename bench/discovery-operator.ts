/**
 * Discovery through the whole operator on the real control plane: N `url` MCPServers, each a
 * light real MCP server (bench/discovery-servers.ts; half 2026-07-28, half 2025-11-25), the
 * operator as its own process with default flags. Measures the first round (create to every
 * server Discovered, status and snapshot ConfigMaps written), then a round that finds nothing
 * new (every server asked to run again with the mcp-operator.dev/discover annotation): its
 * time, the operator's CPU time in each, its peak RSS, and the API writes the operator made in
 * the second round (goal: zero).
 *
 *   node bench/discovery-operator.ts [N=1000] [fixture processes=4]
 *
 * With KUBECONFIG set it uses that cluster; otherwise it starts the local control plane of
 * test/cluster.
 */
import { DISCOVER_ANNOTATION } from '../src/api/names.ts';
import type { MCPServer } from '../src/api/v1alpha1/mcpserver.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { collectionPath, objectPath } from '../src/kube/resources.ts';
import { MCP_SERVER } from '../src/api/v1alpha1/stored.ts';
import { SCHEDULER_DEFAULTS } from '../src/discovery/scheduler.ts';
import {
  benchCluster,
  counters,
  cpuSeconds,
  createNamespace,
  createServers,
  deleteNamespace,
  peakRssMb,
  pool,
  quiet,
  startFixture,
  startOperatorProcess,
  stopFixtures,
  waitUntil,
} from './harness.ts';

const n = Number(process.argv[2] ?? 1000);
const processes = Number(process.argv[3] ?? 4);
const CLIENT_CONCURRENCY = 32;

async function discoveredCount(client: KubeClient, namespace: string): Promise<number> {
  const list = await client.request<{ items: MCPServer[] }>({
    method: 'GET',
    path: collectionPath(MCP_SERVER, namespace),
  });
  return list.items.filter((s) =>
    s.status?.conditions?.some((c) => c.type === 'Discovered' && c.status === 'True'),
  ).length;
}

interface Round {
  seconds: number;
  cpu: number;
  writes: number;
}

function line(name: string, round: Round): string {
  return [
    name.padEnd(12),
    `${round.seconds.toFixed(1)} s`.padStart(9),
    `${(n / round.seconds).toFixed(0)} servers/s`.padStart(15),
    `operator CPU ${round.cpu.toFixed(1)} s`.padStart(20),
    `API writes ${round.writes} (${(round.writes / n).toFixed(2)}/server)`,
  ].join('  ');
}

const cluster = await benchCluster();
const fixtures = await Promise.all(
  Array.from({ length: processes }, (_, i) => startFixture(i % 2 === 0 ? 'modern' : 'legacy')),
);
const namespace = await createNamespace(cluster.client, 'bench-discovery');
const operator = await startOperatorProcess(cluster.kubeconfig, namespace, []);
const urlOf = (i: number) => `http://127.0.0.1:${fixtures[i % processes]!.port}/s/${i}/mcp`;
try {
  console.log(
    `discovery of ${n} url servers through the operator, concurrency ${SCHEDULER_DEFAULTS.concurrency}, ${processes} fixture processes, Node ${process.version}`,
  );
  const cpu0 = await cpuSeconds(operator.pid);
  const before = await counters(operator.url);
  const started = Date.now();
  const names = await createServers(cluster.client, namespace, n, CLIENT_CONCURRENCY, (i) => ({
    url: urlOf(i),
  }));
  await waitUntil(
    `${n} servers Discovered`,
    async () => (await discoveredCount(cluster.client, namespace)) === n,
    600_000,
  );
  const first: Round = {
    seconds: (Date.now() - started) / 1000,
    cpu: (await cpuSeconds(operator.pid)) - cpu0,
    writes: 0,
  };
  const settled = await quiet(operator.url);
  first.writes = settled.writes - before.writes;
  console.log(line('first round', first));

  const cpu1 = await cpuSeconds(operator.pid);
  const again = Date.now();
  await pool(names, CLIENT_CONCURRENCY, (name) =>
    cluster.client.request({
      method: 'PATCH',
      patchType: 'merge',
      path: objectPath(MCP_SERVER, namespace, name),
      body: { metadata: { annotations: { [DISCOVER_ANNOTATION]: 'again' } } },
    }),
  );
  await waitUntil(
    `${n} more discovery runs`,
    async () => (await counters(operator.url)).discoveries >= settled.discoveries + n,
    600_000,
  );
  const seconds = (Date.now() - again) / 1000;
  const done = await quiet(operator.url);
  console.log(
    line('no change', {
      seconds,
      cpu: (await cpuSeconds(operator.pid)) - cpu1,
      writes: done.writes - settled.writes,
    }),
  );
  console.log(`operator peak RSS ${(await peakRssMb(operator.pid)).toFixed(0)} MiB`);
} finally {
  await operator.stop();
  await deleteNamespace(cluster.client, namespace);
  await stopFixtures(fixtures);
  await cluster.stop();
}
