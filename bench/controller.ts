/**
 * Controller benchmark on the real control plane: for N MCPServers (default 100, 500, 1000),
 * how long until all are Ready against the cluster's own floor for the same objects in the same
 * run (bench/floor.ts: render's objects POSTed directly at the same concurrency; its namespace
 * is gone before the operator starts), how many API requests and status writes the operator
 * made per server to get there, how many writes a steady-state resync makes (goal: zero), and
 * the operator's peak RSS. The operator runs as its own process, built as it ships
 * (`node dist/cli.js controller`, default flags), one per N, watching fresh namespaces.
 *
 * The servers are laid out over namespaces, the same in both phases (bench/layout.ts):
 * --servers-per-namespace=K to a namespace, by default all in one up to 1,000 and 100 to a
 * namespace beyond (see defaultServersPerNamespace). In one namespace the operator watches
 * that namespace; in many, every namespace.
 *
 * The operator runs as its pod would, in a memory cgroup of the chart's limit (bench/memory.ts),
 * to which it fits its heap (src/heap-limit.ts), so that its RSS is what the pod would show;
 * --no-cgroup runs it without one.
 *
 * Two tables: the summary (N, floor, operator, ratio, peak RSS, requests and writes per
 * server), then where the time went: status writes per server by the Ready reason they
 * wrote, requests by verb, the seconds at which half and 90% were ready in each phase (a rate
 * that falls with N is a knee), and the CPU seconds of the operator and of each control-plane
 * process in each phase (the API server's extra work in the operator phase is what our
 * requests cost it), and per server where the operator phase went (bench/timeline.ts).
 *
 *   node bench/controller.ts [--no-cgroup] [--node-options=<flags> ...] [--servers-per-namespace=K]
 *     [--split-cpus] [--profile-control-plane=<dir>] [--cli=<entry point> ...]
 *     [--least-operator] [--repeat=R] [--operator-flag=value ...] [N ...]
 *
 * --node-options adds Node flags to the operator's (e.g. --cpu-prof --cpu-prof-dir=<dir>); given
 * more than once, like --cli, each set runs as an operator phase of its own after the same floor.
 * --cli runs another build of the operator (another checkout's dist/cli.js) instead of this
 * one's; given more than once, each N's floor is followed by one operator phase per build, one
 * after the other, so that builds compare in one run under the same load (the operator's CPU
 * milliseconds per server above all, which the load moves less than the elapsed time).
 * --least-operator adds, after each floor, the least any operator adds to it (bench/floor.ts
 * leastOperatorSeconds: the MCPServers POSTed, their objects POSTed at once, one status write
 * each when available): "least ratio" is what an operator cannot save, the rest of "ratio" is
 * ours. --repeat=R runs each N R times over (floor, least operator, operators), since two runs of
 * the same build differ by more than the effects sought.
 * --split-cpus runs the control plane on one core and the operator and the bench on the other
 * (bench/cpus.ts): the ratio then leaves out the operator's own CPU, as a worker node would.
 * --profile-control-plane records Go CPU profiles of kube-apiserver and kube-controller-manager
 * over each phase into <dir>/N-<n>/ and prints their CPU per server by category, each phase
 * against the one before: floor, least operator (when asked for), operator phase
 * (bench/control-plane-profile.ts; the local control plane only).
 *
 * With KUBECONFIG set it uses that cluster; otherwise it starts the local control plane of
 * test/cluster (kwok fake nodes make the pods Running and Ready). Prints a table.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLIENT_CPU, CONTROL_PLANE_CPU, cannotSplit, pin, pinnedLauncher } from './cpus.ts';
import { loadavg } from 'node:os';
import {
  Progress,
  benchCluster,
  DEPLOYED_SPEC,
  counters,
  cpuByName,
  createServersAt,
  peakRssMb,
  rssMb,
  quiet,
  isReady,
  patienceMs,
  startOperatorProcess,
  waitUntil,
  WatchedCount,
} from './harness.ts';
import { MCP_SERVER } from '../src/api/v1alpha1/stored.ts';
import { DEPLOYMENT } from '../src/kube/resources.ts';
import { floorSeconds, isAvailable, leastOperatorSeconds } from './floor.ts';
import { createLayout, placements, removeLayout, type Slot } from './layout.ts';
import { chartMemoryLimit, memoryCgroup, type MemoryCgroup } from './memory.ts';
import { chartOperator, describeChartOperator } from './chart.ts';
import { quantile, stagesText, timeline, type Timeline } from './timeline.ts';
import { profileReport, profiledDuring, writeManifest } from './control-plane-profile.ts';

/** Short, so that the steady-state measurement sees a full resync of every server. */
const RESYNC = '20s';
const CREATE_CONCURRENCY = 32;

