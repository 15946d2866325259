/**
 * Where the control plane's CPU goes, by what it does: Go CPU profiles of kube-apiserver and
 * kube-controller-manager (their /debug/pprof, see ControlPlane's `profiling`) recorded over a
 * bench phase, and each sample put in the category of the nearest frame on its stack that names
 * one (watch cache, field managers, admission, CEL, etcd, authentication, …), so that a category
 * counts what it calls (JSON, reflection, allocation) unless that has a category of its own.
 *
 * The categories' shares are scaled to the CPU seconds /proc counted for each process over the
 * phase, so that the small gaps between profiles and the last one cut short do not count as
 * work not done. Profiles are read with `go tool pprof -traces` (Go is the control plane's
 * toolchain; pprof's protobuf is not worth a parser of our own).
 *
 *   node bench/control-plane-profile.ts <dir> [--top=15]
 *
 * reads the profiles and <dir>/profiles.json that bench:controller's --profile-control-plane=<dir>
 * leaves, and prints per component a table of CPU milliseconds per server by category, for the
 * floor, the operator phase and their difference, then the functions (self time) of the samples
 * no category claimed.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ProfileTarget } from '../test/cluster/control-plane.ts';
import { reportArgs } from './report-args.ts';

/** Long enough that the gap between profiles is negligible, short enough to lose little at the end. */
const CHUNK_SECONDS = 5;

const MANIFEST = 'profiles.json';

/**
 * One phase's profiles and the CPU seconds /proc counted meanwhile, by component, and the
 * requests the API server served meanwhile (apiserver_request_total), by verb and resource.
 */
export interface ProfiledPhase {
  phase: string;
  cpuSeconds: Record<string, number>;
  files: Record<string, string[]>;
  requests: Record<string, number>;
}

export interface ProfileManifest {
  /** Servers in the run: the tables are per server. */
  n: number;
  phases: ProfiledPhase[];
}

/** GET of a binary body over HTTPS, abortable. */
function download(url: string, tls: ProfileTarget['tls'], signal: AbortSignal): Promise<Buffer> {
  const options =
    tls === 'insecure' ? { rejectUnauthorized: false } : { ...tls, rejectUnauthorized: true };
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        if (res.statusCode === 200) resolve(body);
        else
          reject(new Error(`GET ${url}: HTTP ${res.statusCode} ${body.toString().slice(0, 300)}`));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Requests an API server has served, by `VERB resource[/subresource]`, from its
 * apiserver_request_total counters (Prometheus text format).
 */
export function requestCounts(metrics: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [, labels, value] of metrics.matchAll(/^apiserver_request_total\{(.*)\} (\S+)$/gm)) {
    const label = (name: string) => new RegExp(`(?:^|,)${name}="([^"]*)"`).exec(labels!)?.[1] ?? '';
    const subresource = label('subresource');
    const key = `${label('verb')} ${label('resource')}${subresource === '' ? '' : `/${subresource}`}`;
    counts[key] = (counts[key] ?? 0) + Number(value);
  }
  return counts;
}

async function servedRequests(target: ProfileTarget): Promise<Record<string, number>> {
  const metrics = await download(`${target.url}/metrics`, target.tls, new AbortController().signal);
  return requestCounts(metrics.toString());
}

/**
 * Records back-to-back CPU profiles of each target into `dir` while `work` runs; the one in
 * flight when it ends is aborted (Go's handler stops profiling when the client goes). Returns the
 * files by component name, and the requests the API server (the first target) served meanwhile.
 */
export async function profiledDuring<T>(
  targets: readonly ProfileTarget[],
  dir: string,
  phase: string,
  work: () => Promise<T>,
): Promise<{ result: T; files: Record<string, string[]>; requests: Record<string, number> }> {
  await mkdir(dir, { recursive: true });
  const apiserver = targets.find((target) => target.name === 'kube-apiserver');
  const before = apiserver === undefined ? {} : await servedRequests(apiserver);
  const stop = new AbortController();
  const files: Record<string, string[]> = {};
  const loops = targets.map(async ({ name, url, tls }) => {
    const written: string[] = (files[name] = []);
    for (let chunk = 0; !stop.signal.aborted; chunk++) {
      const profile = await download(
        `${url}/debug/pprof/profile?seconds=${CHUNK_SECONDS}`,
        tls,
        stop.signal,
      ).catch((err: unknown) => {
        if (stop.signal.aborted) return undefined;
        throw err;
      });
      if (profile === undefined) return;
      const file = join(dir, `${phase}-${name}-${String(chunk).padStart(3, '0')}.pb.gz`);
      await writeFile(file, profile);
      written.push(file);
    }
  });
  // A profile that fails (the component died) fails the phase, but only once the work is done.
  const recording = Promise.all(loops);
  recording.catch(() => stop.abort());
  try {
    const result = await work();
    stop.abort();
    await recording;
    const after = apiserver === undefined ? {} : await servedRequests(apiserver);
    const requests = Object.fromEntries(
      Object.entries(after).map(([key, count]) => [key, count - (before[key] ?? 0)]),
    );
    return { result, files, requests };
  } finally {
    stop.abort();
  }
}

