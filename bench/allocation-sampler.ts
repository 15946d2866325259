/**
 * Preloaded into a process (`--import=<this file>`), samples what it allocates, by call stack,
 * garbage included, and writes the profile when it exits: `<dir>/allocations-<pid>.heapprofile`,
 * `<dir>` from `--diagnostic-dir` (the current directory without it). Summarised by
 * bench/allocation-profile.ts.
 *
 * Node's own `--heap-prof` keeps only the samples still alive at the end; the garbage is what
 * the collector spends its time on, so V8's sampling heap profiler is started here with the
 * samples of collected objects kept (Chrome DevTools protocol, HeapProfiler.startSampling).
 * An inspector session on the main thread answers synchronously, so the profile can be taken in
 * the `exit` handler.
 *
 *   node bench/controller.ts --no-cgroup \
 *     --node-options="--import=$PWD/bench/allocation-sampler.ts --diagnostic-dir=<dir>" 300
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/** Bytes between samples: coarser than V8's 32 KiB default, to hold less while a bench runs. */
const SAMPLING_INTERVAL = 64 * 1024;

const dir =
  process.execArgv.find((a) => a.startsWith('--diagnostic-dir='))?.slice(17) ?? process.cwd();
const session = new Session();
session.connect();
session.post('HeapProfiler.startSampling', {
  samplingInterval: SAMPLING_INTERVAL,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
process.on('exit', () => {
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err !== null) {
      process.stderr.write(`allocation sampler: ${err.message}\n`);
      return;
    }
    writeFileSync(
      join(dir, `allocations-${process.pid}.heapprofile`),
      JSON.stringify(result.profile),
    );
  });
});