/**
 * Up to 1,000 servers share one namespace, as in every earlier run; beyond, 100 to a
 * namespace: a platform runs many tenants' namespaces, and one namespace of thousands measures
 * kube-controller-manager (its Deployment and EndpointSlice controllers list the whole
 * namespace on every sync), not the operator.
 */
export const defaultServersPerNamespace = (n: number): number => (n <= 1000 ? n : 100);

/**
 * One namespace: the operator watches it alone (the harness's --namespaces); many: every
 * namespace, as an operator serving a platform's tenants runs, instead of a watch per kind
 * and namespace.
 */
const operatorScope = (namespaces: readonly string[]): string[] =>
  namespaces.length === 1 ? [] : ['--namespaces='];

type Cluster = Awaited<ReturnType<typeof benchCluster>>;

/**
 * One phase (floor or operator): its time, how the ready count grew, CPU seconds by process, and
 * the control plane's profile files by component (none unless asked for).
 */
interface Phase {
  seconds: number;
  progress: Progress;
  cpu: Record<string, number>;
  profiles: Record<string, string[]>;
  /** Requests the API server served in the phase, by verb and resource (when profiled). */
  requests: Record<string, number>;
}

/** Where the control plane's profiles of one N go, when they are asked for. */
interface Profiling {
  targets: Cluster['profileTargets'];
  dir: string;
}

interface Result {
  n: number;
  /** The operator's build: this checkout's, or the entry point `--cli` named. */
  build: string;
  serversPerNamespace: number;
  /** With the milliseconds from each floor Deployment seen to available. */
  floor: Phase & { rolloutMs: number[] };
  /** The least operator after the same floor, when asked for (--least-operator). */
  least: Phase | undefined;
  operator: Phase;
  timeline: Timeline;
  requestsPerObject: number;
  writesPerObject: number;
  /** Reconcile passes per server until quiet: each costs the operator CPU. */
  passesPerObject: number;
  /** Status writes per server, by the Ready reason each wrote. */
  statusWrites: Record<string, number>;
  /** Requests per server by `<verb> <resource>`. */
  byRequest: Record<string, number>;
  resyncPasses: number;
  resyncWrites: number;
  peakRssMb: number;
  /** After the steady-state resync. */
  rssMb: number;
}

/** Status writes the operator logged (pino JSON, `status written`), by Ready reason. */
async function statusWrites(logFile: string): Promise<Record<string, number>> {
  const text = await readFile(logFile, 'utf8');
  const byReason: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.includes('"msg":"status written"')) continue;
    const { reason } = JSON.parse(line) as { reason: string };
    byReason[reason] = (byReason[reason] ?? 0) + 1;
  }
  return byReason;
}

/** CPU seconds each process used while `work` ran, profiled as `phase` when asked for. */
async function measured(
  processes: readonly { name: string; pid: number }[],
  work: (progress: Progress) => Promise<number>,
  n: number,
  label: string,
  profile: (Profiling & { phase: string }) | undefined,
): Promise<Phase> {
  const before = await cpuByName(processes);
  const progress = new Progress(n, label);
  const {
    result: seconds,
    files: profiles,
    requests,
  } = profile === undefined
    ? { result: await work(progress), files: {}, requests: {} }
    : await profiledDuring(profile.targets, profile.dir, profile.phase, () => work(progress));
  const after = await cpuByName(processes);
  const cpu = Object.fromEntries(
    Object.entries(after).map(([name, total]) => [name, total - (before[name] ?? 0)]),
  );
  return { seconds, progress, cpu, profiles, requests };
}

/**
 * A phase without the operator, in namespaces of its own that are gone when it ends: the floor,
 * or the least operator. `work` returns its seconds.
 */