export async function writeManifest(dir: string, manifest: ProfileManifest): Promise<void> {
  await writeFile(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * Categories, tried in this order on each frame from the leaf up; a name with `$1` takes the
 * pattern's first group. Packages every layer uses (runtime allocation, reflection, JSON, the
 * serializers of apimachinery) name none, so their samples go to the code that called them.
 */
const CATEGORIES: [name: string, pattern: RegExp][] = [
  [
    'Go garbage collection',
    /^runtime\.(gcBgMarkWorker|gcAssistAlloc|gcDrain|bgsweep|bgscavenge|markroot|scanobject|gcStart|sweepone|gcMarkDone|gcMarkTermination|wbBufFlush|gcWriteBarrier)/,
  ],
  [
    'Go scheduler, timers, idle',
    /^runtime\.(schedule|findRunnable|findrunnable|mstart|park_m|sysmon|mcall|goexit0|netpoll|stopm)\b/,
  ],
  ['profiling itself', /^runtime\/pprof\.|^runtime\.(sigprof|profileLoop)/],
  // A server-side apply's body is YAML (application/apply-patch+yaml), JSON or not: the API
  // server parses it with a YAML parser, several times slower than its JSON decoder.
  ['apply: YAML parse of the body', /^sigs\.k8s\.io\/yaml\./],
  // Each ClusterIP allocation lists every IPAddress: its cost grows with the Services that exist.
  ['Service ClusterIP allocation', /registry\/core\/service\/ipallocator/],
  [
    'field managers, managedFields (SSA)',
    /sigs\.k8s\.io\/structured-merge-diff|\/fieldmanager\b|\/fieldmanager\.|\/managedfields\b|\/managedfields\./,
  ],
  ['CEL', /github\.com\/google\/cel-go|\/pkg\/cel\b|\/pkg\/cel\.|\/schema\/cel\b|\/schema\/cel\./],
  [
    'CRD schema: validation, defaulting, pruning',
    /kube-openapi\/pkg\/validation|apiextensions-apiserver\/pkg\/apiserver\/(schema|validation)/,
  ],
  ['admission', /k8s\.io\/apiserver\/pkg\/admission|k8s\.io\/kubernetes\/plugin\/pkg\/admission/],
  [
    'validation (built-in kinds, object meta)',
    /k8s\.io\/kubernetes\/pkg\/apis\/[\w/]+\/validation|apimachinery\/pkg\/api\/validation|apimachinery\/pkg\/util\/validation|apiserver\/pkg\/registry\/rest\.Before/,
  ],
  [
    'watch: serve to clients (encode, send)',
    /endpoints\/handlers\.(\(\*WatchServer\)|serveWatch|\(\*watchEncoder\)|\(\*watchEmbeddedEncoder\))/,
  ],
  ['watch cache (cacher: dispatch, filter)', /k8s\.io\/apiserver\/pkg\/storage\/cacher/],
  ['etcd: watch stream (decode)', /storage\/etcd3\.\(\*watchChan\)|storage\/etcd3\.\(\*watcher\)/],
  ['etcd3 store (requests)', /k8s\.io\/apiserver\/pkg\/storage\/etcd3/],
  [
    'etcd client (gRPC)',
    /go\.etcd\.io\/etcd\/client|google\.golang\.org\/grpc|google\.golang\.org\/protobuf/,
  ],
  [
    // The x509 authenticator verifies the client certificate's chain on every request.
    'authentication',
    /k8s\.io\/apiserver\/pkg\/authentication|plugin\/pkg\/auth\/authenticator|kubernetes\/pkg\/serviceaccount|filters\.[wW]ithAuthentication/,
  ],
  [
    'authorization (RBAC, Node)',
    /k8s\.io\/apiserver\/pkg\/authorization|plugin\/pkg\/auth\/authorizer|filters\.[wW]ithAuthorization/,
  ],
  [
    'priority and fairness',
    /k8s\.io\/apiserver\/pkg\/util\/flowcontrol|filters\.[wW]ithPriorityAndFairness/,
  ],
  [
    'audit, metrics, tracing, logs',
    /k8s\.io\/apiserver\/pkg\/audit|component-base\/metrics|prometheus|go\.opentelemetry|k8s\.io\/klog|endpoints\/metrics|component-base\/tracing/,
  ],
  [
    'conversion, defaulting (built-in kinds)',
    /apimachinery\/pkg\/conversion|\.Convert_|\.SetDefaults_|\.SetObjectDefaults_|\/defaulting\b/,
  ],
  [
    'requests: encode the response',
    /endpoints\/handlers\/responsewriters|endpoints\/handlers\.transformResponseObject/,
  ],
  [
    'CRD handler (custom resources, other)',
    /apiextensions-apiserver\/pkg\/(apiserver|registry|controller)/,
  ],
  [
    'requests: decode, strategy, registry (other)',
    /k8s\.io\/apiserver\/pkg\/endpoints\/handlers|k8s\.io\/apiserver\/pkg\/registry|k8s\.io\/kubernetes\/pkg\/registry/,
  ],
  ['controller: $1', /k8s\.io\/kubernetes\/pkg\/controller\/(\w+)/],
  [
    'informers: watch decode and cache',
    /client-go\/tools\/cache|client-go\/informers|client-go\/rest\/watch|apimachinery\/pkg\/watch/,
  ],
  ['client requests (client-go)', /k8s\.io\/client-go\/rest|k8s\.io\/client-go\/util\/flowcontrol/],
  [
    'request filters and HTTP handler chain (other)',
    /k8s\.io\/apiserver\/pkg\/(endpoints|server)\/filters|k8s\.io\/apiserver\/pkg\/server\b|k8s\.io\/apiserver\/pkg\/server\./,
  ],
  [
    // Not crypto/ as a whole: crypto/x509 under the x509 authenticator is authentication.
    'HTTP/1.1, HTTP/2, TLS, network',
    /^golang\.org\/x\/net\/http2|^net\/http|^crypto\/tls|^net\.|^internal\/poll|^syscall\./,
  ],
];

const OTHER = 'other';

/** The category of a stack, leaf first. */
export function categoryOf(stack: readonly string[]): string {
  for (const frame of stack) {
    for (const [name, pattern] of CATEGORIES) {
      const match = pattern.exec(frame);
      if (match !== null) return name.replace('$1', match[1] ?? '');
    }
  }
  return OTHER;
}

/**
 * The request handler a stack runs in, by verb, and whether for a custom resource (the
 * MCPServers, the only CRD of the bench's cluster). Frames are matched without their package:
 * the API server runs a write in a goroutine of its own (handlers/finisher), whose frames are
 * the handler's closures, named after the package that inlined them (the CRD handler's). A
 * watch's setup (until its first event) is told as a list: the API server serves both in one.
 * A write of a custom resource is told by any frame of apiextensions-apiserver (its handler, its
 * REST storage). Samples outside requests (the HTTP/2 connection's framing and TLS, the watch
 * cache's dispatch, the Go runtime's collector) serve every request: see the categories.
 */
const VERBS: [verb: string, pattern: RegExp][] = [
  // Before list: ListResource serves a watch too, and calls serveWatch.
  ['watch', /\(\*WatchServer\)|\bserveWatch|\(\*watchEncoder\)|\(\*watchEmbeddedEncoder\)/],
  ['create', /\b(CreateResource|CreateNamedResource|createHandler)\b/],
  ['patch', /\bPatchResource\b|\(\*patcher\)/],
  ['update', /\bUpdateResource\b/],
  ['get', /\b(GetResource|getResourceHandler)\b/],
  ['list', /\bListResource\b/],
  ['delete', /\b(DeleteResource|DeleteCollection)\b/],
];

export const OUTSIDE_HANDLERS = 'outside requests';
export const IN_FILTERS = 'a request, in its filters (no handler yet)';
export const CUT = 'a request, stack cut before its handler';

/**
 * Go records at most 64 frames of a CPU sample's stack (runtime: maxCPUProfStack), the leaf's;
 * the API server's handler chain is deeper than that, so a deep sample may have lost the frames
 * that tell its handler.
 */
const MAX_FRAMES = 64;

const FILTERS =
  /k8s\.io\/apiserver\/pkg\/(server|endpoints)\/(filters|filterlatency)|handlers\/finisher/;

export function handlerOf(stack: readonly string[]): string {
  const verb = VERBS.find(([, pattern]) => stack.some((frame) => pattern.test(frame)))?.[0];
  if (verb !== undefined) {
    const custom = stack.some((frame) => frame.includes('k8s.io/apiextensions-apiserver/'));
    return `${verb}, ${custom ? 'custom resource' : 'built-in kind'}`;
  }
  if (stack.length >= MAX_FRAMES) return CUT;
  return stack.some((frame) => FILTERS.test(frame)) ? IN_FILTERS : OUTSIDE_HANDLERS;
}

/** One stack of `go tool pprof -traces` and its CPU seconds. */
export interface Trace {
  seconds: number;
  stack: string[];
}

const UNITS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  ms: 1e-3,
  s: 1,
  mins: 60,
  hrs: 3600,
};

