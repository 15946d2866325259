/**
 * The long run of the bridge fuzzers (test/bridge/fuzz.ts): batches of generated HTTP
 * requests of both eras against one bridge process, and batches of hostile child output
 * against another (Shared mode), alternating until the time is up. After each batch each
 * process must be up and serve a session the fuzzer never touched.
 *
 *   node bench/fuzz-bridge.ts [--minutes 10] [--seed <n>] [--batch 50] [--concurrency 4]
 *                             [--top 15]
 *
 * Prints executions, distinct outcomes (status × media type × JSON-RPC code × error message,
 * numbers taken out: the paths the bridge took that a client can tell apart), crashes (with
 * the seed of the batch: `--seed <n> --minutes 0.1` replays from it), answers with HTTP 500
 * (a throw the entry guard caught), peak resident memory and the machine's load. Exits 1 on
 * a crash.
 */

import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import {
  childBatch,
  frontBatch,
  FUZZ_SERVERS,
  newStats,
  openSession,
  startFuzzBridge,
  type FuzzBridge,
  type FuzzStats,
} from '../test/bridge/fuzz.ts';
import { freePort } from '../test/support/ports.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    seed: { type: 'string', default: String(Math.floor(Math.random() * 2 ** 31)) },
    batch: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '4' },
    top: { type: 'string', default: '15' },
  },
});
const deadline = Date.now() + Number(values.minutes) * 60_000;
const seed = Number(values.seed);
const batch = Number(values.batch);
const concurrency = Number(values.concurrency);

const MiB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** Log events of every process of a kind, restarts included. */
const frontLogs = new Map<string, number>();
const childLogs = new Map<string, number>();
function keepLogs(bridge: FuzzBridge, into: Map<string, number>): void {
  for (const [key, count] of bridge.logged) into.set(key, (into.get(key) ?? 0) + count);
  bridge.logged.clear();
}

async function restartIfDown(
  bridge: FuzzBridge,
  start: () => Promise<FuzzBridge>,
  logs: Map<string, number>,
): Promise<FuzzBridge> {
  if (bridge.exit === undefined) return bridge;
  await bridge.stop();
  keepLogs(bridge, logs);
  return start();
}

const startFront = async () => startFuzzBridge(await freePort(), [], FUZZ_SERVERS.front);
const startChild = async () =>
  startFuzzBridge(await freePort(), ['--session-mode', 'Shared'], FUZZ_SERVERS.child);

let front = await startFront();
let child = await startChild();
const fronts = newStats();
const children = newStats();
const started = Date.now();
let lastReport = started;
let round = 0;
while (Date.now() < deadline) {
  const batchSeed = seed + round++;
  front = await restartIfDown(front, startFront, frontLogs);
  await frontBatch(front, await openSession(front.base), fronts, {
    seed: batchSeed,
    batch,
    concurrency,
  });
  child = await restartIfDown(child, startChild, childLogs);
  const [fuzzed, health] = [await openSession(child.base), await openSession(child.base)];
  await childBatch(child, fuzzed, health, children, {
    seed: batchSeed,
    batch: Math.ceil(batch / 2),
    concurrency: 2,
  });
  if (Date.now() - lastReport > 30_000) {
    lastReport = Date.now();
    console.log(
      `${((Date.now() - started) / 60_000).toFixed(1)} min: front ${fronts.executions} cases, ${fronts.outcomes.size} outcomes; child ${children.executions} cases, ${children.outcomes.size} outcomes; crashes ${fronts.crashes.length + children.crashes.length}; load ${loadavg()[0]!.toFixed(1)}`,
    );
  }
}
await Promise.all([front.stop(), child.stop()]);
keepLogs(front, frontLogs);
keepLogs(child, childLogs);

function report(name: string, stats: FuzzStats, logs: Map<string, number>): void {
  const seconds = (Date.now() - started) / 1000;
  console.log(`\n${name}`);
  console.log(
    `  executions        ${stats.executions} (${(stats.executions / seconds).toFixed(1)}/s of the run)`,
  );
  console.log(`  batches           ${stats.batches}`);
  console.log(`  distinct outcomes ${stats.outcomes.size}`);
  console.log(`  distinct log events of the bridge ${logs.size}`);
  console.log(`  HTTP 500 answers  ${stats.serverErrors}`);
  console.log(`  crashes           ${stats.crashes.length}`);
  for (const crash of stats.crashes) console.log(`    ${crash}`);
  const samples = stats.rssSamples;
  console.log(
    `  RSS               first ${MiB(samples[0] ?? 0)}, last ${MiB(samples.at(-1) ?? 0)}, peak ${MiB(stats.peakRss)}`,
  );
  console.log(`  most frequent outcomes:`);
  const top = [...stats.outcomes].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
  for (const [outcome, count] of top) console.log(`    ${String(count).padStart(7)}  ${outcome}`);
  console.log(`  log events of the bridge:`);
  for (const [event, count] of [...logs].sort((a, b) => b[1] - a[1]))
    console.log(`    ${String(count).padStart(7)}  ${event}`);
}

console.log(
  `seed ${seed}, ${((Date.now() - started) / 60_000).toFixed(1)} min, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
report('HTTP front (both eras)', fronts, frontLogs);
report('child output (Shared mode)', children, childLogs);
process.exitCode = fronts.crashes.length + children.crashes.length > 0 ? 1 : 0;