async function withoutOperator<T extends { seconds: number }>(
  cluster: Cluster,
  n: number,
  perNamespace: number,
  name: 'floor' | 'least',
  work: (layout: Slot[], progress: Progress) => Promise<T>,
  profiling: Profiling | undefined,
): Promise<{ phase: Phase; result: T }> {
  const { client } = cluster;
  const layout = await createLayout(client, `${name}-${n}`, n, perNamespace);
  let result: T | undefined;
  try {
    const phase = await measured(
      cluster.components,
      async (progress) => {
        result = await work(layout, progress);
        return result.seconds;
      },
      n,
      `N=${n} ${name}`,
      profiling && { ...profiling, phase: name },
    );
    return { phase, result: result! };
  } finally {
    // Not in place of the error that ended the phase, if one did.
    await removeLayout(client, layout).catch((err: unknown) => {
      process.stderr.write(`N=${n}: could not remove the ${name}'s namespaces: ${String(err)}\n`);
    });
  }
}

async function floor(
  cluster: Cluster,
  n: number,
  perNamespace: number,
  profiling: Profiling | undefined,
): Promise<Phase & { rolloutMs: number[] }> {
  const { phase, result } = await withoutOperator(
    cluster,
    n,
    perNamespace,
    'floor',
    (layout, progress) =>
      floorSeconds(cluster.client, layout, CREATE_CONCURRENCY, DEPLOYED_SPEC, (count) =>
        progress.record(count),
      ),
    profiling,
  );
  return { ...phase, rolloutMs: result.rolloutMs };
}

/** The least operator's phase (bench/floor.ts leastOperatorSeconds), after the floor. */
async function leastOperator(
  cluster: Cluster,
  n: number,
  perNamespace: number,
  profiling: Profiling | undefined,
): Promise<Phase> {
  const { phase } = await withoutOperator(
    cluster,
    n,
    perNamespace,
    'least',
    async (layout, progress) => ({
      seconds: await leastOperatorSeconds(
        cluster.client,
        layout,
        CREATE_CONCURRENCY,
        DEPLOYED_SPEC,
        (count) => progress.record(count),
      ),
    }),
    profiling,
  );
  return phase;
}

/** The operator's launcher: its CPU, then its memory cgroup, each when asked for. */
function launcherOf(node: { cgroup: MemoryCgroup | undefined; cpu: number | undefined }): {
  launcher?: string[];
} {
  const launcher = [
    ...(node.cpu === undefined ? [] : pinnedLauncher(node.cpu)),
    ...(node.cgroup?.launcher ?? []),
  ];
  return launcher.length === 0 ? {} : { launcher };
}

/** Control plane on one core, the bench (and later the operator) on the other. */
async function splitCpus(cluster: Cluster): Promise<void> {
  const why = cannotSplit(cluster.components);
  if (why !== undefined) throw new Error(`--split-cpus ${why}`);
  await Promise.all(cluster.components.map(({ pid }) => pin(pid, CONTROL_PLANE_CPU)));
  await pin(process.pid, CLIENT_CPU);
}

/** How the operator runs: its flags, its build (`cli`, this checkout's when undefined), its node. */
interface OperatorRun {
  flags: string[];
  cli: string | undefined;
  node: { cgroup: MemoryCgroup | undefined; options: string[]; cpu: number | undefined };
}

/**
 * The floor of N, the least operator when asked for, then one operator phase per build, each
 * against that floor.
 */
async function run(
  cluster: Cluster,
  n: number,
  operators: readonly OperatorRun[],
  perNamespace: number,
  profiling: Profiling | undefined,
  withLeast: boolean,
): Promise<Result[]> {
  process.stderr.write(`N=${n}: floor…\n`);
  const floorPhase = await floor(cluster, n, perNamespace, profiling);
  process.stderr.write(`N=${n}: floor ${floorPhase.seconds.toFixed(1)} s\n`);
  let least: Phase | undefined;
  if (withLeast) {
    least = await leastOperator(cluster, n, perNamespace, profiling);
    process.stderr.write(`N=${n}: least operator ${least.seconds.toFixed(1)} s\n`);
  }
  const results: Result[] = [];
  for (const operator of operators) {
    process.stderr.write(`N=${n}: operator (${variantName(operator)})…\n`);
    const baseline = { floor: floorPhase, least };
    results.push(await runOperator(cluster, n, baseline, operator, perNamespace, profiling));
  }
  return results;
}

