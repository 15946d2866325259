/**
 * The time from a pod restart to `CodeChanged` in status, for an unpinned `npx -y` and `uvx`
 * package whose newest release moved: how it is measured, and why one figure is not enough.
 * The method is the end-to-end test's (test/e2e/package-provenance.cluster.test.ts: the
 * operator in-process against a real control plane, the rendered pod's containers as local
 * processes, npx and uvx resolving through a local registry and index in front of npmjs and
 * PyPI), run R times against one control plane started here; each run prints the time, split
 * into the pod's start (the launcher installing the new release before the bridge's probe
 * passes) and the operator's part (the change feed reporting the package, the status write).
 * Per launcher: every sample, then min, median and max, with the load average of each run.
 *
 *   node bench/code-changed.ts [--repeat=3]
 *
 * The install dominates and goes to npmjs and PyPI through the machine's network, so single
 * figures from different runs (13.6 and 17.3 s for npx, 12.9 and 8.4 s for uvx) are samples of
 * one spread, not contradictions; the operator's own part is what the project controls.
 */
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { benchCluster } from './harness.ts';
import { stopStartedOnExit } from './processes.ts';

const repeat = Number(
  process.argv.find((a) => a.startsWith('--repeat='))?.slice('--repeat='.length) ?? 3,
);
const ROOT = join(import.meta.dirname, '..');
const TEST = 'test/e2e/package-provenance.cluster.test.ts';
const LINE =
  // Vitest prefixes the line with terminal colours: no anchor at its start.
  /(npx|uvx): pod restart → CodeChanged in status: ([\d.]+) s \(pod ready, the release installed: ([\d.]+) s; then the operator: (-?[\d.]+) s\)/g;

interface Sample {
  total: number;
  install: number;
  operator: number;
  load: number;
}

stopStartedOnExit();
const cluster = await benchCluster();
const samples: Record<string, Sample[]> = { npx: [], uvx: [] };
try {
  for (let run = 1; run <= repeat; run++) {
    const load = loadavg()[0]!;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'cluster', TEST],
      {
        cwd: ROOT,
        env: { ...process.env, MCP_OPERATOR_TEST_KUBECONFIG: cluster.kubeconfig },
        maxBuffer: 64 * 1024 * 1024,
      },
      // A failed run still prints what it measured; the summary says what is missing.
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    for (const [, launcher, total, install, operator] of stdout.matchAll(LINE)) {
      samples[launcher!]!.push({
        total: Number(total),
        install: Number(install),
        operator: Number(operator),
        load,
      });
    }
    console.log(`run ${run} of ${repeat} done; load average ${loadavg()[0]!.toFixed(1)}`);
  }
} finally {
  await cluster.stop();
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const spread = (values: number[]) =>
  `${Math.min(...values).toFixed(1)} / ${median(values).toFixed(1)} / ${Math.max(...values).toFixed(1)}`;
console.log('pod restart → CodeChanged in status (s): min / median / max');
for (const [launcher, list] of Object.entries(samples)) {
  if (list.length === 0) {
    console.log(`  ${launcher}: no sample (did the test fail?)`);
    continue;
  }
  console.log(
    `  ${launcher}: total ${spread(list.map((s) => s.total))}; pod start ${spread(list.map((s) => s.install))}; operator ${spread(list.map((s) => s.operator))}`,
  );
  console.log(
    `    samples: ${list.map((s) => `${s.total.toFixed(1)} (${s.install.toFixed(1)} + ${s.operator.toFixed(1)}, load ${s.load.toFixed(1)})`).join(', ')}`,
  );
}
