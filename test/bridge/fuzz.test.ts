/**
 * The short run of the bridge fuzzers (fuzz.ts): a few hundred generated requests against the
 * HTTP front, of both eras, and a hundred calls that make a hostile child write generated
 * lines, each against a real bridge process. After every batch the process must be up, serve
 * /healthz and answer a session the fuzzer never touched; its memory must stay bounded. The
 * seed is new each run and named in any failure: `FUZZ_SEED=<n>` replays it. The long run is
 * `npm run bench:fuzz`.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.ts';
import {
  childBatch,
  frontBatch,
  FUZZ_SERVERS,
  newStats,
  openSession,
  startFuzzBridge,
  type FuzzBridge,
  type FuzzStats,
} from './fuzz.ts';

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** Far above the ~100 MiB a bridge holds, far below what an unbounded fan-out reaches. */
const RSS_BOUND = 400 * 1024 * 1024;

const bridges: FuzzBridge[] = [];
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((bridge) => bridge.stop()));
});

function verdict(stats: FuzzStats): string {
  return `seed ${SEED} (FUZZ_SEED=${SEED} replays it): ${stats.executions} cases, ${stats.outcomes.size} outcomes, peak RSS ${Math.round(stats.peakRss / 2 ** 20)} MiB`;
}

describe('fuzzing the bridge', () => {
  it('survives generated HTTP requests of both eras and serves another session after each batch', async () => {
    const bridge = await startFuzzBridge(await freePort(), [], FUZZ_SERVERS.front);
    bridges.push(bridge);
    const health = await openSession(bridge.base);
    const stats = newStats();
    for (let i = 0; i < 6 && stats.crashes.length === 0; i++)
      await frontBatch(bridge, health, stats, { seed: SEED + i, batch: 50, concurrency: 4 });
    expect(stats.crashes, verdict(stats)).toEqual([]);
    expect(stats.peakRss, verdict(stats)).toBeLessThan(RSS_BOUND);
    // The cases reach past the first checks: many different answers, not one refusal.
    expect(stats.outcomes.size, verdict(stats)).toBeGreaterThan(20);
  }, 180_000);

  it('survives generated output of a hostile child in Shared mode and serves another session after each batch', async () => {
    const bridge = await startFuzzBridge(
      await freePort(),
      ['--session-mode', 'Shared'],
      FUZZ_SERVERS.child,
    );
    bridges.push(bridge);
    const [fuzzed, health] = [await openSession(bridge.base), await openSession(bridge.base)];
    const stats = newStats();
    for (let i = 0; i < 4 && stats.crashes.length === 0; i++)
      await childBatch(bridge, fuzzed, health, stats, {
        seed: SEED + i,
        batch: 30,
        concurrency: 2,
      });
    expect(stats.crashes, verdict(stats)).toEqual([]);
    expect(stats.peakRss, verdict(stats)).toBeLessThan(RSS_BOUND);
    expect(stats.outcomes.size, verdict(stats)).toBeGreaterThan(5);
  }, 180_000);
});