/**
 * Parses `go tool pprof -traces`: blocks between rule lines, the first line of each holding the
 * sample's value (e.g. `10ms`) and the leaf function, the following lines its callers.
 */
export function parseTraces(text: string): Trace[] {
  const traces: Trace[] = [];
  for (const block of text.split(/^-+\+-+$/m).slice(1)) {
    const lines = block.split('\n').filter((line) => line.trim() !== '');
    const first = /^\s*([\d.]+)(ns|us|µs|ms|s|mins|hrs)\s+(.*)$/.exec(lines[0] ?? '');
    if (first === null) continue;
    const stack = [first[3]!.trim(), ...lines.slice(1).map((line) => line.trim())];
    // pprof marks inlined frames with "(inline)"; the function is the same either way.
    traces.push({
      seconds: Number(first[1]) * UNITS[first[2]!]!,
      stack: stack.map((frame) => frame.replace(/\s+\(inline\)$/, '')),
    });
  }
  return traces;
}

const execFileAsync = promisify(execFile);

/** The samples of some profiles, merged by pprof. */
async function traces(files: readonly string[]): Promise<Trace[]> {
  if (files.length === 0) return [];
  const { stdout } = await execFileAsync(
    'go',
    ['tool', 'pprof', '-traces', '-symbolize=none', ...files],
    { maxBuffer: 1 << 30 },
  );
  return parseTraces(stdout);
}

