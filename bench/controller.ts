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
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSION, type MCPServer } from '../src/api/v1alpha1/mcpserver.ts';
import { connect, type KubeClient } from '../src/controller/kube/client.ts';
import { loadClientConfig } from '../src/controller/kube/config.ts';
import {
  MCP_SERVER,
  NAMESPACE,
  collectionPath,
  objectPath,
} from '../src/controller/kube/resources.ts';
import { ensureBinaries } from '../test/cluster/build.ts';
import { ControlPlane } from '../test/cluster/control-plane.ts';

const CLI = join(import.meta.dirname, '..', 'src', 'cli.ts');
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/** Sums of the operator's request and reconcile counters, from its /metrics. */
async function counters(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (re: RegExp, keep: (m: RegExpMatchArray) => boolean = () => true) =>
    [...text.matchAll(re)].filter(keep).reduce((total, m) => total + Number(m.at(-1)), 0);
  const requests = /^mcp_operator_kube_requests_total\{verb="(\w+)",code="\d+"\} (\d+)$/gm;
  return {
    requests: sum(requests, (m) => m[1] !== 'WATCH'),
    writes: sum(requests, (m) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(m[1]!)),
    reconciles: sum(/^mcp_operator_reconcile_total\{result="\w+"\} (\d+)$/gm),
  };
}

/** Peak resident set size of a process (Linux VmHWM), in MiB. */
async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) / 1024;
}

async function pool<T>(items: T[], size: number, work: (item: T) => Promise<unknown>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: size }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
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

/** Polls once a second: listing every MCPServer is itself load on the API server. */
async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(1000);
  }
}

async function run(
  client: KubeClient,
  kubeconfig: string,
  n: number,
  flags: string[],
): Promise<Result> {
  const namespace = `bench-${n}-${Date.now().toString(36)}`;
  await client.request({
    method: 'POST',
    path: collectionPath(NAMESPACE),
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
  });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logFile = join(tmpdir(), `${namespace}-operator.log`);
  const log = openSync(logFile, 'w');
  const operator = spawn(
    process.execPath,
    [
      CLI,
      'controller',
      `--namespaces=${namespace}`,
      '--no-leader-elect',
      `--metrics-address=127.0.0.1:${port}`,
      `--resync-period=${RESYNC}`,
      ...flags,
    ],
    { env: { ...process.env, KUBECONFIG: kubeconfig }, stdio: ['ignore', log, log] },
  );
  closeSync(log);
  try {
    await waitUntil(
      'the operator to be ready',
      async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.ok === true,
      60_000,
    );
    const before = await counters(url);
    const names = Array.from({ length: n }, (_, i) => `srv-${i}`);
    const started = Date.now();
    await pool(names, CREATE_CONCURRENCY, (name) =>
      client.request({
        method: 'POST',
        path: collectionPath(MCP_SERVER, namespace),
        body: {
          apiVersion: API_VERSION,
          kind: 'MCPServer',
          metadata: { name },
          // Discovery off: its schedule writes status on its own (and the fake pods answer
          // nothing); bench/discovery.ts measures it.
          spec: {
            image: 'example.com/mcp/web:1',
            transport: 'streamable-http',
            port: 3000,
            discovery: { enabled: false },
          },
        },
      }),
    );
    await waitUntil(
      `${n} servers Ready`,
      async () => (await readyCount(client, namespace)) === n,
      600_000,
    );
    const readySeconds = (Date.now() - started) / 1000;
    const converged = await counters(url);
    // Quiet first (trailing event bumps, last status writes), then through one full resync.
    let quiet = converged;
    for (;;) {
      await sleep(3000);
      const now = await counters(url);
      if (now.writes === quiet.writes) break;
      quiet = now;
    }
    await waitUntil(
      'a full resync',
      async () => (await counters(url)).reconciles >= quiet.reconciles + n,
      120_000,
    );
    const resynced = await counters(url);
    return {
      n,
      readySeconds,
      requestsPerObject: (converged.requests - before.requests) / n,
      writesPerObject: (converged.writes - before.writes) / n,
      resyncPasses: resynced.reconciles - quiet.reconciles,
      resyncWrites: resynced.writes - quiet.writes,
      peakRssMb: await peakRssMb(operator.pid!),
    };
  } finally {
    const exited = new Promise((resolve) => operator.once('exit', resolve));
    operator.kill('SIGTERM');
    await exited;
    await client.request({ method: 'DELETE', path: objectPath(NAMESPACE, undefined, namespace) });
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flags = args.filter((a) => a.startsWith('--'));
  const sizes = args.filter((a) => !a.startsWith('--')).map(Number);
  const ns = sizes.length > 0 ? sizes : [100, 500, 1000];
  const external = process.env.KUBECONFIG;
  const plane = external
    ? undefined
    : await ControlPlane.start({ binaries: await ensureBinaries() });
  const kubeconfig = external ?? plane!.kubeconfigPath;
  const client = connect(await loadClientConfig({ kubeconfig, env: {} }));
  const results: Result[] = [];
  try {
    for (const n of ns) {
      process.stderr.write(`N=${n}…\n`);
      results.push(await run(client, kubeconfig, n, flags));
    }
  } finally {
    client.close();
    await plane?.stop();
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
