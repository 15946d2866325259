/**
 * Discovery through the whole operator on the real control plane: N `url` MCPServers, each a
 * light real MCP server (bench/discovery-servers.ts; half 2026-07-28, half 2025-11-25), the
 * operator as its own process with default flags, one per N, run as its pod would: in a memory
 * cgroup of the chart's limit (bench/memory.ts), to which it fits its heap (src/heap-limit.ts);
 * each N ends with the OOM kills in that cgroup (none expected). Three rounds:
 * - first: create to every server Discovered (status and snapshot ConfigMaps written);
 * - no change: every server asked to run again (the mcp-operator.dev/discover annotation);
 *   goal: zero API writes;
 * - 10% drift: every tenth server changes a tool description, then every server runs again;
 *   goal: writes for those servers only.
 * Per round its time beside the bound the discovery concurrency and the servers' latency set
 * (runs × mean run time ÷ concurrency), the operator's CPU seconds, its API writes and its peak
 * RSS, with what that peak was made of (heap, young generation, external). Per N its RSS idle,
 * at its peak and after; between two N the growth per additional server.
 *
 *   node bench/discovery-operator.ts [--tools=100] [--processes=4] [--latency=<ms>]
 *     [--node-options=<flags> ...] [--env=<NAME=value ...> ...] [--cli=<entry point> ...]
 *     [--no-cgroup] [--heap-snapshot=<dir>] [N ...]   (default N: 1000)
 *
 * --latency delays each answer of the servers; --node-options adds Node flags to the
 * operator's (e.g. --max-semi-space-size=4, or --no-optimize-for-size to drop a flag of the
 * chart's); --env sets environment variables over the chart's (e.g. MALLOC_ARENA_MAX=1); --cli
 * runs another build of the operator (another checkout's dist/cli.js) instead of this one's.
 * Each may be given more than once: per N, each combination runs as its own
 * operator, one after the other against the same cluster and servers, so that flag sets and
 * builds compare in one run under the same load. --no-cgroup runs it without the memory limit;
 * --heap-snapshot=<dir> has it write a heap snapshot there after the rounds (with --no-cgroup:
 * writing one takes memory, and in the cgroup the kernel kills it for that).
 *
 * With KUBECONFIG set it uses that cluster; otherwise it starts the local control plane of
 * test/cluster.
 */
import { loadavg, tmpdir } from 'node:os';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
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
import {
  MemoryProbe,
  breakdown,
  chartMemoryLimit,
  memoryCgroup,
  resetPeakRss,
  type MemorySample,
} from './memory.ts';
import { stopStartedOnExit } from './processes.ts';
import { chartOperator, describeChartOperator } from './chart.ts';

const args = process.argv.slice(2);
const option = (name: string) =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const tools = option('tools') === undefined ? undefined : Number(option('tools'));
const processes = Number(option('processes') ?? 4);
const latencyMs = Number(option('latency') ?? 0);
const snapshotDir = option('heap-snapshot');
const optionValues = (name: string) =>
  args.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