export interface Categorized {
  /** CPU seconds the samples hold. */
  sampled: number;
  byCategory: Map<string, number>;
  /** Self time of the leaf functions of samples no category claimed. */
  unclaimed: Map<string, number>;
}

export function categorize(
  all: readonly Trace[],
  classify: (stack: readonly string[]) => string = categoryOf,
): Categorized {
  const result: Categorized = { sampled: 0, byCategory: new Map(), unclaimed: new Map() };
  for (const { seconds, stack } of all) {
    result.sampled += seconds;
    const category = classify(stack);
    result.byCategory.set(category, (result.byCategory.get(category) ?? 0) + seconds);
    if (category === OTHER) {
      const leaf = stack[0]!;
      result.unclaimed.set(leaf, (result.unclaimed.get(leaf) ?? 0) + seconds);
    }
  }
  return result;
}

/** Milliseconds per server of each category, scaled to the CPU /proc counted in the phase. */
function perServer(categorized: Categorized, cpuSeconds: number, n: number): Map<string, number> {
  const scale = categorized.sampled > 0 ? cpuSeconds / categorized.sampled : 0;
  return new Map(
    [...categorized.byCategory].map(([name, seconds]) => [name, (1000 * seconds * scale) / n]),
  );
}

const fixed = (x: number, width: number) => x.toFixed(1).padStart(width);
const header = (title: string, first: string, second: string) =>
  `${title.padEnd(48)} ${first.padStart(8)} ${second.padStart(9)} ${'difference'.padStart(11)}`;
const row = (name: string, values: number[]) =>
  `${name.padEnd(48)} ${fixed(values[0]!, 8)} ${fixed(values[1]!, 9)} ${fixed(values[2]!, 11)}`;

/** Two phases and their difference per category, largest difference first. */
function table(
  title: string,
  phases: { phase: string; traces: Trace[]; cpuSeconds: number }[],
  n: number,
  classify: (stack: readonly string[]) => string,
): { lines: string[]; categorized: Categorized[] } {
  const categorized = phases.map(({ traces }) => categorize(traces, classify));
  const ms = categorized.map((c, i) => perServer(c, phases[i]!.cpuSeconds, n));
  const [floor, operator] = ms as [Map<string, number>, Map<string, number>];
  const names = [...new Set([...floor.keys(), ...operator.keys()])];
  const rows = names
    .map((name) => {
      const [a, b] = [floor.get(name) ?? 0, operator.get(name) ?? 0];
      return { name, values: [a, b, b - a] };
    })
    .sort((x, y) => y.values[2]! - x.values[2]!);
  const total = (m: Map<string, number>) => [...m.values()].reduce((x, y) => x + y, 0);
  const [ta, tb] = [total(floor), total(operator)];
  return {
    lines: [
      header(title, phases[0]!.phase, phases[1]!.phase),
      ...rows.map(({ name, values }) => row(name, values)),
      row('total', [ta, tb, tb - ta]),
    ],
    categorized,
  };
}

