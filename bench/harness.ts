/**
 * What the operator benchmarks share: a control plane (the one KUBECONFIG names, or the local
 * one of test/cluster) with the MCPServer CRD applied, the operator as its own process (`node dist/cli.js controller`, built first, with the environment and Node flags the chart gives it) with its
 * /metrics read as counters, its peak RSS and CPU time from /proc, and the discovery fixture
 * processes (bench/discovery-servers.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { pino } from 'pino';
import { CRD_FILE, CRD_NAME } from '../src/api/crd.ts';
import { KIND } from '../src/api/names.ts';
import { API_VERSION, type MCPServer } from '../src/api/v1alpha1/mcpserver.ts';
import { connect, isNotFound, type KubeClient } from '../src/kube/client.ts';
import { loadClientConfig } from '../src/kube/config.ts';
import { Informer } from '../src/kube/informer.ts';
import {
  NAMESPACE,
  SERVICE,
  collectionPath,
  keyOf,
  objectPath,
  type KubeObject,
  type ResourceType,
} from '../src/kube/resources.ts';
import { MCP_SERVER, type StoredMCPServer } from '../src/api/v1alpha1/stored.ts';
import { ensureBinaries } from '../test/cluster/build.ts';
import { chartOperator } from './chart.ts';
import { ControlPlane, type ProfileTarget } from '../test/cluster/control-plane.ts';
import { OperatorProcess, type OperatorOptions } from '../test/support/operator.ts';
import { waitFor } from '../test/support/wait.ts';
import type { Placement } from './layout.ts';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sums of the operator's counters, from its /metrics. */
export async function counters(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (re: RegExp, keep: (m: RegExpMatchArray) => boolean = () => true) =>
    [...text.matchAll(re)].filter(keep).reduce((total, m) => total + Number(m.at(-1)), 0);
  const requests =
    /^mcp_operator_kube_requests_total\{verb="(\w+)",code="(\d+)"(?:,resource="([\w/]+)")?\} (\d+)$/gm;
  /**
   * Requests by `<verb> <resource>` ("PATCH mcpservers/status"), with the code when the API
   * server refused it ("PATCH configmaps 409"); watches left out. Builds before the resource
   * label (compared with `--cli`) count by verb alone.
   */
  const byRequest: Record<string, number> = {};
  let series = 0;
  for (const [, verb, code, resource, count] of text.matchAll(requests)) {
    series += 1;
    const key = [verb, resource, code!.startsWith('2') ? undefined : code]
      .filter(Boolean)
      .join(' ');
    if (verb !== 'WATCH') byRequest[key] = (byRequest[key] ?? 0) + Number(count);
  }
  // The operator lists and watches from its start: no series means the pattern is stale.
  if (series === 0) throw new Error(`no request series in ${url}/metrics`);
  return {
    byRequest,
    requests: sum(requests, (m) => m[1] !== 'WATCH'),
    // Not PUT: the operator PUTs only its Lease (src/kube/leader.ts), and a leader renews it
    // every retry period: no work on any server, and `quiet` would wait for it forever.
    writes: sum(requests, (m) => ['POST', 'PATCH', 'DELETE'].includes(m[1]!)),
    reconciles: sum(/^mcp_operator_reconcile_total\{result="\w+"\} (\d+)$/gm),
    discoveries: sum(/^mcp_operator_discovery_duration_seconds_count\{result="\w+"\} (\d+)$/gm),
    /** Seconds spent in discovery runs, summed over runs. */
    discoverySeconds: sum(
      /^mcp_operator_discovery_duration_seconds_sum\{result="\w+"\} ([\d.e+-]+)$/gm,
    ),
  };
}

async function statusKb(pid: number, field: string): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? 0);
}

/** Peak resident set size of a process (Linux VmHWM), in MiB. */
export async function peakRssMb(pid: number): Promise<number> {
  return (await statusKb(pid, 'VmHWM')) / 1024;
}

/**
 * Resident set size now (Linux VmRSS), in MiB: once the work is done, what stays. The peak
 * also holds garbage V8 had not collected yet.
 */
export async function rssMb(pid: number): Promise<number> {
  return (await statusKb(pid, 'VmRSS')) / 1024;
}

/** CPU time (user + system) a process has used so far, in seconds (Linux /proc/<pid>/stat). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticksPerSecond = 100; // USER_HZ on Linux
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

export async function pool<T>(items: T[], size: number, work: (item: T) => Promise<unknown>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: size }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}

/**
 * Creates `n` MCPServers named `srv-0`…`srv-<n-1>` in `namespace`, `concurrency` at a time,
 * with the spec `specOf(i)`; resolves to their names.
 */
