/**
 * Bridge benchmark: the same stdio MCP server reached six ways in the same run:
 *
 *   direct      the client spawns the server and speaks stdio itself (the floor)
 *   bridge      `mcp-operator bridge`, PerSession (one child per session) and Shared
 *   bridge pod  PerSession as it runs in a pod: children started by supervisor.sh (run by the
 *               static busybox) and reached over FIFOs in a shared directory (--supervisor-dir)
 *   bridge forwarded  two PerSession replicas (--peers): sessions opened on one, every call
 *               sent to the other, which forwards it (the worst case of spec.replicas > 1)
 *   supergateway  `supergateway --outputTransport streamableHttp --stateful` (one child per session)
 *   bridge proxy  the bridge with --upstream in front of the same server serving HTTP itself,
 *               next to direct HTTP to it (`--only proxy` runs just these)
 *   relay floor  the least a node:http front can do (bench/relay-floor.ts): what is left of
 *               the gap to direct stdio once the bridge's own work is taken away; `relay floor
 *               net` the same on node:net, `relay floor uWS` on uWebSockets.js (BENCH_UWS)
 *
 * It prints requests/s and p50/p99 latency of `tools/call` at 1, 16 and 128 concurrent
 * sessions (each session a closed loop of calls), the CPU time per call of the HTTP server
 * process itself (user + system, from /proc) and of this load generator (on a loaded machine
 * each process gets a share of the cores, so whichever needs the most CPU per call bounds the
 * throughput), the goals as ratios, the same calls from clients of revision 2026-07-28
 * (stateless: no session, every call self-contained) through the bridge and supergateway,
 * session setup time with and without the warm pool, and memory per idle session. Every
 * server runs as its own process; the load comes from
 * a lean client (undici with keep-alive, or stdio lines) so that client cost is the same
 * for every HTTP target.
 *
 *   node bench/bridge.ts [--seconds 3] [--sessions 1,16,128] [--only <target,…>] [--throughput-only]
 *                        [--base <cli.ts of another build>]
 *
 * --base measures another build of the bridge (an unpacked `git archive` of a commit, say) as
 * rows `base PerSession`, `base Shared` and `base pod` (that build's bridge and supervisor.sh),
 * each next to the same row of this build, in turn after and before it: a change is judged
 * against the build before it in the same run, under the same load.
 *
 * BENCH_BRIDGE_NODE_OPTIONS is passed to the bridge processes (e.g. `--cpu-prof`); with
 * BENCH_BRIDGE_OUTPUT (a file) their stdout and stderr are appended there (e.g. `--trace-gc`).
 *
 * Each cell measures its target alone: it starts once the processes of the cell before are gone
 * (re-parented orphans included), measures after a warm-up long enough for V8 to optimise the
 * hot paths of a freshly started server, and reports the CPU of everything else on the machine
 * ("others"), so a cell that shared the cores with something is visible as such. The whole
 * bench runs in a CPU cgroup of its own when the machine would otherwise schedule it by
 * autogroup (bench/processes.ts ownCpuGroup): there, every MCP server the bridge starts in a
 * session of its own would get the CPU share of the bridge and the client together.
 *
 * The stdio server for throughput is the Go SDK's conformance everything-server (small, so 128
 * copies fit in memory); for setup time it is server-everything from npm, whose Node start-up
 * is what a warm pool hides. Goals, as ratios within the run: added p50 at 1 session under
 * 0.25 ms over direct stdio; PerSession throughput at least 0.75x direct stdio's at 16 sessions
 * and more; p99 within 1.5x of direct stdio's; at least 2.5x supergateway's throughput.
 * Needs /bin/busybox (Debian's busybox-static) or BENCH_BUSYBOX for the pod row.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { openSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { installBridgeFiles } from '../src/bridge/install.ts';
import {
  BUSYBOX_FILE,
  SUPERVISOR_FILE,
  SUPERVISOR_GRACE_ENV,
  supervisedCommand,
} from '../src/bridge/pod-contract.ts';
import { everythingServer } from '../test/bridge/go-server.ts';
import { cpuSeconds } from './harness.ts';
import { CALL, INITIALIZE, INITIALIZED } from './mcp-messages.ts';
import {
  cpuBetween,
  ownCpuGroup,
  processTree,
  quiet,
  sampleCpu,
  startedProcesses,
  stopStartedOnExit,
  treeRssMiB,
  waitGone,
} from './processes.ts';
import { CLI } from '../test/support/cli.ts';
import { freePort } from '../test/support/ports.ts';
import { Jaeger } from '../test/support/jaeger.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    sessions: { type: 'string', default: '1,16,128' },
    only: { type: 'string' },
    'throughput-only': { type: 'boolean', default: false },
    base: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const CONCURRENCY = values.sessions.split(',').map(Number);
/** Runs only the targets whose name contains one of these, comma-separated (profiling one). */
const ONLY = values.only;
const selected = (name: string) =>
  ONLY === undefined || ONLY.split(',').some((part) => name.includes(part));