/**
 * Requests the API server served per server, one phase against the next: the cluster's own
 * writes (status updates of Deployments, ReplicaSets, Pods) vary with timing, and with them its
 * CPU. Rows of fewer than 0.05 per server in both phases are left out.
 */
function servedTable(phases: ProfiledPhase[], n: number): string[] {
  const [floor, operator] = phases.map((phase) => phase.requests ?? {});
  const keys = [...new Set([...Object.keys(floor!), ...Object.keys(operator!)])];
  const [first, second] = phases.map(({ phase }) => phase) as [string, string];
  const fixed2 = (x: number, width: number) => x.toFixed(2).padStart(width);
  const rows = keys
    .map((key) => {
      const [a, b] = [(floor![key] ?? 0) / n, (operator![key] ?? 0) / n];
      return { key, a, b };
    })
    .filter(({ a, b }) => a >= 0.05 || b >= 0.05)
    .sort((x, y) => y.b - y.a - (x.b - x.a));
  return [
    header('requests served per server', first, second),
    ...rows.map(
      ({ key, a, b }) => `${key.padEnd(48)} ${fixed2(a, 8)} ${fixed2(b, 9)} ${fixed2(b - a, 11)}`,
    ),
  ];
}

/**
 * The report of a manifest's phases, each against the one before (floor, operator; or floor,
 * least operator, operator): per component, CPU ms per server by category and, for the API
 * server, by request (verb and kind); then what no category claimed in the later phase.
 */
export async function profileReport(dir: string, top = 15): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as ProfileManifest;
  if (manifest.phases.length < 2) throw new Error(`${dir}/${MANIFEST} holds fewer than two phases`);
  const lines: string[] = [];
  for (let i = 1; i < manifest.phases.length; i++) {
    lines.push(
      ...(await comparison(manifest.phases[i - 1]!, manifest.phases[i]!, manifest.n, top)),
    );
  }
  return lines;
}

async function comparison(
  first: ProfiledPhase,
  second: ProfiledPhase,
  n: number,
  top: number,
): Promise<string[]> {
  const lines: string[] = [];
  for (const component of Object.keys(first.files)) {
    const phases = await Promise.all(
      [first, second].map(async (phase) => ({
        phase: phase.phase,
        traces: await traces(phase.files[component] ?? []),
        cpuSeconds: phase.cpuSeconds[component] ?? 0,
      })),
    );
    const byCategory = table('category', phases, n, categoryOf);
    const coverage = byCategory.categorized.map((c, i) =>
      ((100 * c.sampled) / phases[i]!.cpuSeconds).toFixed(0),
    );
    lines.push(
      `${component}: CPU ms per server (N=${n}); CPU ${phases[0]!.cpuSeconds.toFixed(1)} s ${first.phase}, ${phases[1]!.cpuSeconds.toFixed(1)} s ${second.phase}; profiles sampled ${coverage[0]}% / ${coverage[1]}% of it`,
      ...byCategory.lines,
    );
    // The API server's requests are the ones the bench makes; the others serve only /healthz.
    if (component === 'kube-apiserver') {
      lines.push('', ...table('request', phases, n, handlerOf).lines);
      lines.push('', ...servedTable([first, second], n));
    }
    const unclaimed = [...byCategory.categorized[1]!.unclaimed]
      .sort((x, y) => y[1] - x[1])
      .slice(0, top);
    if (unclaimed.length > 0) {
      lines.push(`  ${OTHER} in the ${second.phase} phase, self CPU seconds by function:`);
      for (const [fn, seconds] of unclaimed)
        lines.push(`  ${seconds.toFixed(2).padStart(7)} ${fn}`);
    }
    lines.push('');
  }
  return lines;
}

async function main(): Promise<void> {
  const { input: dir, top } = reportArgs(
    process.argv.slice(2),
    'node bench/control-plane-profile.ts <dir> [--top=15]',
    15,
  );
  for (const line of await profileReport(dir, top)) console.log(line);
}

if (import.meta.main) await main();