const snapshotOptions =
  snapshotDir === undefined
    ? []
    : ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`];

/**
 * One way of running the operator: a build, the Node flags added to the chart's and the
 * environment variables set over the chart's.
 */
interface Variant {
  cli: string | undefined;
  nodeOptions: string[];
  env: Record<string, string>;
}

const flagSets = optionValues('node-options').map((flags) => flags.split(' ').filter(Boolean));
const envSets = optionValues('env').map((assignments) =>
  Object.fromEntries(
    assignments
      .split(' ')
      .filter(Boolean)
      .map((assignment) => {
        const match = /^([A-Za-z_]\w*)=(.*)$/.exec(assignment);
        if (match === null) throw new Error(`--env ${assignment}: expected NAME=value`);
        return [match[1]!, match[2]!];
      }),
  ),
);
const variants: Variant[] = (
  optionValues('cli').length > 0 ? optionValues('cli') : [undefined]
).flatMap((cli) =>
  (flagSets.length > 0 ? flagSets : [[]]).flatMap((flags) =>
    (envSets.length > 0 ? envSets : [{}]).map((env) => ({
      cli,
      nodeOptions: [...flags, ...snapshotOptions],
      env,
    })),
  ),
);
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
  /** Writes by `<verb> <resource>`. */
  byRequest: Record<string, number>;
  runs: number;
  /** Mean time of one discovery run, as the operator measured it. */
  runSeconds: number;
  peakRssMb: number;
  peak: MemorySample | undefined;
}

interface Result {
  n: number;
  variant: Variant;
  /** Caches synced, no server yet. */
  idleRssMb: number;
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

/**
 * Times `work`, with the operator's CPU seconds, its API writes until it is quiet again, and
 * its peak RSS meanwhile.
 */
async function round(
  name: string,
  operator: RunningOperator,
  probe: MemoryProbe,
  work: () => Promise<void>,
): Promise<Round> {
  await resetPeakRss(operator.pid);
  await probe.reset();
  const cpu = await cpuSeconds(operator.pid);
  const before = await counters(operator.url);
  const started = Date.now();
  await work();
  const seconds = (Date.now() - started) / 1000;
  const settled = await quiet(operator.url);
  const runs = settled.discoveries - before.discoveries;
  return {
    name,
    seconds,
    cpu: (await cpuSeconds(operator.pid)) - cpu,
    writes: settled.writes - before.writes,
    byRequest: Object.fromEntries(
      Object.entries(settled.byRequest)
        .filter(([request]) => request.split(' ')[0] !== 'GET')
        .map(([request, count]) => [request, count - (before.byRequest[request] ?? 0)]),
    ),
    runs,
    runSeconds: (settled.discoverySeconds - before.discoverySeconds) / Math.max(runs, 1),
    peakRssMb: await peakRssMb(operator.pid),
    peak: await probe.peak(),
  };
}

/** Has the operator write a heap snapshot (of what is live: V8 collects first) into `dir`. */
async function heapSnapshot(pid: number, dir: string): Promise<void> {
  const before = new Set(await readdir(dir));
  process.kill(pid, 'SIGUSR2');
  let size = -1;
  await waitUntil(
    'the heap snapshot',
    async () => {
      const file = (await readdir(dir)).find((name) => !before.has(name));
      if (file === undefined) return false;
      const now = (await stat(join(dir, file))).size;
      const done = now > 0 && now === size;
      size = now;
      if (done) console.log(`         heap snapshot: ${join(dir, file)}`);
      return done;
    },
    300_000,
  );
}

async function run(
  client: KubeClient,
  kubeconfig: string,
  n: number,
  urlOf: (i: number) => string,
  drift: () => Promise<void>,
  variant: Variant,
): Promise<Result> {
  const namespace = await createNamespace(client, `bench-discovery-${n}`);
  const probe = new MemoryProbe(join(tmpdir(), `${namespace}-memory.json`));
  const operator = await startOperatorProcess(kubeconfig, namespace, [], 'operator', {
    nodeArgs: [...variant.nodeOptions, ...probe.nodeArgs],
    env: variant.env,
    ...(variant.cli === undefined ? {} : { cli: variant.cli }),
    ...(cgroup === undefined ? {} : { launcher: cgroup.launcher }),
  });
  try {
    const idleRssMb = await rssMb(operator.pid);
    let names: string[] = [];
    const first = await round('first', operator, probe, async () => {
      names = await createServers(client, namespace, n, CLIENT_CONCURRENCY, (i) => ({
        url: urlOf(i),
      }));
      await waitUntil(
        `${n} servers Discovered`,
        async () => (await discoveredCount(client, namespace)) === n,
        1_200_000,
      );
    });
    const same = await round('no change', operator, probe, () =>
      rediscover(client, namespace, operator, names, 'again'),
    );
    const drifted = await round('10% drift', operator, probe, async () => {
      await drift();
      await rediscover(client, namespace, operator, names, 'drift');
    });
    const rounds = [first, same, drifted];
    if (snapshotDir !== undefined) await heapSnapshot(operator.pid, snapshotDir);
    return {
      n,
      variant,
      idleRssMb,
      rounds,
      peakRssMb: Math.max(...rounds.map((r) => r.peakRssMb)),
      rssMb: await rssMb(operator.pid),
    };
  } finally {
    await operator.stop();
    await removeNamespace(client, namespace);
  }
}

stopStartedOnExit();
const limit = chartMemoryLimit();
const cgroupOrWhy = args.includes('--no-cgroup')
  ? 'no memory cgroup (--no-cgroup)'
  : memoryCgroup(limit);
const cgroup = typeof cgroupOrWhy === 'string' ? undefined : cgroupOrWhy;
const chart = await chartOperator();
const cluster = await benchCluster();
const fixtures = await Promise.all(
  Array.from({ length: processes }, (_, i) =>
    startFixture(i % 2 === 0 ? 'modern' : 'legacy', { tools, latencyMs }),
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
  `discovery of url servers through the operator, ${tools ?? '10-19'} tools each, discovery concurrency ${SCHEDULER_DEFAULTS.concurrency}, ${processes} fixture processes, server latency ${latencyMs} ms per answer, Node ${process.version}; load average ${load()}`,
);
console.log(`operator: ${cgroup?.description ?? `WARNING: ${cgroupOrWhy as string}`}`);
variants.forEach((variant, i) => console.log(`  ${variantName(variant, i)}`));
console.log(
  '    N  round        time (s)  bound (s)  run (ms)  operator CPU (s)  API writes  writes/server  peak RSS (MiB)',
);
const results: Result[] = [];
try {
  for (const n of sizes.length > 0 ? sizes : [1000]) {
    for (const variant of variants) {
      // Printed as each N ends: a later, bigger N may not finish on a loaded machine.
      const result = await run(cluster.client, cluster.kubeconfig, n, urlOf, drift, variant);
      print(
        result,
        results.findLast((r) => r.variant === variant),
      );
      results.push(result);
    }
  }
  console.log(`load average ${load()}`);
} finally {
  await stopFixtures(fixtures);
  await cluster.stop();
}

/** `operator 1: this checkout's build; the chart's environment: …; Node flags: …`. */
function variantName(variant: Variant, index: number): string {
  const build = variant.cli ?? "this checkout's build";
  return `operator ${index + 1}: ${build}; ${describeChartOperator(chart, variant.nodeOptions, variant.env)}`;
}

function print(r: Result, previous: Result | undefined): void {
  if (variants.length > 1) console.log(`  ${variantName(r.variant, variants.indexOf(r.variant))}`);
  for (const x of r.rounds) {
    // With every run `concurrency` at a time, the round could take no less.
    const bound = (x.runs * x.runSeconds) / SCHEDULER_DEFAULTS.concurrency;
    console.log(
      [
        String(r.n).padStart(5),
        x.name.padEnd(11),
        x.seconds.toFixed(1).padStart(9),
        bound.toFixed(1).padStart(10),
        (x.runSeconds * 1000).toFixed(0).padStart(9),
        x.cpu.toFixed(1).padStart(17),
        String(x.writes).padStart(11),
        (x.writes / r.n).toFixed(2).padStart(14),
        x.peakRssMb.toFixed(0).padStart(15),
      ].join(' '),
    );
    const writes = Object.entries(x.byRequest).filter(([, count]) => count > 0);
    console.log(
      `         writes: ${writes.map(([request, count]) => `${request} ${count}`).join(', ') || 'none'}; discovery runs ${x.runs}; at peak: ${breakdown(x.peak)}`,
    );
  }
  const growth =
    previous === undefined
      ? ''
      : `; growth from N=${previous.n}: ${(((r.peakRssMb - previous.peakRssMb) * 1024) / (r.n - previous.n)).toFixed(1)} KiB/server at peak, ${(((r.rssMb - previous.rssMb) * 1024) / (r.n - previous.n)).toFixed(1)} KiB/server after`;
  // An operator the kernel killed would have been restarted by no one: the rounds would fail.
  const killed =
    cgroup === undefined ? '' : `; OOM kills in its cgroup so far ${cgroup.oomKills()}`;
  console.log(
    `  N=${r.n}: RSS idle ${r.idleRssMb.toFixed(0)} MiB, peak ${r.peakRssMb.toFixed(0)} MiB, after ${r.rssMb.toFixed(0)} MiB${growth}${killed}; load average ${load()}`,
  );
}