const BASE_CLI = values.base;
const NODE = process.execPath;
const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const SUPERGATEWAY = root('node_modules/supergateway/dist/index.js');
const EVERYTHING = [
  NODE,
  root('node_modules/@modelcontextprotocol/server-everything/dist/index.js'),
  'stdio',
];

/** One MCP session as the bench drives it. */
interface Session {
  call(): Promise<void>;
  close(): Promise<void>;
}

// --- clients -----------------------------------------------------------------------------

class StdioSession implements Session {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, () => void>();
  #next = 1;
  #buffer = '';

  constructor(command: string[]) {
    this.#child = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'ignore'] });
    this.#child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.#buffer += chunk;
      for (let nl = this.#buffer.indexOf('\n'); nl !== -1; nl = this.#buffer.indexOf('\n')) {
        const message = JSON.parse(this.#buffer.slice(0, nl)) as { id?: number };
        this.#buffer = this.#buffer.slice(nl + 1);
        if (typeof message.id === 'number') this.#waiting.get(message.id)?.();
      }
    });
  }

  static async open(command: string[]): Promise<StdioSession> {
    const session = new StdioSession(command);
    await session.#send('initialize', INITIALIZE.params);
    session.#child.stdin!.write(`${JSON.stringify(INITIALIZED)}\n`);
    return session;
  }

  call(): Promise<void> {
    return this.#send('tools/call', CALL);
  }

  #send(method: string, params: unknown): Promise<void> {
    const id = this.#next++;
    const done = new Promise<void>((resolve) => this.#waiting.set(id, resolve));
    this.#child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return done.finally(() => this.#waiting.delete(id));
  }

  async close(): Promise<void> {
    const exited = once(this.#child, 'exit');
    this.#child.stdin!.end();
    await exited;
  }
}

/**
 * The HTTP load client of every HTTP row: undici's dispatcher, driven with a bare handler (no
 * body stream, no response object), a keep-alive connection per call in flight, no
 * pipelining. Its CPU per call is part of every HTTP row's latency and competes with the
 * server for the cores. Against a server with a fixed answer, 16 loops, it cost 30 µs a call
 * where node:http's client cost 98 and undici's `request` (a body stream per call) 59; at one
 * loop all three cost about 90, most of it a turn of the event loop per call. In this bench,
 * under load, it costs a fifth to a half less than node:http's client with 16 and 128
 * sessions, about as much with one.
 */
const agent = new Agent({ connections: null, pipelining: 1, keepAliveTimeout: 60_000 });

const POST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request; resolves with the whole answer. */
function send(
  url: URL,
  method: 'POST' | 'DELETE',
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status = 0;
    let received: Answer['headers'] = {};
    agent.dispatch(
      { origin: url.origin, path: url.pathname, method, headers, body: body ?? null },
      {
        // Required by undici although there is nothing to do when the request starts.
        onRequestStart: () => undefined,
        onResponseStart(_controller, statusCode, responseHeaders) {
          status = statusCode;
          received = responseHeaders;
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          resolve({ status, headers: received, text: Buffer.concat(chunks).toString('utf8') });
        },
        onResponseError(_controller, error) {
          reject(error);
        },
      },
    );
  });
}

