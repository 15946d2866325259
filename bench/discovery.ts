/**
 * Discovery of many servers at the default concurrency, the way the operator runs it: the
 * scheduler calls the real client against real MCP servers over HTTP, then takes the snapshot,
 * the compact status and the drift. Half the servers speak 2026-07-28, half 2025-11-25 (so
 * those take the initialize fallback). Two rounds: the second finds nothing new, and counts
 * how many status objects would change (the goal is zero, i.e. no API writes).
 *
 * It runs twice in one go: servers with tools only, then the same servers also offering
 * prompts, resources and resource templates (5, 5 and 2 each), which discovery lists too; the
 * last line gives the cost of those as ratios against the tools-only run.
 *
 * Usage: node bench/discovery.ts [servers=1000] [processes=4]
 * Prints: per run and round, time, CPU time of this process, failures, status changes; the
 * load average before each run (the machine may be shared).
 */

import { loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { discover } from '../src/discovery/client.ts';
import { computeDrift, driftStatus } from '../src/tools/drift.ts';
import { DiscoveryScheduler, SCHEDULER_DEFAULTS } from '../src/discovery/scheduler.ts';
import { type CompactDiscovery, compactStatus, takeSnapshot } from '../src/tools/snapshot.ts';
import { startFixture, stopFixtures } from './harness.ts';

const servers = Number(process.argv[2] ?? 1000);
const processes = Number(process.argv[3] ?? 4);
const hour = 3_600_000;

interface Round {
  seconds: number;
  cpuSeconds: number;
}

async function run(label: string, catalog: boolean): Promise<Round> {
  const fixtures = await Promise.all(
    Array.from({ length: processes }, (_, i) =>
      startFixture(i % 2 === 0 ? 'modern' : 'legacy', { catalog }),
    ),
  );
  const urlOf = (i: number) => `http://127.0.0.1:${fixtures[i % processes]!.port}/s/${i}/mcp`;
  /** What the operator would write to status, per server, after the last run. */
  const statuses = new Map<string, { discovery: CompactDiscovery; drift: object }>();
  let completed = 0;
  let failures = 0;
  let changes = 0;
  let onProgress = () => {};
  const scheduler = new DiscoveryScheduler({
    async discover(key, signal) {
      try {
        const snapshot = takeSnapshot(await discover({ url: key, signal, timeoutMs: 30_000 }));
        const drift = computeDrift(snapshot.tools, [], [], {
          listed: snapshot.catalog,
          approved: undefined,
        });
        const status = { discovery: compactStatus(snapshot), drift: driftStatus(drift) };
        if (statuses.has(key) && !isDeepStrictEqual(statuses.get(key), status)) changes++;
        statuses.set(key, status);
        return { toolCount: snapshot.tools.length, drift: undefined };
      } finally {
        completed++;
        onProgress();
      }
    },
    onFailure: () => failures++,
  });

  async function round(name: string, start: () => void): Promise<Round> {
    const target = completed + servers;
    const done = new Promise<void>((resolve) => {
      onProgress = () => completed >= target && resolve();
    });
    const cpu = process.cpuUsage();
    const began = performance.now();
    start();
    await done;
    const seconds = (performance.now() - began) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    console.log(
      [
        `${label} ${name}`.padEnd(34),
        `${seconds.toFixed(2)} s`.padStart(9),
        `${(servers / seconds).toFixed(0)} servers/s`.padStart(15),
        `CPU ${cpuSeconds.toFixed(2)} s`.padStart(12),
        `failures ${failures}`,
        `status changes ${changes}`,
      ].join('  '),
    );
    return { seconds, cpuSeconds };
  }

  console.log(
    `${label}: load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  try {
    const first = await round('round 1', () => {
      for (let i = 0; i < servers; i++)
        scheduler.upsert(urlOf(i), { intervalMs: hour, timeoutMs: 30_000 });
    });
    await round('no change', () => {
      for (let i = 0; i < servers; i++) scheduler.trigger(urlOf(i));
    });
    const count = (of: (s: CompactDiscovery) => number | undefined) =>
      [...statuses.values()].reduce((sum, s) => sum + (of(s.discovery) ?? 0), 0);
    console.log(
      `${label}: tools ${count((s) => s.toolCount)}, prompts ${count((s) => s.prompts?.count)}, resources ${count((s) => s.resources?.count)}, templates ${count((s) => s.resourceTemplates?.count)}; status bytes per server ${(
        [...statuses.values()].reduce((n, s) => n + JSON.stringify(s.discovery).length, 0) / servers
      ).toFixed(0)}`,
    );
    return first;
  } finally {
    await scheduler.stop();
    await stopFixtures(fixtures);
  }
}

console.log(
  `discovery of ${servers} servers in ${processes} processes, concurrency ${SCHEDULER_DEFAULTS.concurrency}, Node ${process.version}`,
);
const toolsOnly = await run('tools only', false);
const withCatalog = await run('tools+prompts+resources', true);
console.log(
  `prompts and resources cost ×${(withCatalog.seconds / toolsOnly.seconds).toFixed(2)} time and ×${(withCatalog.cpuSeconds / toolsOnly.cpuSeconds).toFixed(2)} CPU of the first round (peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB)`,
);