/** The build, and the Node flags added to the chart's when there are any. */
const variantName = ({ cli, node }: OperatorRun): string =>
  [cli ?? 'this checkout', ...node.options].join(' ');

async function runOperator(
  cluster: Cluster,
  n: number,
  { floor: floorPhase, least }: Pick<Result, 'floor' | 'least'>,
  operatorRun: OperatorRun,
  perNamespace: number,
  profiling: Profiling | undefined,
): Promise<Result> {
  const { client, kubeconfig } = cluster;
  const { flags, cli, node } = operatorRun;
  const layout = await createLayout(client, `bench-${n}`, n, perNamespace);
  const namespaces = layout.map((slot) => slot.namespace);
  const operator = await startOperatorProcess(
    kubeconfig,
    namespaces[0]!,
    [`--resync-period=${RESYNC}`, ...operatorScope(namespaces), ...flags],
    'operator',
    { nodeArgs: node.options, ...launcherOf(node), ...(cli === undefined ? {} : { cli }) },
  );
  const { url } = operator;
  try {
    const before = await counters(url);
    const processes = [...cluster.components, { name: 'operator', pid: operator.pid }];
    const ready = await WatchedCount.start(client, MCP_SERVER, namespaces, isReady);
    // The floor watches its Deployments too: the same load on the API server in both phases.
    const available = await WatchedCount.start(client, DEPLOYMENT, namespaces, isAvailable);
    let started = 0;
    const operatorPhase = await measured(
      processes,
      async (progress) => {
        started = Date.now();
        await createServersAt(client, placements(layout), CREATE_CONCURRENCY, () => DEPLOYED_SPEC);
        await operator.during(
          ready.until(n, `${n} servers Ready`, patienceMs(n), (count) => progress.record(count)),
        );
        return (Date.now() - started) / 1000;
      },
      n,
      `N=${n} operator Ready`,
      profiling && { ...profiling, phase: 'operator' },
    );
    if (profiling !== undefined) {
      const phases = {
        floor: floorPhase,
        ...(least === undefined ? {} : { least }),
        operator: operatorPhase,
      };
      await writeManifest(profiling.dir, {
        n,
        phases: Object.entries(phases).map(([phase, { cpu, profiles, requests }]) => ({
          phase,
          cpuSeconds: cpu,
          files: profiles,
          requests,
        })),
      });
    }
    await Promise.all([ready.stop(), available.stop()]);
    process.stderr.write(`N=${n}: operator ${operatorPhase.seconds.toFixed(1)} s\n`);
    // Quiet first (trailing Events, last status writes: what converging cost includes them),
    // then through one full resync.
    const settled = await quiet(url);
    const statusWritten = await statusWrites(operator.logFile);
    await waitUntil(
      'a full resync',
      async () => (await counters(url)).reconciles >= settled.reconciles + n,
      patienceMs(n),
    );
    const resynced = await counters(url);
    const byRequest = Object.fromEntries(
      Object.entries(settled.byRequest).map(([request, count]) => [
        request,
        (count - (before.byRequest[request] ?? 0)) / n,
      ]),
    );
    const result = {
      n,
      build: variantName(operatorRun),
      serversPerNamespace: perNamespace,
      floor: floorPhase,
      least,
      operator: operatorPhase,
      timeline: timeline(ready, available, started),
      requestsPerObject: (settled.requests - before.requests) / n,
      writesPerObject: (settled.writes - before.writes) / n,
      passesPerObject: (settled.reconciles - before.reconciles) / n,
      statusWrites: Object.fromEntries(
        Object.entries(statusWritten).map(([reason, count]) => [reason, count / n]),
      ),
      byRequest,
      resyncPasses: resynced.reconciles - settled.reconciles,
      resyncWrites: resynced.writes - settled.writes,
      peakRssMb: await peakRssMb(operator.pid),
      rssMb: await rssMb(operator.pid),
    };
    // Told before the namespace is removed, which takes long at thousands.
    process.stderr.write(`N=${n} done:\n`);
    printSummary([result], (line) => process.stderr.write(`${line}\n`));
    return result;
  } finally {
    await operator.stop();
    // Gone before the next N's floor starts, which it would slow down.
    await removeLayout(client, layout);
  }
}