export async function createServers(
  client: KubeClient,
  namespace: string,
  n: number,
  concurrency: number,
  specOf: (index: number) => MCPServer['spec'],
): Promise<string[]> {
  const indexes = Array.from({ length: n }, (_, i) => i);
  await createServersAt(
    client,
    indexes.map((index) => ({ namespace, index })),
    concurrency,
    specOf,
  );
  return indexes.map((i) => `srv-${i}`);
}

/** Creates the MCPServer `srv-<index>` of a placement; resolves to it as the API server stored it. */
export function createServer(
  client: KubeClient,
  { namespace, index }: Placement,
  spec: MCPServer['spec'],
): Promise<StoredMCPServer> {
  return client.request<StoredMCPServer>({
    method: 'POST',
    path: collectionPath(MCP_SERVER, namespace),
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name: `srv-${index}` }, spec },
  });
}

/** Creates an MCPServer `srv-<index>` in each placement's namespace, `concurrency` at a time. */
export async function createServersAt(
  client: KubeClient,
  servers: readonly Placement[],
  concurrency: number,
  specOf: (index: number) => MCPServer['spec'],
): Promise<void> {
  await pool([...servers], concurrency, (placement) =>
    createServer(client, placement, specOf(placement.index)),
  );
}

/**
 * The server the controller benches deploy. Discovery off: its schedule writes status on its
 * own (and the fake pods answer nothing); bench/discovery-operator.ts measures it.
 */
export const DEPLOYED_SPEC: MCPServer['spec'] = {
  image: 'example.com/mcp/web:1',
  transport: 'streamable-http',
  port: 3000,
  discovery: { enabled: false },
};

/** Whether an MCPServer's status is Ready for its current generation. */
export function isReady(server: StoredMCPServer): boolean {
  return (
    server.status?.observedGeneration === server.metadata.generation &&
    (server.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false)
  );
}

/**
 * How many objects of one kind in some namespaces are done (Ready, available), told by a watch.
 * Listing every object each second to count them would cost the API server more than some of
 * what the benches measure (a LIST of 1,000 Deployments takes some 180 ms of its CPU, of as
 * many MCPServers 70 ms), and the floor would pay more of it than the operator.
 */
export class WatchedCount<T extends KubeObject> {
  readonly #done = new Set<string>();
  /**
   * When each object was first seen, and first seen done (ms since the epoch), by
   * `namespace/name`: a layout of many namespaces repeats names.
   */
  readonly seenAt = new Map<string, number>();
  readonly doneAt = new Map<string, number>();
  readonly #informer: Informer<T>;

  constructor(
    client: KubeClient,
    resource: ResourceType,
    namespaces: string | readonly string[],
    isDone: (obj: T) => boolean,
    /** Hears each object the first time it is seen done. */
    onDone: (obj: T) => void = () => {},
  ) {
    this.#informer = new Informer<T>({
      client,
      resource,
      namespaces: typeof namespaces === 'string' ? [namespaces] : namespaces,
      log: pino({ level: 'silent' }),
      onChange: ({ type, object }) => {
        const key = keyOf(object);
        if (!this.seenAt.has(key)) this.seenAt.set(key, Date.now());
        if (type !== 'deleted' && isDone(object)) {
          this.#done.add(key);
          if (!this.doneAt.has(key)) {
            this.doneAt.set(key, Date.now());
            onDone(object);
          }
        } else this.#done.delete(key);
      },
    });
  }

  static async start<T extends KubeObject>(
    ...args: ConstructorParameters<typeof WatchedCount<T>>
  ): Promise<WatchedCount<T>> {
    const count = new WatchedCount<T>(...args);
    count.#informer.start();
    await count.#informer.waitForSync();
    return count;
  }

  get count(): number {
    return this.#done.size;
  }

  /** Resolves once `n` are done; `progress` hears the count as it is checked (10 times a second). */
  async until(
    n: number,
    what: string,
    timeoutMs: number,
    progress: (count: number) => void = () => {},
  ): Promise<void> {
    await waitFor(
      what,
      () => {
        progress(this.count);
        return this.count >= n;
      },
      { timeoutMs, intervalMs: 100 },
    );
  }

  stop(): Promise<void> {
    return this.#informer.stop();
  }
}

/**
 * How a count of finished objects grew over time, from the polls that watched it: the seconds
 * at which a fraction of `n` was first reached show whether the rate falls as more exist.
 */
export class Progress {
  readonly #n: number;
  readonly #label: string | undefined;
  readonly #started = Date.now();
  readonly #samples: { seconds: number; count: number }[] = [];
  #told = 0;