async function post(
  url: URL,
  body: unknown,
  session?: string,
  extraHeaders: Record<string, string> = {},
): Promise<{ session?: string; text: string }> {
  const headers: Record<string, string> = { ...POST_HEADERS, ...extraHeaders };
  if (session) headers['mcp-session-id'] = session;
  const answer = await send(url, 'POST', headers, JSON.stringify(body));
  if (answer.status >= 300) throw new Error(`HTTP ${answer.status}: ${answer.text}`);
  const id = answer.headers['mcp-session-id'];
  return { session: Array.isArray(id) ? id[0] : id, text: answer.text };
}

class HttpSession implements Session {
  readonly #url: URL;
  readonly #id: string;
  #next = 1;

  private constructor(url: string, id: string) {
    this.#url = new URL(url);
    this.#id = id;
  }

  static async open(url: string): Promise<HttpSession> {
    const init = await post(new URL(url), INITIALIZE);
    if (!init.session) throw new Error(`no session id from ${url}`);
    await post(new URL(url), { jsonrpc: '2.0', method: 'notifications/initialized' }, init.session);
    return new HttpSession(url, init.session);
  }

  /** The same session, its requests sent to another replica (which forwards them). */
  reachedAt(url: string): HttpSession {
    return new HttpSession(url, this.#id);
  }

  async call(): Promise<void> {
    const { text } = await post(
      this.#url,
      { jsonrpc: '2.0', id: this.#next++, method: 'tools/call', params: CALL },
      this.#id,
    );
    if (!text.includes('"result"')) throw new Error(`unexpected answer: ${text.slice(0, 200)}`);
  }

  async close(): Promise<void> {
    await send(this.#url, 'DELETE', { 'mcp-session-id': this.#id });
  }
}

/**
 * A client of revision 2026-07-28: no session, each call carries its version and capabilities
 * in `_meta` and mirrors method and name into headers (basic/transports/streamable-http).
 */
class StatelessClient implements Session {
  static readonly HEADERS = {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': CALL.name,
  };
  static readonly META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  };
  readonly #url: URL;
  #next = 1;

  constructor(url: string) {
    this.#url = new URL(url);
  }

  async call(): Promise<void> {
    const params = { ...CALL, _meta: StatelessClient.META };
    const { text } = await post(
      this.#url,
      { jsonrpc: '2.0', id: this.#next++, method: 'tools/call', params },
      undefined,
      StatelessClient.HEADERS,
    );
    if (!text.includes('"complete"')) throw new Error(`unexpected answer: ${text.slice(0, 200)}`);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

// --- servers -----------------------------------------------------------------------------

interface Target {
  name: string;
  /** The MCP endpoint of an HTTP target. */
  url?: string;
  open(): Promise<Session>;
  stop(): Promise<void>;
  /** The target's HTTP server process, for memory and CPU measurements. */
  pid?: number;
}

async function httpTarget(
  name: string,
  argv: (port: number) => string[],
  path = '/mcp',
  port?: number,
): Promise<Target> {
  port ??= await freePort();
  const args = argv(port);
  const output = process.env.BENCH_BRIDGE_OUTPUT;
  const log = output === undefined ? 'ignore' : openSync(output, 'a');
  const child = spawn(args[0]!, args.slice(1), { stdio: ['ignore', log, log] });
  const url = `http://127.0.0.1:${port}${path}`;
  for (let i = 0; ; i++) {
    const up = await fetch(url, { method: 'OPTIONS' }).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (i > 200) throw new Error(`${name} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const exited = once(child, 'exit');
  return {
    name,
    url,
    pid: child.pid,
    open: () => HttpSession.open(url),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** argv of a bridge process on `port`, with the flags every bridge row shares. */
const bridgeArgv = (port: number, args: string[], cli = CLI) => [
  NODE,
  ...(process.env.BENCH_BRIDGE_NODE_OPTIONS?.split(' ') ?? []),
  cli,
  'bridge',
  '--listen',
  `127.0.0.1:${port}`,
  '--max-sessions',
  '1000',
  '--log-level',
  'warn',
  ...args,
];

const bridge = (mode: string, command: string[], extra: string[] = [], port?: number) =>
  httpTarget(
    `bridge ${mode}`,
    (port) => bridgeArgv(port, ['--session-mode', mode, ...extra, '--', ...command]),
    '/mcp',
    port,
  );

/** The same bridge row, of the build given by --base. */
const baseBridge = (mode: string, command: string[], cli: string) =>
  httpTarget(
    `base ${mode}`,
    (port) => bridgeArgv(port, ['--session-mode', mode, '--', ...command], cli),
    '/mcp',
  );

/**
 * Each bridge row next to the same row of the --base build, when one is given: after it, or
 * before it on every other level. Order matters: with the same build on both rows, the second
 * of two cells measured back to back came out 1 to 20% cheaper per call.
 */
function withBase(
  makers: [string, () => Promise<Target> | Target][],
  server: string[],
  level: number,
): [string, () => Promise<Target> | Target][] {
  if (BASE_CLI === undefined) return makers;
  return makers.flatMap((maker) => {
    const mode = /^bridge (PerSession|Shared|pod)$/.exec(maker[0])?.[1];
    if (mode === undefined) return [maker];
    const base: [string, () => Promise<Target>] = [
      `base ${mode}`,
      () =>
        mode === 'pod' ? pod(server, 'base pod', BASE_CLI) : baseBridge(mode, server, BASE_CLI),
    ];
    return level % 2 === 0 ? [maker, base] : [base, maker];
  });
}

/** Two replicas that know each other; a session opens on the first, its calls go to the second. */
async function forwarded(command: string[]): Promise<Target> {
  const ports = [await freePort(), await freePort()];
  const peers = ports.map((port) => `127.0.0.1:${port}`).join(',');
  const [owner, front] = await Promise.all(
    ports.map((port) =>
      bridge(
        'PerSession',
        command,
        ['--replica-address', `127.0.0.1:${port}`, '--peers', peers],
        port,
      ),
    ),
  );
  return {
    name: 'bridge forwarded',
    open: async () => ((await owner!.open()) as HttpSession).reachedAt(front!.url!),
    stop: async () => void (await Promise.all([owner!.stop(), front!.stop()])),
  };
}

/**
 * The pod's two containers as local processes: the server command under supervisor.sh (run by
 * the static busybox, as the server container does) and the bridge in pod mode, sharing a
 * directory as they share the emptyDir. Both of the build whose entry point is `cli`.
 */
async function pod(command: string[], name = 'bridge pod', cli = CLI): Promise<Target> {
  const assets = await mkdtemp(join(tmpdir(), 'bench-assets-'));
  const dir = await mkdtemp(join(tmpdir(), 'bench-emptydir-'));
  await copyFile(process.env.BENCH_BUSYBOX ?? '/bin/busybox', join(assets, BUSYBOX_FILE));
  await copyFile(join(dirname(cli), 'bridge', SUPERVISOR_FILE), join(assets, SUPERVISOR_FILE));
  await installBridgeFiles(assets, dir);
  const [program, ...args] = supervisedCommand(command.slice(0, 1), command.slice(1), dir);
  // Its own process group, so stopping it reaches every server it started.
  const supervisor = spawn(program!, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
    env: { ...process.env, [SUPERVISOR_GRACE_ENV]: '1' },
  });
  const exited = once(supervisor, 'exit');
  let log = '';
  await new Promise<void>((resolve, reject) => {
    supervisor.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
      if (log.includes('ready to start')) resolve();
    });
    void exited.then(() => reject(new Error(`the supervisor exited: ${log}`)));
  });
  const target = await httpTarget(name, (port) =>
    bridgeArgv(port, ['--session-mode', 'PerSession', '--supervisor-dir', dir], cli),
  );
  return {
    ...target,
    async stop() {
      await target.stop();
      process.kill(-supervisor.pid!, 'SIGTERM');
      await exited;
      await Promise.all([assets, dir].map((path) => rm(path, { recursive: true, force: true })));
    },
  };
}

const supergateway = (command: string[]) =>
  httpTarget('supergateway', (port) => [
    NODE,
    SUPERGATEWAY,
    '--stdio',
    command.join(' '),
    '--outputTransport',
    'streamableHttp',
    '--stateful',
    '--port',
    String(port),
    '--logLevel',
    'none',
  ]);

/**
 * The least a front of a stdio server can do: on node:http (bench/relay-floor.ts), on node:net
 * (relay-floor-net.ts), on uWebSockets.js (relay-floor-uws.ts, with BENCH_UWS set).
 */
function relayFloors(command: string[]): [string, () => Promise<Target>][] {
  const fronts: [string, string][] = [
    ['relay floor', 'relay-floor.ts'],
    ['relay floor net', 'relay-floor-net.ts'],
  ];
  if (process.env.BENCH_UWS !== undefined) fronts.push(['relay floor uWS', 'relay-floor-uws.ts']);
  return fronts.map(([name, script]) => [
    name,
    () => httpTarget(name, (port) => [NODE, root(`bench/${script}`), String(port), ...command]),
  ]);
}

const direct = (command: string[]): Target => ({
  name: 'direct stdio',
  open: () => StdioSession.open(command),
  stop: () => Promise.resolve(),
});

// --- measurements ------------------------------------------------------------------------

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;

interface Throughput {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time of the target's own process per call, in µs (undefined: no such process). */
  cpuUs?: number;
  /** CPU time of every process the bench started per call, in µs: servers and MCP servers. */
  treeUs: number;
  /** CPU time of this load generator per call, in µs: what the client side costs. */
  clientUs: number;
  /** CPU used meanwhile by processes the bench did not start, in % of one core. */
  othersPercent: number;
}

/** The warm-up: long enough for V8 to optimise a fresh server's hot paths, and bounded. */
const WARM_UP = { minMs: 500, minCalls: 2000, maxMs: 5000 };

async function throughput(target: Target, sessions: number): Promise<Throughput> {
  const opened: Session[] = [];
  for (let i = 0; i < sessions; i += 16) {
    opened.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(16, sessions - i) }, () => target.open()),
      )),
    );
  }
  const latencies: number[] = [];
  let calls = 0;
  let measuring = false;
  let stop = false;
  const loop = async (session: Session) => {
    while (!stop) {
      const started = performance.now();
      await session.call();
      calls++;
      if (measuring) latencies.push(performance.now() - started);
    }
  };
  const loops = opened.map(loop);
  const warming = performance.now();
  while (
    performance.now() - warming < WARM_UP.maxMs &&
    (performance.now() - warming < WARM_UP.minMs || calls < WARM_UP.minCalls)
  )
    await new Promise((resolve) => setTimeout(resolve, 50));
  const cpu = () => (target.pid === undefined ? Promise.resolve(NaN) : cpuSeconds(target.pid));
  const cpuBefore = await cpu();
  const clientBefore = process.cpuUsage();
  const sampleBefore = sampleCpu();
  measuring = true;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  measuring = false;
  const elapsed = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const clientSeconds = (client.user + client.system) / 1e6;
  const split = cpuBetween(sampleBefore, sampleCpu(), clientSeconds);
  const cpuUsed = (await cpu()) - cpuBefore;
  stop = true;
  await Promise.all(loops);
  await Promise.all(opened.map((session) => session.close()));
  latencies.sort((a, b) => a - b);
  const perCall = (seconds: number) => (seconds / latencies.length) * 1e6;
  return {
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuUs: Number.isNaN(cpuUsed) ? undefined : perCall(cpuUsed),
    treeUs: perCall(split.started),
    clientUs: perCall(clientSeconds),
    othersPercent: split.othersPercent,
  };
}

/**
 * Stops a target and waits until every process it ran is gone (but those in `keep`, which
 * outlive it), so that none of them works while the next cell is measured.
 */
async function stopAlone(target: Target, keep: readonly number[] = []): Promise<void> {
  const ran = startedProcesses().filter((pid) => !keep.includes(pid));
  await target.stop();
  await waitGone(ran);
}

/** One cell: a fresh target, measured alone, stopped with all its processes. */
async function cell(make: () => Promise<Target> | Target, sessions: number) {
  await waitGone(startedProcesses());
  await quiet();
  const target = await make();
  const result = await throughput(target, sessions);
  await stopAlone(target);
  return result;
}

/** Median time to open a session (initialize + initialized), with a pause so a pool refills. */
async function setupTime(target: Target, count = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const started = performance.now();
    const session = await target.open();
    times.push(performance.now() - started);
    await session.close();
  }
  times.sort((a, b) => a - b);
  return percentile(times, 0.5);
}

async function memoryPerSession(target: Target, sessions: number): Promise<number> {
  const before = treeRssMiB(target.pid!);
  const opened = await Promise.all(Array.from({ length: sessions }, () => target.open()));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = treeRssMiB(target.pid!);
  await Promise.all(opened.map((session) => session.close()));
  return (after - before) / sessions;
}

/**
 * The 2026-07-28 column: the same calls from stateless clients (one closed loop per client, no
 * session) through the HTTP targets that serve them, next to the 2025-11-25 sessions measured
 * above in the same run.
 */
async function statelessColumn(server: string[], sessions: Map<string, Throughput>) {
  const makers: [string, () => Promise<Target> | Target][] = [
    ['bridge PerSession', () => bridge('PerSession', server)],
    // The same bridge with a span per call, all sampled, exported to a real Jaeger.
    ['bridge traced', () => traced(server)],
    ['bridge Shared', () => bridge('Shared', server)],
    ['supergateway', () => supergateway(server)],
  ];
  console.log('\n2026-07-28 clients (stateless calls) next to 2025-11-25 sessions, same run:');
  console.log(
    `${'target'.padEnd(20)}${'clients'.padStart(9)}${'2025 req/s'.padStart(12)}${'p50'.padStart(8)}${'2026 req/s'.padStart(12)}${'p50'.padStart(8)}${'p99'.padStart(8)}`,
  );
  for (const [level, clients] of CONCURRENCY.entries()) {
    for (const [name, make] of withBase(makers, server, level)) {
      if (!selected(name)) continue;
      const stateless = await cell(async () => {
        const target = await make();
        return { ...target, open: () => Promise.resolve(new StatelessClient(target.url!)) };
      }, clients);
      const session = sessions.get(`${name}/${clients}`);
      console.log(
        `${name.padEnd(20)}${String(clients).padStart(9)}${(session ? session.rps.toFixed(0) : '–').padStart(12)}${(session ? session.p50.toFixed(2) : '–').padStart(8)}${stateless.rps.toFixed(0).padStart(12)}${stateless.p50.toFixed(2).padStart(8)}${stateless.p99.toFixed(2).padStart(8)}`,
      );
    }
  }
}

// --- proxy mode --------------------------------------------------------------------------

/** The Go everything-server serving Streamable HTTP itself (stateful, like the bridge). */
const goHttp = (binary: string) =>
  httpTarget(
    'direct HTTP',
    (port) => [binary, '-http', `127.0.0.1:${port}`, '-stateless=false'],
    '/',
  );

/** The bridge in proxy mode in front of `upstream`, with every other flag as the rows above. */
const proxy = (upstream: string) =>
  httpTarget('bridge proxy', (port) => bridgeArgv(port, ['--upstream', upstream]));

/**
 * Proxy mode against direct HTTP to the same server process, in the same run: what the bridge
 * adds in front of a server that speaks HTTP itself (goal: under 1 ms p50 at 1 session).
 */
async function proxyMode(binary: string): Promise<void> {
  console.log('\nProxy mode: the Go everything-server serving HTTP, direct and behind the bridge');
  printHeader();
  const server = await goHttp(binary);
  for (const sessions of CONCURRENCY) {
    const direct = await throughput(server, sessions);
    printRow('direct HTTP', sessions, direct);
    const front = await proxy(server.url!);
    const proxied = await throughput(front, sessions);
    await stopAlone(front, processTree(server.pid!));
    printRow('bridge proxy', sessions, proxied);
    console.log(
      `  ${String(sessions).padStart(3)} sessions: proxy p50 - direct HTTP p50 = ${(proxied.p50 - direct.p50).toFixed(3)} ms; proxy/direct req/s = ${(proxied.rps / direct.rps).toFixed(2)}x`,
    );
  }
  await stopAlone(server);
}

// --- run ---------------------------------------------------------------------------------

/**
 * The goals as ratios within this run, for each bridge mode at each level: added p50 over direct
 * stdio (goal under 0.25 ms at 1 session), req/s against direct stdio (at least 0.75x at 16
 * sessions and more) and against supergateway (at least 2.5x), p99 against direct stdio's (at
 * most 1.5x). A cell a run did not measure is left out.
 */
function printGoals(results: Map<string, Throughput>): void {
  console.log('\nGoals as ratios (same run):');
  console.log(
    `${'target'.padEnd(20)}${'sessions'.padStart(9)}${'+p50 ms'.padStart(10)}${'/direct'.padStart(9)}${'p99/direct'.padStart(12)}${'/supergw'.padStart(10)}`,
  );
  for (const sessions of CONCURRENCY) {
    const direct = results.get(`direct stdio/${sessions}`);
    const gateway = results.get(`supergateway/${sessions}`);
    for (const mode of [
      'relay floor',
      'relay floor net',
      'relay floor uWS',
      'bridge PerSession',
      'base PerSession',
      'bridge Shared',
      'base Shared',
      'bridge pod',
      'base pod',
    ]) {
      const own = results.get(`${mode}/${sessions}`);
      if (own === undefined || direct === undefined) continue;
      const versusGateway = gateway === undefined ? '' : `${(own.rps / gateway.rps).toFixed(2)}x`;
      console.log(
        `${mode.padEnd(20)}${String(sessions).padStart(9)}${fmt(own.p50 - direct.p50, 3).padStart(10)}${`${(own.rps / direct.rps).toFixed(2)}x`.padStart(9)}${`${(own.p99 / direct.p99).toFixed(2)}x`.padStart(12)}${versusGateway.padStart(10)}`,
      );
    }
  }
}

const fmt = (n: number, digits = 2) => n.toFixed(digits).padStart(9);

/**
 * CPU per call: of the HTTP server process, of every process the bench started (the server
 * with its MCP servers, or direct stdio's servers), of the load generator; and the CPU others
 * on the machine used meanwhile, in % of a core.
 */
function printHeader(): void {
  console.log(
    `${'target'.padEnd(20)}${'sessions'.padStart(9)}${'req/s'.padStart(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'µs/req: server'.padStart(16)}${'+MCP'.padStart(7)}${'client'.padStart(8)}${'others %'.padStart(10)}`,
  );
}

function printRow(name: string, sessions: number, result: Throughput): void {
  const server = result.cpuUs === undefined ? '' : result.cpuUs.toFixed(0);
  console.log(
    `${name.padEnd(20)}${String(sessions).padStart(9)}${fmt(result.rps, 0).padStart(10)}${fmt(result.p50)}${fmt(result.p99)}${server.padStart(16)}${result.treeUs.toFixed(0).padStart(7)}${result.clientUs.toFixed(0).padStart(8)}${result.othersPercent.toFixed(0).padStart(10)}`,
  );
}

async function main(): Promise<void> {
  const server = [await everythingServer()];
  stopStartedOnExit();
  console.log(`Scheduling: ${ownCpuGroup()}`);
  console.log(
    `tools/call ${CALL.name} on the Go SDK everything-server, ${SECONDS} s per cell, closed loop per session\n`,
  );
  printHeader();
  const results = new Map<string, Throughput>();
  const makers: [string, () => Promise<Target> | Target][] = [
    ['direct stdio', () => direct(server)],
    ...relayFloors(server),
    ['bridge PerSession', () => bridge('PerSession', server)],
    // The same bridge with a span per call, all sampled, exported to a real Jaeger.
    ['bridge traced', () => traced(server)],
    ['bridge Shared', () => bridge('Shared', server)],
    ['bridge pod', () => pod(server)],
    ['bridge forwarded', () => forwarded(server)],
    ['supergateway', () => supergateway(server)],
  ];
  if (ONLY === 'proxy') {
    await proxyMode(server[0]!);
    return agent.close();
  }
  for (const [level, sessions] of CONCURRENCY.entries()) {
    for (const [name, make] of withBase(makers, server, level)) {
      if (!selected(name)) continue;
      const result = await cell(make, sessions);
      results.set(`${name}/${sessions}`, result);
      printRow(name, sessions, result);
    }
  }
  console.log('\nA forwarded call against a direct one (same run):');
  for (const sessions of CONCURRENCY) {
    const own = results.get(`bridge PerSession/${sessions}`);
    const other = results.get(`bridge forwarded/${sessions}`);
    if (own === undefined || other === undefined) continue;
    console.log(
      `  ${String(sessions).padStart(3)} sessions: forwarded p50 - bridge p50 = ${(other.p50 - own.p50).toFixed(3)} ms; forwarded/bridge req/s = ${(other.rps / own.rps).toFixed(2)}x`,
    );
  }
  printTracedRatios(results);
  printGoals(results);
  await statelessColumn(server, results);
  if (ONLY === undefined) await proxyMode(server[0]!);
  if (ONLY !== undefined || values['throughput-only']) return agent.close();

  console.log('\nSession setup (median of 5, server-everything from npm):');
  const setups: [string, () => Promise<Target> | Target][] = [
    ['direct stdio (spawn)', () => direct(EVERYTHING)],
    ['bridge, no warm pool', () => bridge('PerSession', EVERYTHING)],
    ['bridge, warm pool 2', () => bridge('PerSession', EVERYTHING, ['--warm-pool', '2'])],
    ['supergateway', () => supergateway(EVERYTHING)],
  ];
  for (const [name, make] of setups) {
    const target = await make();
    const ms = await setupTime(target);
    await stopAlone(target);
    console.log(`  ${name.padEnd(24)}${fmt(ms, 1)} ms`);
  }

  console.log('\nMemory per idle session (RSS of the server process tree, MiB):');
  const memory: [string, () => Promise<Target>, number][] = [
    ['bridge Shared (200)', () => bridge('Shared', server), 200],
    ['bridge PerSession (16)', () => bridge('PerSession', server), 16],
    ['supergateway (16)', () => supergateway(server), 16],
  ];
  for (const [name, make, count] of memory) {
    const target = await make();
    await (await target.open()).close(); // start whatever is shared first
    const mib = await memoryPerSession(target, count);
    await stopAlone(target);
    console.log(`  ${name.padEnd(24)}${fmt(mib, 3)} MiB`);
  }
  await agent.close();
}

/** The PerSession bridge exporting every span to a Jaeger of its own, stopped with it. */
async function traced(command: string[]): Promise<Target> {
  const jaeger = await Jaeger.start();
  const flags = ['--otlp-endpoint', jaeger.otlpUrl, '--trace-sampling', '1'];
  const target = await bridge('PerSession', command, flags);
  return {
    ...target,
    name: 'bridge traced',
    stop: async () => {
      await target.stop();
      await jaeger.stop();
    },
  };
}

/** Tracing on against off, same build and run (issue 29: at least 0.9x; at most +0.05 ms p50). */
function printTracedRatios(results: Map<string, Throughput>): void {
  console.log('\nTracing (sampling 1.0, OTLP to Jaeger) against off (same run):');
  for (const sessions of CONCURRENCY) {
    const off = results.get(`bridge PerSession/${sessions}`);
    const on = results.get(`bridge traced/${sessions}`);
    if (off === undefined || on === undefined) continue;
    console.log(
      `  ${String(sessions).padStart(3)} sessions: traced/off req/s = ${(on.rps / off.rps).toFixed(2)}x; traced p50 - off p50 = ${(on.p50 - off.p50).toFixed(3)} ms`,
    );
  }
}

await main();