const fixed =
  (width: number, digits = 1) =>
  (x: number) =>
    x.toFixed(digits).padStart(width);
const perServer = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, count]) => count > 0)
    .map(([key, count]) => `${key} ${count.toFixed(2)}`)
    .join(', ');

/** The operator process's CPU milliseconds per server in the operator phase. */
const operatorCpuMs = (r: Result): number => ((r.operator.cpu['operator'] ?? 0) * 1000) / r.n;

function printSummary(results: Result[], print = (line: string) => console.log(line)): void {
  print(
    '    N  floor (s)  least (s)  operator (s)  ratio  least ratio  peak RSS (MiB)  requests/server  writes/server  operator CPU (ms/server)  build',
  );
  for (const r of results) {
    print(
      [
        String(r.n).padStart(5),
        fixed(10)(r.floor.seconds),
        r.least === undefined ? '–'.padStart(10) : fixed(10)(r.least.seconds),
        fixed(13)(r.operator.seconds),
        fixed(6, 2)(r.operator.seconds / r.floor.seconds),
        r.least === undefined ? '–'.padStart(12) : fixed(12, 2)(r.least.seconds / r.floor.seconds),
        fixed(15, 0)(r.peakRssMb),
        fixed(16, 2)(r.requestsPerObject),
        fixed(14, 2)(r.writesPerObject),
        fixed(25)(operatorCpuMs(r)),
        ` ${r.build}`,
      ].join(' '),
    );
  }
}

/** CPU seconds of a phase: the operator's, then each control-plane process's. */
const cpuText = (cpu: Record<string, number>) =>
  Object.entries(cpu)
    .map(([name, seconds]) => `${name} ${seconds.toFixed(1)}`)
    .join(', ');

