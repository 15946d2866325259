/**
 * Leader hand-over under load, on the real control plane: two operator processes with leader
 * election (default Lease timings: 15 s duration, 2 s retry period), N MCPServers (default 1000)
 * created 32 at a time. Three runs in one:
 * - plain: time until every server is Ready;
 * - SIGKILL: once a third of them are Ready, the leader is killed (as when its node dies: it
 *   cannot release the Lease);
 * - SIGTERM: the same, but the leader is stopped as `kubectl delete pod` or a rollout stops it:
 *   it finishes its passes in flight and releases the Lease.
 * For each hand-over, from the replicas' debug logs (each Lease attempt: its start, what it saw,
 * its GET's and write's durations; each new record the standby's watch saw; src/kube/leader.ts),
 * when the standby led and where the time went:
 * - SIGKILL: the standby may take the Lease once its record has not changed for the lease
 *   duration on the standby's own clock, from when it first saw that record. It watches the
 *   Lease and tries at that expiry; it also polls every retry period stretched by up to 1.2
 *   (2 to 4.4 s), which bounds it when the watch fails. So from the dead leader's last renewal:
 *   observation lag (the watch's delay; up to one poll) + lease + poll lag (the timer's delay;
 *   up to one poll) + the requests of the attempt that takes it. The bound printed is the
 *   polling one, 15 + 2 × 4.4 s plus the standby's request time.
 * - SIGTERM: drain (the leader's passes in flight finish) + the standby's wake-up (its watch
 *   sees the release; up to one poll of 4.4 s) + the requests that take it.
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
import type { AttemptTrace } from '../src/kube/leader.ts';
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
/** The longest wait between two attempts of a candidate: the retry period jittered by 1.2. */
const MAX_POLL_SECONDS = RETRY_SECONDS * 2.2;

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

type LogLine = Partial<AttemptTrace> & { msg?: string; time?: number };

