/**
 * Discovery through the whole operator on the real control plane: N `url` MCPServers, each a
 * light real MCP server (bench/discovery-servers.ts; half 2026-07-28, half 2025-11-25), the
 * operator as its own process with default flags, one per N. Three rounds:
 * - first: create to every server Discovered (status and snapshot ConfigMaps written);
 * - no change: every server asked to run again (the mcp-operator.dev/discover annotation);
 *   goal: zero API writes;
 * - 10% drift: every tenth server changes a tool description, then every server runs again;
 *   goal: writes for those servers only.
 * Per round its time, the operator's CPU seconds and its API writes; per N the operator's peak
 * RSS, so that its growth with N (and with --tools, the tools per server) shows.
 *
 *   node bench/discovery-operator.ts [--tools=100] [--processes=4] [N ...]   (default N: 1000)
 *
 * With KUBECONFIG set it uses that cluster; otherwise it starts the local control plane of
 * test/cluster.
 */
import { loadavg } from 'node:os';
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
  peakRssMb,
  pool,
  rssMb,
  quiet,
  removeNamespace,
  startFixture,
  startOperatorProcess,
  stopFixtures,
  waitUntil,
  type RunningOperator,
} from './harness.ts';

const args = process.argv.slice(2);
const option = (name: string) =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const tools = option('tools') === undefined ? undefined : Number(option('tools'));
const processes = Number(option('processes') ?? 4);
const sizes = args.filter((a) => !a.startsWith('--')).map(Number);
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
  name: string;
  seconds: number;
  cpu: number;
  writes: number;
}

interface Result {
  n: number;
  rounds: Round[];
  peakRssMb: number;
  /** After the last round, quiet. */
  rssMb: number;
}

/** Every server runs discovery again (a new value of the annotation); resolves when all ran. */
async function rediscover(
  client: KubeClient,
  namespace: string,
  operator: RunningOperator,
  names: string[],
  value: string,
): Promise<void> {
  const before = await counters(operator.url);
  await pool(names, CLIENT_CONCURRENCY, (name) =>
    client.request({
      method: 'PATCH',
      patchType: 'merge',
      path: objectPath(MCP_SERVER, namespace, name),
      body: { metadata: { annotations: { [DISCOVER_ANNOTATION]: value } } },
    }),
  );
  await waitUntil(
    `${names.length} more discovery runs`,
    async () => (await counters(operator.url)).discoveries >= before.discoveries + names.length,
    1_200_000,
  );
}

/** Times `work`, with the operator's CPU seconds and the API writes until it is quiet again. */
async function round(
  name: string,
  operator: RunningOperator,
  work: () => Promise<void>,
): Promise<Round> {
  const cpu = await cpuSeconds(operator.pid);
  const before = await counters(operator.url);
  const started = Date.now();
  await work();
  const seconds = (Date.now() - started) / 1000;
  const settled = await quiet(operator.url);
  return {
    name,
    seconds,
    cpu: (await cpuSeconds(operator.pid)) - cpu,
    writes: settled.writes - before.writes,
  };
}

async function run(
  client: KubeClient,
  kubeconfig: string,
  n: number,
  urlOf: (i: number) => string,
  drift: () => Promise<void>,
): Promise<Result> {
  const namespace = await createNamespace(client, `bench-discovery-${n}`);
  const operator = await startOperatorProcess(kubeconfig, namespace, []);
  try {
    let names: string[] = [];
    const first = await round('first', operator, async () => {
      names = await createServers(client, namespace, n, CLIENT_CONCURRENCY, (i) => ({
        url: urlOf(i),
      }));
      await waitUntil(
        `${n} servers Discovered`,
        async () => (await discoveredCount(client, namespace)) === n,
        1_200_000,
      );
    });
    const same = await round('no change', operator, () =>
      rediscover(client, namespace, operator, names, 'again'),
    );
    const drifted = await round('10% drift', operator, async () => {
      await drift();
      await rediscover(client, namespace, operator, names, 'drift');
    });
    return {
      n,
      rounds: [first, same, drifted],
      peakRssMb: await peakRssMb(operator.pid),
      rssMb: await rssMb(operator.pid),
    };
  } finally {
    await operator.stop();
    await removeNamespace(client, namespace);
  }
}

const cluster = await benchCluster();
const fixtures = await Promise.all(
  Array.from({ length: processes }, (_, i) =>
    startFixture(i % 2 === 0 ? 'modern' : 'legacy', { tools }),
  ),
);
const urlOf = (i: number) => `http://127.0.0.1:${fixtures[i % processes]!.port}/s/${i}/mcp`;
const drift = async () => {
  await Promise.all(
    fixtures.map(({ port }) => fetch(`http://127.0.0.1:${port}/drift`, { method: 'POST' })),
  );
};
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(
  `discovery of url servers through the operator, ${tools ?? '10-19'} tools each, concurrency ${SCHEDULER_DEFAULTS.concurrency}, ${processes} fixture processes, Node ${process.version}; load average ${load()}`,
);
console.log(
  '    N  round        time (s)  servers/s  operator CPU (s)  API writes  writes/server  peak RSS (MiB)  RSS after (MiB)',
);
try {
  for (const n of sizes.length > 0 ? sizes : [1000]) {
    // Printed as each N ends: a later, bigger N may not finish on a loaded machine.
    print(await run(cluster.client, cluster.kubeconfig, n, urlOf, drift));
  }
  console.log(`load average ${load()}`);
} finally {
  await stopFixtures(fixtures);
  await cluster.stop();
}

function print(r: Result): void {
  for (const x of r.rounds) {
    console.log(
      [
        String(r.n).padStart(5),
        x.name.padEnd(11),
        x.seconds.toFixed(1).padStart(9),
        (r.n / x.seconds).toFixed(0).padStart(10),
        x.cpu.toFixed(1).padStart(17),
        String(x.writes).padStart(11),
        (x.writes / r.n).toFixed(2).padStart(14),
        r.peakRssMb.toFixed(0).padStart(15),
        r.rssMb.toFixed(0).padStart(16),
      ].join(' '),
    );
  }
}
