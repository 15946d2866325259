/**
 * Controller benchmark on the real control plane: for N MCPServers (default 100, 500, 1000),
 * how long until all are Ready, how many API requests the operator made per server to get
 * there, how many writes a steady-state resync makes (goal: zero), and the operator's peak
 * RSS. The operator runs as its own process (`node src/cli.ts controller`, default flags), one
 * per N, watching a fresh namespace.
 *
 *   node bench/controller.ts [--operator-flag=value ...] [N ...]
 *
 * With KUBECONFIG set it uses that cluster; otherwise it starts the local control plane of
 * test/cluster (kwok fake nodes make the pods Running and Ready). Prints a table.
 */
import type { MCPServer } from '../src/api/v1alpha1/mcpserver.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { collectionPath } from '../src/kube/resources.ts';
import { MCP_SERVER } from '../src/api/v1alpha1/stored.ts';
import {
  benchCluster,
  counters,
  createNamespace,
  createServers,
  deleteNamespace,
  peakRssMb,
  quiet,
  startOperatorProcess,
  waitUntil,
} from './harness.ts';

/** Short, so that the steady-state measurement sees a full resync of every server. */
const RESYNC = '20s';
const CREATE_CONCURRENCY = 32;

interface Result {
  n: number;
  readySeconds: number;
  requestsPerObject: number;
  writesPerObject: number;
  resyncPasses: number;
  resyncWrites: number;
  peakRssMb: number;
}

async function readyCount(client: KubeClient, namespace: string): Promise<number> {
  const list = await client.request<{ items: MCPServer[] }>({
    method: 'GET',
    path: collectionPath(MCP_SERVER, namespace),
  });
  return list.items.filter(
    (s) =>
      s.status?.observedGeneration === s.metadata.generation &&
      s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  ).length;
}

async function run(
  client: KubeClient,
  kubeconfig: string,
  n: number,
  flags: string[],
): Promise<Result> {
  const namespace = await createNamespace(client, `bench-${n}`);
  const operator = await startOperatorProcess(kubeconfig, namespace, [
    `--resync-period=${RESYNC}`,
    ...flags,
  ]);
  const { url } = operator;
  try {
    const before = await counters(url);
    const started = Date.now();
    // Discovery off: its schedule writes status on its own (and the fake pods answer
    // nothing); bench/discovery.ts measures it.
    await createServers(client, namespace, n, CREATE_CONCURRENCY, () => ({
      image: 'example.com/mcp/web:1',
      transport: 'streamable-http',
      port: 3000,
      discovery: { enabled: false },
    }));
    await waitUntil(
      `${n} servers Ready`,
      async () => (await readyCount(client, namespace)) === n,
      600_000,
    );
    const readySeconds = (Date.now() - started) / 1000;
    const converged = await counters(url);
    // Quiet first (trailing event bumps, last status writes), then through one full resync.
    const settled = await quiet(url);
    await waitUntil(
      'a full resync',
      async () => (await counters(url)).reconciles >= settled.reconciles + n,
      120_000,
    );
    const resynced = await counters(url);
    return {
      n,
      readySeconds,
      requestsPerObject: (converged.requests - before.requests) / n,
      writesPerObject: (converged.writes - before.writes) / n,
      resyncPasses: resynced.reconciles - settled.reconciles,
      resyncWrites: resynced.writes - settled.writes,
      peakRssMb: await peakRssMb(operator.pid),
    };
  } finally {
    await operator.stop();
    await deleteNamespace(client, namespace);
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flags = args.filter((a) => a.startsWith('--'));
  const sizes = args.filter((a) => !a.startsWith('--')).map(Number);
  const ns = sizes.length > 0 ? sizes : [100, 500, 1000];
  const cluster = await benchCluster();
  const results: Result[] = [];
  try {
    for (const n of ns) {
      process.stderr.write(`N=${n}…\n`);
      results.push(await run(cluster.client, cluster.kubeconfig, n, flags));
    }
  } finally {
    await cluster.stop();
  }
  console.log(
    '   N  all Ready (s)  requests/server  writes/server  resync passes  resync writes  peak RSS (MiB)',
  );
  for (const r of results) {
    console.log(
      [
        String(r.n).padStart(4),
        r.readySeconds.toFixed(1).padStart(14),
        r.requestsPerObject.toFixed(1).padStart(16),
        r.writesPerObject.toFixed(1).padStart(14),
        String(r.resyncPasses).padStart(14),
        String(r.resyncWrites).padStart(14),
        r.peakRssMb.toFixed(0).padStart(15),
      ].join(' '),
    );
  }
}

await main();
