/**
 * Controller benchmark on the real control plane: for N MCPServers (default 100, 500, 1000),
 * how long until all are Ready against the cluster's own floor for the same objects in the same
 * run (bench/floor.ts: render's objects POSTed directly at the same concurrency; its namespace
 * is gone before the operator starts), how many API requests and status writes the operator
 * made per server to get there, how many writes a steady-state resync makes (goal: zero), and
 * the operator's peak RSS. The operator runs as its own process (`node src/cli.ts controller`,
 * default flags), one per N, watching a fresh namespace.
 *
 *   node bench/controller.ts [--operator-flag=value ...] [N ...]
 *
 * With KUBECONFIG set it uses that cluster; otherwise it starts the local control plane of
 * test/cluster (kwok fake nodes make the pods Running and Ready). Prints a table.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import type { KubeClient } from '../src/kube/client.ts';
import {
  benchCluster,
  DEPLOYED_SPEC,
  counters,
  createNamespace,
  createServers,
  deleteNamespace,
  peakRssMb,
  quiet,
  readyCount,
  removeNamespace,
  startOperatorProcess,
  waitUntil,
} from './harness.ts';
import { floorSeconds } from './floor.ts';

/** Short, so that the steady-state measurement sees a full resync of every server. */
const RESYNC = '20s';
const CREATE_CONCURRENCY = 32;

interface Result {
  n: number;
  floorSeconds: number;
  readySeconds: number;
  requestsPerObject: number;
  writesPerObject: number;
  statusWritesPerObject: number;
  byVerb: Record<string, number>;
  resyncPasses: number;
  resyncWrites: number;
  peakRssMb: number;
}

/** Status writes the operator logged (pino JSON, `status written`). */
async function statusWrites(logFile: string): Promise<number> {
  const text = await readFile(logFile, 'utf8');
  return text.split('\n').filter((line) => line.includes('"msg":"status written"')).length;
}

async function floor(client: KubeClient, n: number): Promise<number> {
  const namespace = await createNamespace(client, `floor-${n}`);
  try {
    return await floorSeconds(client, namespace, n, CREATE_CONCURRENCY, DEPLOYED_SPEC);
  } finally {
    await removeNamespace(client, namespace);
  }
}

async function run(
  client: KubeClient,
  kubeconfig: string,
  n: number,
  flags: string[],
): Promise<Result> {
  process.stderr.write(`N=${n}: floor…\n`);
  const floorTime = await floor(client, n);
  process.stderr.write(`N=${n}: floor ${floorTime.toFixed(1)} s; operator…\n`);
  const namespace = await createNamespace(client, `bench-${n}`);
  const operator = await startOperatorProcess(kubeconfig, namespace, [
    `--resync-period=${RESYNC}`,
    ...flags,
  ]);
  const { url } = operator;
  try {
    const before = await counters(url);
    const started = Date.now();
    await createServers(client, namespace, n, CREATE_CONCURRENCY, () => DEPLOYED_SPEC);
    await waitUntil(
      `${n} servers Ready`,
      async () => (await readyCount(client, namespace)) === n,
      1_200_000,
    );
    const readySeconds = (Date.now() - started) / 1000;
    const converged = await counters(url);
    const statusWritten = await statusWrites(operator.logFile);
    // Quiet first (trailing event bumps, last status writes), then through one full resync.
    const settled = await quiet(url);
    await waitUntil(
      'a full resync',
      async () => (await counters(url)).reconciles >= settled.reconciles + n,
      120_000,
    );
    const resynced = await counters(url);
    const byVerb = Object.fromEntries(
      Object.entries(converged.byVerb).map(([verb, count]) => [
        verb,
        (count - (before.byVerb[verb] ?? 0)) / n,
      ]),
    );
    return {
      n,
      floorSeconds: floorTime,
      readySeconds,
      requestsPerObject: (converged.requests - before.requests) / n,
      writesPerObject: (converged.writes - before.writes) / n,
      statusWritesPerObject: statusWritten / n,
      byVerb,
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
    for (const n of ns) results.push(await run(cluster.client, cluster.kubeconfig, n, flags));
  } finally {
    await cluster.stop();
  }
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(`operator flags: ${flags.join(' ') || '(defaults)'}; load average ${load}`);
  console.log(
    '    N  floor (s)  operator (s)  ratio  peak RSS (MiB)  requests/server  writes/server  status writes/server  resync passes  resync writes  requests/server by verb',
  );
  for (const r of results) {
    const verbs = Object.entries(r.byVerb)
      .filter(([, perServer]) => perServer > 0)
      .map(([verb, perServer]) => `${verb} ${perServer.toFixed(2)}`)
      .join(', ');
    console.log(
      [
        String(r.n).padStart(5),
        r.floorSeconds.toFixed(1).padStart(10),
        r.readySeconds.toFixed(1).padStart(13),
        (r.readySeconds / r.floorSeconds).toFixed(2).padStart(6),
        r.peakRssMb.toFixed(0).padStart(15),
        r.requestsPerObject.toFixed(2).padStart(16),
        r.writesPerObject.toFixed(2).padStart(14),
        r.statusWritesPerObject.toFixed(2).padStart(21),
        String(r.resyncPasses).padStart(14),
        String(r.resyncWrites).padStart(14),
        `  ${verbs}`,
      ].join(' '),
    );
  }
}

await main();