  /** With a `label`, each tenth of `n` reached is told on stderr, for a run cut short. */
  constructor(n: number, label?: string) {
    this.#n = n;
    this.#label = label;
  }

  record(count: number): void {
    const seconds = (Date.now() - this.#started) / 1000;
    this.#samples.push({ seconds, count });
    const tenths = Math.floor((10 * count) / this.#n);
    if (this.#label !== undefined && tenths > this.#told) {
      this.#told = tenths;
      process.stderr.write(`${this.#label}: ${count}/${this.#n} at ${seconds.toFixed(0)} s\n`);
    }
  }

  /** Seconds until `fraction` of n were counted. */
  at(fraction: number): number {
    const wanted = Math.ceil(fraction * this.#n);
    return this.#samples.find((s) => s.count >= wanted)?.seconds ?? Number.NaN;
  }
}

/** CPU seconds of each process so far, by name. */
export async function cpuByName(
  processes: readonly { name: string; pid: number }[],
): Promise<Record<string, number>> {
  const entries = await Promise.all(
    processes.map(async (p) => [p.name, await cpuSeconds(p.pid).catch(() => 0)] as const),
  );
  return Object.fromEntries(entries);
}

/**
 * How long a bench waits for `n` objects to converge (or a namespace of them to go): 20 min,
 * or a second per object for more, since a loaded machine may take that long at thousands.
 */
export const patienceMs = (n: number): number => Math.max(1_200_000, n * 1000);

/** Polls once a second: listing every MCPServer is itself load on the API server. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  await waitFor(what, check, { timeoutMs, intervalMs: 1000 });
}

/** Waits until the operator has written nothing for a few seconds; returns its counters then. */
export async function quiet(url: string): Promise<Awaited<ReturnType<typeof counters>>> {
  let last = await counters(url);
  for (;;) {
    await sleep(3000);
    const now = await counters(url);
    if (now.writes === last.writes) return now;
    last = now;
  }
}

const BENCH_REQUEST_TIMEOUT_MS = 300_000;

/**
 * A cluster for the run: the one KUBECONFIG names, else the local control plane, started; with
 * `profiling`, the local one serves Go's /debug/pprof (bench/control-plane-profile.ts).
 */
export async function benchCluster(options: { profiling?: boolean } = {}): Promise<{
  kubeconfig: string;
  client: KubeClient;
  /** The local control plane's processes (none for a KUBECONFIG cluster), for their CPU time. */
  components: { name: string; pid: number }[];
  /** Where the local control plane serves /debug/pprof, when it was started with `profiling`. */
  profileTargets: ProfileTarget[];
  stop(): Promise<void>;
}> {
  const external = process.env.KUBECONFIG;
  const plane = external
    ? undefined
    : await ControlPlane.start({ binaries: await ensureBinaries(), ...options });
  const kubeconfig = external ?? plane!.kubeconfigPath;
  // A loaded API server may take longer than the operator's 30 s to answer one of thousands of
  // requests; the bench waits rather than losing a run of an hour to one slow answer.
  const client = connect(await loadClientConfig({ kubeconfig, env: {} }), {
    requestTimeoutMs: BENCH_REQUEST_TIMEOUT_MS,
  });
  await installCrd(client);
  return {
    kubeconfig,
    client,
    components: plane?.components() ?? [],
    profileTargets: plane?.profileTargets() ?? [],
    async stop() {
      client.close();
      await plane?.stop();
    },
  };
}

export const CRD: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

/**
 * Applies a CRD (server-side apply), by default the committed MCPServer one, and waits until it
 * is served.
 */
export async function installCrd(
  client: KubeClient,
  crd?: { metadata: { name: string } },
): Promise<void> {
  const name = crd?.metadata.name ?? CRD_NAME;
  const body = crd ?? load(await readFile(join(import.meta.dirname, '..', CRD_FILE), 'utf8'));
  const path = objectPath(CRD, undefined, name);
  await client.request({
    method: 'PATCH',
    patchType: 'apply',
    path,
    query: { fieldManager: 'mcp-operator-bench', force: true },
    body,
  });
  await waitUntil(
    `CRD ${name} Established`,
    async () => {
      const live = await client.request<{ status?: { conditions?: Condition[] } }>({
        method: 'GET',
        path,
      });
      return (
        live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ??
        false
      );
    },
    60_000,
  );
}

interface Condition {
  type: string;
  status: string;
}

export async function createNamespace(client: KubeClient, prefix: string): Promise<string> {
  const namespace = `${prefix}-${Date.now().toString(36)}`;
  await client.request({
    method: 'POST',
    path: collectionPath(NAMESPACE),
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
  });
  return namespace;
}

export function deleteNamespace(client: KubeClient, namespace: string): Promise<unknown> {
  return client.request({ method: 'DELETE', path: objectPath(NAMESPACE, undefined, namespace) });
}

/**
 * Deletes `namespace` and waits until the namespace controller has removed all of it. Its
 * Services go first, many at a time: Services have no deletecollection, so the namespace
 * controller deletes them one by one, which takes minutes for thousands on a loaded machine.
 */
export async function removeNamespace(client: KubeClient, namespace: string): Promise<void> {
  const services = await client.request<{ items: KubeObject[] }>({
    method: 'GET',
    path: collectionPath(SERVICE, namespace),
  });
  await pool(services.items, 32, (service) =>
    client
      .request({ method: 'DELETE', path: objectPath(SERVICE, namespace, service.metadata.name!) })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      }),
  );
  await deleteNamespace(client, namespace);
  await waitUntil(
    `namespace ${namespace} gone`,
    () =>
      client.request({ method: 'GET', path: objectPath(NAMESPACE, undefined, namespace) }).then(
        () => false,
        (err: unknown) => isNotFound(err),
      ),
    patienceMs(services.items.length),
  );
}

export interface RunningOperator {
  /** `http://127.0.0.1:<port>` of /readyz and /metrics. */
  url: string;
  pid: number;
  /** Its JSON log (pino), one line per record. */
  logFile: string;
  stop(): Promise<void>;
  /** SIGKILL: no chance to release the Lease, as when its node dies. */
  crash(): Promise<void>;
  /** `work`, or an error as soon as the operator exits: a bench never waits on a dead one. */
  during<T>(work: Promise<T>): Promise<T>;
}

let build: Promise<string> | undefined;

/**
 * The operator as it ships: compiled to dist/ (`npm run build`, what the image runs). Run from
 * src/*.ts instead, Node's type stripping alone costs some 70 MiB of RSS and seconds of start.
 */
export function builtCli(): Promise<string> {
  build ??= (async () => {
    const root = join(import.meta.dirname, '..');
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')]);
    return join(root, 'dist', 'cli.js');
  })();
  return build;
}

/**
 * `mcp-operator controller` (the build, see builtCli, or `node.cli`) watching `namespace`, without leader election unless `flags` turn
 * it on (later flags win), its log in a temp file; ready (caches synced) when it returns. It
 * gets the chart's Node flags and environment; `node.env` overrides the latter.
 */
export async function startOperatorProcess(
  kubeconfig: string,
  namespace: string,
  flags: string[],
  name = 'operator',
  node: Pick<OperatorOptions, 'nodeArgs' | 'launcher' | 'env'> & { cli?: string } = {},
): Promise<RunningOperator> {
  const chart = await chartOperator();
  const operator = await OperatorProcess.start({
    ...node,
    nodeArgs: [...chart.nodeFlags, ...(node.nodeArgs ?? [])],
    env: { ...chart.env, ...node.env },
    name: `${namespace}-${name}`,
    cli: node.cli ?? (await builtCli()),
    args: [`--namespaces=${namespace}`, '--no-leader-elect', ...flags],
    kubeconfig: { path: kubeconfig },
  });
  try {
    const url = await operator.ready();
    return {
      url,
      pid: operator.pid,
      logFile: operator.logFile,
      stop: () => operator.stop(),
      crash: () => operator.kill(),
      during: (work) => operator.during(work),
    };
  } catch (error) {
    await operator.stop();
    throw error;
  }
}

/** A process of bench/discovery-servers.ts serving many light MCP servers on one port. */
export async function startFixture(
  era: 'modern' | 'legacy',
  options: { tools?: number; catalog?: boolean; latencyMs?: number } = {},
): Promise<{ child: ChildProcess; port: number }> {
  const script = join(import.meta.dirname, 'discovery-servers.ts');
  const args = [
    script,
    era,
    ...(options.tools === undefined ? [] : [`--tools=${options.tools}`]),
    ...(options.catalog ? ['--catalog'] : []),
    ...(options.latencyMs ? [`--latency=${options.latencyMs}`] : []),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  const port = Number(/listening (\d+)/.exec(chunk.toString())?.[1]);
  if (!Number.isInteger(port)) throw new Error(`fixture did not start: ${chunk.toString()}`);
  return { child, port };
}

export async function stopFixtures(fixtures: { child: ChildProcess }[]): Promise<void> {
  const running = fixtures.map(({ child }) => child).filter((child) => child.exitCode === null);
  const exited = running.map((child) => once(child, 'exit'));
  for (const child of running) child.kill('SIGTERM');
  await Promise.all(exited);
}
