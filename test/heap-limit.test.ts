/**
 * V8's heap limit fitted to the container's memory limit: the rule, then the real thing — the
 * CLI started in a memory cgroup of the chart's limit relaunches itself in place with the flag.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { heapLimitMiB, heapRelaunch } from '../src/heap-limit.ts';
import { chartMemoryLimit, memoryCgroup } from '../bench/memory.ts';

const execFileAsync = promisify(execFile);
const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const CLI = join(import.meta.dirname, '..', 'src', 'cli.ts');

describe('heapLimitMiB', () => {
  it('leaves a quarter of the limit, at least 64 MiB, beside the heap', () => {
    expect(heapLimitMiB(256 * MIB)).toBe(192);
    expect(heapLimitMiB(512 * MIB)).toBe(384);
    expect(heapLimitMiB(2 * GIB)).toBe(1536);
    expect(heapLimitMiB(200 * MIB)).toBe(136);
  });

  it('keeps half of a small limit for the heap', () => {
    expect(heapLimitMiB(128 * MIB)).toBe(64);
    expect(heapLimitMiB(96 * MIB)).toBe(48);
  });
});

describe('heapRelaunch', () => {
  const contained = {
    constrainedMemory: 256 * MIB,
    totalMemory: 16 * GIB,
    execArgv: ['--optimize-for-size'],
    nodeOptions: undefined,
  };

  it('asks for the heap that fits a memory limit', () => {
    expect(heapRelaunch(contained)).toBe('--max-old-space-size=192');
  });

  it('runs as it is without a limit', () => {
    expect(heapRelaunch({ ...contained, constrainedMemory: 0 })).toBeUndefined();
    // cgroup v1 without a limit reports a page-rounded 2^63.
    expect(heapRelaunch({ ...contained, constrainedMemory: 2 ** 63 })).toBeUndefined();
    expect(heapRelaunch({ ...contained, constrainedMemory: 16 * GIB })).toBeUndefined();
  });

  it('keeps a heap flag given in the flags or in NODE_OPTIONS, in either spelling', () => {
    for (const flag of [
      '--max-old-space-size=300',
      '--max_old_space_size=300',
      '--max-old-space-size-percentage=50',
      '--max-heap-size=300',
    ]) {
      expect(heapRelaunch({ ...contained, execArgv: [flag] }), flag).toBeUndefined();
      expect(
        heapRelaunch({ ...contained, nodeOptions: `--trace-gc ${flag}` }),
        flag,
      ).toBeUndefined();
    }
    // Flags that only start like one are not one.
    expect(heapRelaunch({ ...contained, execArgv: ['--max-semi-space-size=4'] })).toBe(
      '--max-old-space-size=192',
    );
  });
});

describe('the CLI in a memory cgroup', () => {
  const cgroup = memoryCgroup(chartMemoryLimit());
  // Making a cgroup needs the right to write under this process's own; without it, nothing to run.
  it.skipIf(typeof cgroup === 'string')(
    'starts again in place with a heap inside the limit, for the bridge and the controller',
    async () => {
      if (typeof cgroup === 'string') return;
      // Loaded before the CLI, in the first start and in the relaunch: pid and heap limit.
      const report =
        'process.stdout.write(`${process.pid} ${process.getBuiltinModule("node:v8").getHeapStatistics().heap_size_limit}\\n`)';
      for (const command of ['bridge', 'controller']) {
        const { stdout } = await execFileAsync(cgroup.launcher[0]!, [
          ...cgroup.launcher.slice(1),
          process.execPath,
          '--optimize-for-size',
          `--import=data:text/javascript,${encodeURIComponent(report)}`,
          CLI,
          command,
          '--help',
        ]);
        const starts = stdout
          .split('\n')
          .filter((line) => /^\d+ \d+$/.test(line))
          .map((line) => line.split(' ').map(Number));
        expect(starts, command).toHaveLength(2);
        const [first, relaunched] = starts as [number[], number[]];
        expect(relaunched[0], 'the same process').toBe(first[0]);
        // Node's own sizing puts the heap above the container's limit; the relaunch inside it.
        expect(first[1]).toBeGreaterThan(chartMemoryLimit());
        expect(relaunched[1]).toBeLessThanOrEqual(chartMemoryLimit() - 56 * MIB);
        expect(stdout).toContain(`mcp-operator ${command}`);
      }
    },
  );

  it('runs once, as it is, without a limit', async () => {
    const report =
      'process.stdout.write(`start ${process.execArgv.some((a) => a.startsWith("--max-old")) ? "sized" : "as is"}\\n`)';
    const { stdout } = await execFileAsync(process.execPath, [
      `--import=data:text/javascript,${encodeURIComponent(report)}`,
      CLI,
      'bridge',
      '--help',
    ]);
    expect(stdout.match(/^start .*$/gm)).toEqual(['start as is']);
  });
});
