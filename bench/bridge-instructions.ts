/**
 * Instructions the bridge process executes per `tools/call`, counted by Valgrind's callgrind:
 * a figure that does not move with the load of a shared machine, unlike CPU time or latency
 * (bench/bridge.ts), so two builds can be compared on a busy host. Only the bridge process is
 * counted; the Go SDK everything-server it spawns runs natively (no --trace-children).
 *
 *   node bench/bridge-instructions.ts [--calls 2000] [--warm-up 3000] [--sessions 1]
 *                                     [--mode PerSession] [--cli <cli.ts of a build>]… [--relay]
 *
 * For each build (this one, then every --cli), the bridge is started under callgrind with
 * instrumentation off; after the warm-up calls (for V8 to optimise the hot path) it is
 * switched on for the measured calls only, so start-up and first compilation are left out. The
 * figure still includes V8's own threads (compiler, GC) working during the measured calls, as
 * they do in production. Not all of it is free of the clock: V8 starts major collections
 * partly on time (its memory reducer), and under valgrind a call takes some 50 times longer,
 * so concurrent marking is a larger share than at full speed (about a fifth of the bridge's
 * figure), and a window that holds no major collection comes out lower (two builds that differ
 * by one `await` per request: 411k to 424k in five runs, once 284k). Compare over several runs.
 *
 * --relay adds bench/relay-floor.ts, the least a node:http front of a stdio server does (one
 * child per session): the floor under the bridge's figure. BENCH_BRIDGE_NODE_OPTIONS is passed
 * to node, as by bench/bridge.ts. Needs valgrind (Debian's `valgrind` package).
 */

import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { everythingServer } from '../test/bridge/go-server.ts';
import { CLI } from '../test/support/cli.ts';
import { bridgeCommand, calls, openSession, waitUp } from './bridge-calls.ts';
import { freePort } from '../test/support/ports.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    'warm-up': { type: 'string', default: '3000' },
    sessions: { type: 'string', default: '1' },
    mode: { type: 'string', default: 'PerSession' },
    cli: { type: 'string', multiple: true, default: [] },
    relay: { type: 'boolean', default: false },
  },
});
const CALLS = Number(values.calls);
const WARM_UP = Number(values['warm-up']);
const SESSIONS = Number(values.sessions);
const run = promisify(execFile);

/** Valgrind runs the bridge some 50 times slower: generous waits. */
const START_TIMEOUT_MS = 300_000;

/** argv of the bridge built at `cli`, listening on `port`. */
const bridgeArgv = (cli: string) => (port: number, server: string) =>
  bridgeCommand(cli, values.mode, port, server);

const relayArgv = (port: number, server: string) => [
  fileURLToPath(new URL('relay-floor.ts', import.meta.url)),
  String(port),
  server,
];

/** Instructions per measured call of the node program `argv` gives. */
async function measure(
  argv: (port: number, server: string) => string[],
  server: string,
): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-callgrind-'));
  const out = join(dir, 'callgrind.out');
  const port = await freePort();
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${out}`,
      process.execPath,
      ...(process.env.BENCH_BRIDGE_NODE_OPTIONS?.split(' ') ?? []),
      ...argv(port, server),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  const exited = once(child, 'exit');
  try {
    const url = `http://127.0.0.1:${port}/mcp`;
    await waitUp(url, START_TIMEOUT_MS);
    const sessions = [];
    for (let i = 0; i < SESSIONS; i++) sessions.push(await openSession(url));
    await calls(url, sessions, WARM_UP);
    await run('callgrind_control', ['--instr=on', String(child.pid)]);
    await calls(url, sessions, CALLS);
    await run('callgrind_control', ['--instr=off', String(child.pid)]);
    child.kill('SIGTERM');
    await exited;
    const totals = /^totals: (\d+)/m.exec(await readFile(out, 'utf8'));
    if (!totals) throw new Error(`no totals from callgrind: ${log.slice(-2000)}`);
    return Number(totals[1]) / CALLS;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

const server = await everythingServer();
console.log(
  `Bridge instructions per tools/call (callgrind), ${values.mode}, ${SESSIONS} session(s), ${CALLS} calls after ${WARM_UP}`,
);
const targets: [string, (port: number, server: string) => string[]][] = [
  ...[CLI, ...values.cli].map((cli): [string, typeof relayArgv] => [cli, bridgeArgv(cli)]),
  ...(values.relay ? [['relay floor', relayArgv] as [string, typeof relayArgv]] : []),
];
for (const [name, argv] of targets) {
  const perCall = await measure(argv, server);
  console.log(`  ${name.padEnd(60)} ${(perCall / 1000).toFixed(0).padStart(8)} k instructions`);
}
