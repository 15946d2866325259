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
 *
 * It prints requests/s and p50/p99 latency of `tools/call` at 1, 16 and 128 concurrent
 * sessions (each session a closed loop of calls), the CPU time per call of the HTTP server
 * process itself (user + system, from /proc) and of this load generator (on a loaded machine
 * each process gets a share of the cores, so whichever needs the most CPU per call bounds the
 * throughput), the goals as ratios, the same calls from clients of revision 2026-07-28
 * (stateless: no session, every call self-contained) through the bridge and supergateway,
 * session setup time with and without the warm pool, and memory per idle session. Every
 * server runs as its own process; the load comes from
 * a minimal raw client (node:http keep-alive, or stdio lines) so that client cost is the same
 * for every HTTP target.
 *
 *   node bench/bridge.ts [--seconds 3] [--sessions 1,16,128] [--only <target>] [--throughput-only]
 *
 * BENCH_BRIDGE_NODE_OPTIONS is passed to the bridge processes (e.g. `--cpu-prof`).
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
import { readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { installBridgeFiles } from '../src/bridge/install.ts';
import {
  BUSYBOX_FILE,
  SUPERVISOR_FILE,
  SUPERVISOR_GRACE_ENV,
  supervisedCommand,
} from '../src/bridge/pod-contract.ts';
import { everythingServer } from '../test/bridge/go-server.ts';
import { cpuSeconds } from './harness.ts';
import { CLI } from '../test/support/cli.ts';
import { freePort } from '../test/support/ports.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    sessions: { type: 'string', default: '1,16,128' },
    only: { type: 'string' },
    'throughput-only': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.seconds);
const CONCURRENCY = values.sessions.split(',').map(Number);
/** Runs only the targets whose name contains this (profiling one of them). */
const ONLY = values.only;
const NODE = process.execPath;
const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const SUPERGATEWAY = root('node_modules/supergateway/dist/index.js');
const EVERYTHING = [
  NODE,
  root('node_modules/@modelcontextprotocol/server-everything/dist/index.js'),
  'stdio',
];

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'bench', version: '1' },
  },
};
const CALL = { name: 'test_simple_text', arguments: {} };

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
    session.#child.stdin!.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
    );
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

const agent = new Agent({ keepAlive: true, maxSockets: 4096 });

function post(
  url: string,
  body: unknown,
  session?: string,
  extraHeaders: Record<string, string> = {},
): Promise<{ session?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...extraHeaders,
    };
    if (session) headers['mcp-session-id'] = session;
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        if ((res.statusCode ?? 500) >= 300) reject(new Error(`HTTP ${res.statusCode}: ${text}`));
        else resolve({ session: res.headers['mcp-session-id'] as string | undefined, text });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

class HttpSession implements Session {
  readonly #url: string;
  readonly #id: string;
  #next = 1;

  private constructor(url: string, id: string) {
    this.#url = url;
    this.#id = id;
  }