async function logLines(replica: RunningOperator): Promise<LogLine[]> {
  const text = await readFile(replica.logFile, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

const attemptsOf = (lines: LogLine[]) =>
  lines.filter((l): l is LogLine & AttemptTrace => l.msg === 'lease attempt');
/** When a replica saw a new Lease record: by an attempt's GET, or by its watch. */
const sightingsOf = (lines: LogLine[]) =>
  lines.filter(
    (l): l is LogLine & { at: number } =>
      (l.msg === 'lease attempt' && l.newRecord === true) || l.msg === 'lease seen',
  );
/** When an attempt's last request answered (epoch ms). */
const endOf = (a: AttemptTrace) => a.at + (a.getMs ?? 0) + (a.writeMs ?? 0);
const requestSeconds = (a: AttemptTrace) => ((a.getMs ?? 0) + (a.writeMs ?? 0)) / 1000;

/** Where a hand-over's time went, in seconds; from the signal unless said otherwise. */
interface Handover {
  /** When the standby's write that took the Lease was answered. */
  led: number;
  /** The GET and the write of the attempt that took the Lease. */
  takeoverRequests: number;
  /** Between the Lease becoming takeable (expired, or released) and the attempt that took it. */
  pollLag: number;
  /** SIGKILL: the dead leader's last renewal (negative: before the kill). */
  lastRenewal?: number;
  /** SIGKILL: from the last renewal until the standby first saw its record (watch or GET). */
  observationLag?: number;
  /** SIGKILL: the standby's slowest GET while it waited. */
  slowestWaitingGet?: number;
  /** SIGTERM: when the leader released the Lease. */
  released?: number;
}

/** Reads a hand-over from the logs of the leader (`from`) and the standby (`to`). */
function handoverOf(signalled: number, from: LogLine[], to: LogLine[]): Handover {
  const taken = attemptsOf(to).find((a) => a.at >= signalled && a.outcome === 'acquired');
  if (taken === undefined) throw new Error('the standby logged no attempt that took the Lease');
  const seconds = (ms: number) => (ms - signalled) / 1000;
  const common = { led: seconds(endOf(taken)), takeoverRequests: requestSeconds(taken) };
  const release = from.find((l) => l.msg === 'released leadership');
  if (release?.time !== undefined) {
    return {
      ...common,
      released: seconds(release.time),
      pollLag: (taken.at - release.time) / 1000,
    };
  }
  const renewals = attemptsOf(from).filter((a) => a.outcome === 'renewed');
  if (renewals.length === 0) throw new Error('the leader logged no renewal');
  const last = renewals.reduce((a, b) => (endOf(b) > endOf(a) ? b : a));
  const lastRenewal = endOf(last);
  const waiting = attemptsOf(to).filter((a) => a.at >= lastRenewal && a.at < taken.at);
  // The last new record it saw is the one that expired. (Its first sight is not taken: the
  // killed leader's last log lines may not have been written, its log being asynchronous.) It
  // may see it before the leader hears back: from when the leader's write went out.
  const written = last.at + (last.getMs ?? 0);
  const observed = sightingsOf(to)
    .filter((a) => a.at >= written && a.at < taken.at)
    .at(-1);
  if (observed === undefined)
    throw new Error("the standby never saw the dead leader's last record");
  return {
    ...common,
    pollLag: (taken.at - observed.at) / 1000 - LEASE_SECONDS,
    lastRenewal: seconds(lastRenewal),
    observationLag: (observed.at - lastRenewal) / 1000,
    slowestWaitingGet: Math.max(0, ...waiting.map((a) => (a.getMs ?? 0) / 1000)),
  };
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
  handover?: Handover;
  stale: number;
}

/** How the leader is ended at a third Ready: not at all, SIGKILL, or SIGTERM. */
type Ending = 'none' | 'SIGKILL' | 'SIGTERM';

async function run(client: KubeClient, kubeconfig: string, ending: Ending): Promise<Run> {
  const namespace = await createNamespace(client, `bench-leader-${n}`);
  // Debug: every Lease attempt is logged (one line per retry period and replica).
  const flags = ['--leader-elect', `--leader-election-namespace=${namespace}`, '--log-level=debug'];
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
    let signalled: number | undefined;
    if (ending !== 'none') {
      await ready.until(Math.ceil(n / 3), `a third of ${n} servers Ready`, patienceMs(n));
      const standby = replicas[1 - leader]!;
      signalled = Date.now();
      const ended = ending === 'SIGKILL' ? replicas[leader]!.crash() : replicas[leader]!.stop();
      while (!(await isLeader(standby))) await sleep(200);
      await ended;
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
    const handover =
      signalled === undefined
        ? undefined
        : handoverOf(
            signalled,
            await logLines(replicas[leader]!),
            await logLines(replicas[1 - leader]!),
          );
    return {
      readySeconds,
      leaderships: await leaderships(replicas),
      ...(handover === undefined ? {} : { handover }),
      stale: await staleCount(client, namespace),
    };
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await removeNamespace(client, namespace);
  }
}

const f = (seconds: number | undefined) => (seconds ?? Number.NaN).toFixed(1);
const verdict = (ok: boolean) => (ok ? 'yes' : 'NO');

/** The SIGKILL run's line: when the standby led, and where the time went. */
function killReport(h: Handover): string {
  const fromRenewal = h.led - h.lastRenewal!;
  // Observation and poll lag are each at most one poll after the attempt before them; every
  // attempt's requests come on top, bounded here by the slowest GET seen while waiting.
  const requests = h.takeoverRequests + 2 * h.slowestWaitingGet!;
  const bound = LEASE_SECONDS + 2 * MAX_POLL_SECONDS + requests;
  return (
    `SIGKILL: standby led ${f(h.led)} s after the kill, ${f(fromRenewal)} s after the last ` +
    `renewal (${f(-h.lastRenewal!)} s before the kill) = observation lag ${f(h.observationLag)} ` +
    `+ lease ${LEASE_SECONDS} + poll lag ${f(h.pollLag)} + take-over GET+PUT ${f(h.takeoverRequests)} s ` +
    `(slowest GET while waiting ${f(h.slowestWaitingGet)} s)\n` +
    `  within the lease of the kill (${LEASE_SECONDS} s): ${verdict(h.led <= LEASE_SECONDS)}; ` +
    `within the algorithm's bound from the last renewal (lease + 2 polls of at most ` +
    `${MAX_POLL_SECONDS} s + requests ${f(requests)} s = ${f(bound)} s): ${verdict(fromRenewal <= bound)}`
  );
}

/** The SIGTERM run's line. */
function termReport(h: Handover): string {
  if (h.released === undefined)
    return `SIGTERM: the leader did not release the Lease before it was killed; ${killReport(h)}`;
  const bound = MAX_POLL_SECONDS + h.takeoverRequests;
  return (
    `SIGTERM: leader released the Lease ${f(h.released)} s after the signal (its passes in ` +
    `flight finished); standby led ${f(h.led)} s after the signal = release ${f(h.released)} ` +
    `+ poll lag ${f(h.pollLag)} + take-over GET+PUT ${f(h.takeoverRequests)} s\n` +
    `  led within one poll (${MAX_POLL_SECONDS} s) + its requests of the release: ` +
    `${verdict(h.led - h.released <= bound)}; of the signal: ${verdict(h.led <= bound)}`
  );
}

const cluster = await benchCluster();
try {
  const runs: Partial<Record<Ending, Run>> = {};
  for (const ending of ['none', 'SIGKILL', 'SIGTERM'] as const) {
    process.stderr.write(`N=${n}: leader ended by ${ending}…\n`);
    runs[ending] = await run(cluster.client, cluster.kubeconfig, ending);
    process.stderr.write(`N=${n}: all Ready after ${f(runs[ending].readySeconds)} s\n`);
  }
  const { none: plain, SIGKILL: killed, SIGTERM: stopped } = runs as Record<Ending, Run>;
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `leader hand-over at ${n} servers, lease ${LEASE_SECONDS} s, retry ${RETRY_SECONDS} s; load average ${load}`,
  );
  console.log(killReport(killed.handover!));
  console.log(termReport(stopped.handover!));
  for (const [name, r] of [
    ['plain', plain],
    ['SIGKILL', killed],
    ['SIGTERM', stopped],
  ] as const) {
    const growth = r.readySeconds - plain.readySeconds;
    console.log(
      `${name}: all Ready ${f(r.readySeconds)} s` +
        (r === plain ? '' : ` (${growth >= 0 ? '+' : ''}${f(growth)} s)`) +
        `, stale ${r.stale}, became leader ${r.leaderships} times` +
        (r === plain
          ? ''
          : `; all-Ready grew by less than the lease: ${verdict(growth < LEASE_SECONDS)}`) +
        `; no stale status: ${verdict(r.stale === 0)}` +
        `; no leader lost its Lease on its own: ${verdict(r.leaderships === (r === plain ? 1 : 2))}`,
    );
  }
} finally {
  await cluster.stop();
}