function printDetail(results: Result[]): void {
  for (const r of results) {
    const { floor, operator } = r;
    const total = (cpu: Record<string, number>) => Object.values(cpu).reduce((a, b) => a + b, 0);
    console.log(
      [
        `N=${r.n}, ${r.serversPerNamespace} servers per namespace, ${r.build}`,
        `  status writes/server by Ready reason: ${perServer(r.statusWrites)}`,
        `  requests/server by verb and resource: ${perServer(r.byRequest)}`,
        `  reconcile passes/server until quiet: ${r.passesPerObject.toFixed(2)}`,
        `  half/90% ready (s): floor ${fixed(0)(floor.progress.at(0.5))}/${fixed(0)(floor.progress.at(0.9))}, operator ${fixed(0)(operator.progress.at(0.5))}/${fixed(0)(operator.progress.at(0.9))}`,
        `  Deployments available half/90%/all (s): floor ${[0.5, 0.9, 1].map((f) => fixed(0)(floor.progress.at(f))).join('/')}, operator phase ${[0.5, 0.9, 1].map((f) => fixed(0)(quantile(r.timeline.availableSeconds, f))).join('/')}`,
        `  per server p50/p90/max (s): floor ${stagesText({ rollout: floor.rolloutMs })}; operator phase ${stagesText(r.timeline.stages)}`,
        `  CPU (s) floor: ${fixed(0)(total(floor.cpu))} (${cpuText(floor.cpu)})`,
        ...(r.least === undefined
          ? []
          : [
              `  CPU (s) least operator: ${fixed(0)(total(r.least.cpu))} (${cpuText(r.least.cpu)})`,
            ]),
        `  CPU (s) operator phase: ${fixed(0)(total(operator.cpu))} (${cpuText(operator.cpu)})`,
        `  steady state: ${r.resyncPasses} resync passes, ${r.resyncWrites} writes, RSS ${fixed(0, 0)(r.rssMb)} MiB`,
      ].join('\n'),
    );
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const noCgroup = '--no-cgroup';
  const nodeOptionsFlag = '--node-options=';
  const perNamespaceFlag = '--servers-per-namespace=';
  const split = '--split-cpus';
  const profileFlag = '--profile-control-plane=';
  const cliFlag = '--cli=';
  const leastFlag = '--least-operator';
  const repeatFlag = '--repeat=';
  const benchFlag = (a: string) =>
    a === noCgroup ||
    a === split ||
    a === leastFlag ||
    a.startsWith(repeatFlag) ||
    a.startsWith(cliFlag) ||
    a.startsWith(nodeOptionsFlag) ||
    a.startsWith(perNamespaceFlag) ||
    a.startsWith(profileFlag);
  const profileDir = args.find((a) => a.startsWith(profileFlag))?.slice(profileFlag.length);
  const clis = args.filter((a) => a.startsWith(cliFlag)).map((a) => a.slice(cliFlag.length));
  const flags = args.filter((a) => a.startsWith('--') && !benchFlag(a));
  const nodeOptionSets = args
    .filter((a) => a.startsWith(nodeOptionsFlag))
    .map((a) => a.slice(nodeOptionsFlag.length).split(' ').filter(Boolean));
  // Each N's control-plane profiles are of one operator phase.
  if (profileDir !== undefined && Math.max(clis.length, 1) * Math.max(nodeOptionSets.length, 1) > 1)
    throw new Error(`${profileFlag} profiles one operator: one ${cliFlag}, one ${nodeOptionsFlag}`);
  const perNamespaceArg = args.find((a) => a.startsWith(perNamespaceFlag));
  const perNamespace = (n: number) =>
    perNamespaceArg === undefined
      ? defaultServersPerNamespace(n)
      : Number(perNamespaceArg.slice(perNamespaceFlag.length));
  const repeat = Number(args.find((a) => a.startsWith(repeatFlag))?.slice(repeatFlag.length) ?? 1);
  if (!Number.isInteger(repeat) || repeat < 1)
    throw new Error(`${repeatFlag} takes a positive whole number`);
  // Each N's profiles go to one directory, of one run.
  if (profileDir !== undefined && repeat > 1)
    throw new Error(`${profileFlag} profiles one run of each N: no ${repeatFlag}`);
  const withLeast = args.includes(leastFlag);
  const sizes = args.filter((a) => !a.startsWith('--')).map(Number);
  const ns = sizes.length > 0 ? sizes : [100, 500, 1000];
  const cgroupOrWhy = args.includes(noCgroup)
    ? `no memory cgroup (${noCgroup})`
    : memoryCgroup(chartMemoryLimit());
  const cgroup = typeof cgroupOrWhy === 'string' ? undefined : cgroupOrWhy;
  const where = cgroup?.description ?? `WARNING: ${cgroupOrWhy as string}`;
  process.stderr.write(`operator: ${where}\n`);
  const cluster = await benchCluster({ profiling: profileDir !== undefined });
  if (profileDir !== undefined && cluster.profileTargets.length === 0)
    throw new Error(`${profileFlag} needs the local control plane (KUBECONFIG is set)`);
  const profilingOf = (n: number): Profiling | undefined =>
    profileDir === undefined
      ? undefined
      : { targets: cluster.profileTargets, dir: join(profileDir, `N-${n}`) };
  const cpu = args.includes(split) ? CLIENT_CPU : undefined;
  const results: Result[] = [];
  try {
    if (cpu !== undefined) await splitCpus(cluster);
    const operators = (clis.length > 0 ? clis : [undefined]).flatMap((cli) =>
      (nodeOptionSets.length > 0 ? nodeOptionSets : [[]]).map((options) => ({
        flags,
        cli,
        node: { cgroup, options, cpu },
      })),
    );
    for (const n of ns) {
      for (let i = 0; i < repeat; i++) {
        results.push(
          ...(await run(cluster, n, operators, perNamespace(n), profilingOf(n), withLeast)),
        );
      }
    }
  } finally {
    await cluster.stop();
  }
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `operator flags: ${flags.join(' ') || '(defaults)'}; ${describeChartOperator(await chartOperator(), [])}; operator: ${where}; ${cpu === undefined ? 'cores shared' : `control plane on CPU ${CONTROL_PLANE_CPU}, operator and bench on CPU ${CLIENT_CPU}`}; load average ${load}`,
  );
  printSummary(results);
  printDetail(results);
  for (const { n } of results) {
    const profiling = profilingOf(n);
    if (profiling !== undefined) console.log((await profileReport(profiling.dir)).join('\n'));
  }
}

await main();