  static async open(url: string): Promise<HttpSession> {
    const init = await post(url, INITIALIZE);
    if (!init.session) throw new Error(`no session id from ${url}`);
    await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.session);
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
    await new Promise<void>((resolve) => {
      request(
        this.#url,
        { method: 'DELETE', agent, headers: { 'mcp-session-id': this.#id } },
        (res) => res.resume().on('end', resolve),
      ).end();
    });
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
  readonly #url: string;
  #next = 1;

  constructor(url: string) {
    this.#url = url;
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
  const child = spawn(args[0]!, args.slice(1), { stdio: 'ignore' });
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
const bridgeArgv = (port: number, args: string[]) => [
  NODE,
  ...(process.env.BENCH_BRIDGE_NODE_OPTIONS?.split(' ') ?? []),
  CLI,
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
 * directory as they share the emptyDir.
 */
async function pod(command: string[]): Promise<Target> {
  const assets = await mkdtemp(join(tmpdir(), 'bench-assets-'));
  const dir = await mkdtemp(join(tmpdir(), 'bench-emptydir-'));
  await copyFile(process.env.BENCH_BUSYBOX ?? '/bin/busybox', join(assets, BUSYBOX_FILE));
  await copyFile(root('src/bridge/supervisor.sh'), join(assets, SUPERVISOR_FILE));
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
  const target = await bridge('PerSession', [], ['--supervisor-dir', dir]);
  return {
    ...target,
    name: 'bridge pod',
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
  /** CPU time of this load generator per call, in µs: what the client side costs. */
  clientUs: number;
}

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
  let measuring = false;
  let stop = false;
  const loop = async (session: Session) => {
    while (!stop) {
      const started = performance.now();
      await session.call();
      if (measuring) latencies.push(performance.now() - started);
    }
  };
  const loops = opened.map(loop);
  await new Promise((resolve) => setTimeout(resolve, 500)); // warm-up
  const cpu = () => (target.pid === undefined ? Promise.resolve(NaN) : cpuSeconds(target.pid));
  const cpuBefore = await cpu();
  const clientBefore = process.cpuUsage();
  measuring = true;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  measuring = false;
  const elapsed = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const cpuUsed = (await cpu()) - cpuBefore;
  stop = true;
  await Promise.all(loops);
  await Promise.all(opened.map((session) => session.close()));
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuUs: Number.isNaN(cpuUsed) ? undefined : (cpuUsed / latencies.length) * 1e6,
    clientUs: (client.user + client.system) / latencies.length,
  };
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

/** RSS of a process and all its descendants, in MiB. */
function treeRssMiB(pid: number): number {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++)
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  let kib = 0;
  for (const member of tree) {
    try {
      kib += Number(
        /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${member}/status`, 'utf8'))?.[1] ?? 0,
      );
    } catch {
      // gone meanwhile
    }
  }
  return kib / 1024;
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
  const makers: [string, () => Promise<Target>][] = [
    ['bridge PerSession', () => bridge('PerSession', server)],
    ['bridge Shared', () => bridge('Shared', server)],
    ['supergateway', () => supergateway(server)],
  ];
  console.log('\n2026-07-28 clients (stateless calls) next to 2025-11-25 sessions, same run:');
  console.log(
    `${'target'.padEnd(20)}${'clients'.padStart(9)}${'2025 req/s'.padStart(12)}${'p50'.padStart(8)}${'2026 req/s'.padStart(12)}${'p50'.padStart(8)}${'p99'.padStart(8)}`,
  );
  for (const clients of CONCURRENCY) {
    for (const [name, make] of makers) {
      if (ONLY !== undefined && !name.includes(ONLY)) continue;
      const target = await make();
      const stateless = await throughput(
        { ...target, open: () => Promise.resolve(new StatelessClient(target.url!)) },
        clients,
      );
      await target.stop();
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
  const server = await goHttp(binary);
  for (const sessions of CONCURRENCY) {
    const direct = await throughput(server, sessions);
    const front = await proxy(server.url!);
    const proxied = await throughput(front, sessions);
    await front.stop();
    for (const [name, result] of [
      ['direct HTTP', direct],
      ['bridge proxy', proxied],
    ] as const) {
      console.log(
        `${name.padEnd(20)}${String(sessions).padStart(9)}${fmt(result.rps, 0).padStart(10)}${fmt(result.p50)}${fmt(result.p99)}`,
      );
    }
    console.log(
      `  ${String(sessions).padStart(3)} sessions: proxy p50 - direct HTTP p50 = ${(proxied.p50 - direct.p50).toFixed(3)} ms; proxy/direct req/s = ${(proxied.rps / direct.rps).toFixed(2)}x`,
    );
  }
  await server.stop();
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
    for (const mode of ['bridge PerSession', 'bridge Shared', 'bridge pod']) {
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

async function main(): Promise<void> {
  const server = [await everythingServer()];
  console.log(
    `tools/call ${CALL.name} on the Go SDK everything-server, ${SECONDS} s per cell, closed loop per session\n`,
  );
  console.log(
    `${'target'.padEnd(20)}${'sessions'.padStart(9)}${'req/s'.padStart(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'CPU µs/req'.padStart(12)}${'client µs/req'.padStart(15)}`,
  );
  const results = new Map<string, Throughput>();
  const makers: [string, () => Promise<Target> | Target][] = [
    ['direct stdio', () => direct(server)],
    ['bridge PerSession', () => bridge('PerSession', server)],
    ['bridge Shared', () => bridge('Shared', server)],
    ['bridge pod', () => pod(server)],
    ['bridge forwarded', () => forwarded(server)],
    ['supergateway', () => supergateway(server)],
  ];
  if (ONLY === 'proxy') {
    await proxyMode(server[0]!);
    return agent.destroy();
  }
  for (const sessions of CONCURRENCY) {
    for (const [name, make] of makers) {
      if (ONLY !== undefined && !name.includes(ONLY)) continue;
      const target = await make();
      const result = await throughput(target, sessions);
      await target.stop();
      results.set(`${name}/${sessions}`, result);
      const cpu = result.cpuUs === undefined ? '' : fmt(result.cpuUs, 0);
      console.log(
        `${name.padEnd(20)}${String(sessions).padStart(9)}${fmt(result.rps, 0).padStart(10)}${fmt(result.p50)}${fmt(result.p99)}${cpu.padStart(12)}${fmt(result.clientUs, 0).padStart(15)}`,
      );
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
  printGoals(results);
  await statelessColumn(server, results);
  if (ONLY === undefined) await proxyMode(server[0]!);
  if (ONLY !== undefined || values['throughput-only']) return agent.destroy();

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
    await target.stop();
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
    await target.stop();
    console.log(`  ${name.padEnd(24)}${fmt(mib, 3)} MiB`);
  }
  agent.destroy();
}

await main();
