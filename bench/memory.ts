/**
 * Where the operator's memory goes, measured from outside and inside its process:
 * - the container it would run in: a memory cgroup with the chart's `resources.limits.memory`,
 *   from which the operator sizes V8's heap at start (src/heap-limit.ts), as in a pod;
 * - peak RSS per phase: the kernel's high-water mark (VmHWM), reset between phases through
 *   /proc/<pid>/clear_refs;
 * - at that peak, what it was made of: a probe loaded into the operator (`--import`) samples
 *   process.memoryUsage(), V8's young generation and the file-backed part of RSS, and keeps
 *   the sample of the highest RSS.
 */
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import type { HeapSpaceInfo } from 'node:v8';

const MIB = 1024 * 1024;

/** The operator container's memory limit in the chart's default values, in bytes. */
export function chartMemoryLimit(): number {
  const values = load(
    readFileSync(join(import.meta.dirname, '..', 'charts/mcp-operator/values.yaml'), 'utf8'),
  ) as { resources?: { limits?: { memory?: string } } };
  const limit = values.resources?.limits?.memory ?? '';
  const match = /^(\d+)(Mi|Gi)$/.exec(limit);
  if (match === null) throw new Error(`chart resources.limits.memory ${limit}: expected Mi or Gi`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1) * MIB;
}

export interface MemoryCgroup {
  /** A command prefix that runs the rest of the command line in the cgroup. */
  launcher: string[];
  /** What it is, for the report. */
  description: string;
  /** Processes in the group the kernel's OOM killer has ended so far. */
  oomKills: () => number;
}

/**
 * A memory cgroup of `limitBytes` under this process's own (cgroup v1 or v2), removed when this
 * process exits; the reason instead when none can be made (no permission, no controller).
 */
export function memoryCgroup(limitBytes: number): MemoryCgroup | string {
  const cgroups = readOr('/proc/self/cgroup');
  const v1 = /^\d+:(?:[\w,]*,)?memory(?:,[\w,]*)?:(.*)$/m.exec(cgroups);
  const parent = v1
    ? join('/sys/fs/cgroup/memory', v1[1]!)
    : join('/sys/fs/cgroup', /^0::(.*)$/m.exec(cgroups)?.[1] ?? '/');
  const group = join(parent, `bench-operator-${process.pid}`);
  try {
    mkdirSync(group);
    writeFileSync(join(group, v1 ? 'memory.limit_in_bytes' : 'memory.max'), String(limitBytes));
  } catch (error) {
    return `no memory cgroup (${String(error)})`;
  }
  process.on('exit', () => {
    try {
      rmdirSync(group);
    } catch {
      // Its operator is still exiting: the group stays, empty, and costs nothing.
    }
  });
  return {
    launcher: ['sh', '-c', `echo $$ > ${join(group, 'cgroup.procs')} && exec "$@"`, 'sh'],
    // `oom_kill N` in both (cgroup v1 since Linux 4.13).
    oomKills: () =>
      Number(
        /^oom_kill (\d+)$/m.exec(
          readOr(join(group, v1 ? 'memory.oom_control' : 'memory.events')),
        )?.[1] ?? Number.NaN,
      ),
    description: `in a memory cgroup of ${limitBytes / MIB} MiB, the chart's limit (cgroup ${v1 ? 'v1' : 'v2'})`,
  };
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Resets the peak RSS (VmHWM) of `pid` to its current RSS (Linux 4.0+). */
export async function resetPeakRss(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

/** One sample of the probe, in bytes. */
export interface MemorySample {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  /** V8's young generation (new_space and new_large_object_space), committed. */
  young: number;
  /** V8's compiled code (code_space and code_large_object_space), committed. */
  code: number;
  external: number;
  arrayBuffers: number;
  /** The V8 heap limit, from the flags or the cgroup. */
  heapLimit: number;
  /**
   * Resident pages mapped from files (RssFile): the node binary's code and ICU data above all,
   * shared with every process that runs it and reclaimable.
   */
  file: number;
}

/**
 * Runs inside the operator (stringified into a data: URL, so it imports nothing): samples its
 * memory every 100 ms and writes the sample of the highest RSS to `file` within a second of
 * a new peak; a new `reset` file (its content changed) starts over, so each phase has its own.
 */
function probe(file: string): void {
  const fs = process.getBuiltinModule('node:fs');
  const v8 = process.getBuiltinModule('node:v8');
  let peak: MemorySample | undefined;
  let generation = '';
  let written = true;
  const committed = (spaces: HeapSpaceInfo[], prefix: string) =>
    spaces
      .filter((space) => space.space_name.startsWith(prefix))
      .reduce((total, space) => total + space.space_size, 0);
  setInterval(() => {
    if (peak !== undefined && process.memoryUsage.rss() <= peak.rss) return;
    const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
    const heapLimit = v8.getHeapStatistics().heap_size_limit;
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const file = Number(/^RssFile:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) * 1024;
    const spaces = v8.getHeapSpaceStatistics();
    const young = committed(spaces, 'new_');
    const code = committed(spaces, 'code_');
    peak = { rss, heapTotal, heapUsed, young, code, external, arrayBuffers, heapLimit, file };
    written = false;
  }, 100).unref();
  setInterval(() => {
    let asked = '';
    try {
      asked = fs.readFileSync(`${file}.reset`, 'utf8');
    } catch {
      // Not asked yet.
    }
    if (asked !== generation) {
      generation = asked;
      peak = undefined;
      return;
    }
    if (peak === undefined || written) return;
    fs.writeFileSync(file, JSON.stringify(peak));
    written = true;
  }, 1000).unref();
}

export class MemoryProbe {
  readonly #file: string;
  #resets = 0;

  constructor(file: string) {
    this.#file = file;
  }

  /** The Node flag that loads the probe into the operator. */
  get nodeArgs(): string[] {
    const code = `(${probe.toString()})(${JSON.stringify(this.#file)});`;
    return [`--import=data:text/javascript,${encodeURIComponent(code)}`];
  }

  /** Starts a new phase: the probe forgets its peak within a second. */
  async reset(): Promise<void> {
    this.#resets += 1;
    await writeFile(`${this.#file}.reset`, String(this.#resets));
    await writeFile(this.#file, '');
  }

  /** The sample of the highest RSS since the last reset, once the probe wrote one. */
  async peak(): Promise<MemorySample | undefined> {
    const text = await readFile(this.#file, 'utf8').catch(() => '');
    return text === '' ? undefined : (JSON.parse(text) as MemorySample);
  }
}

/**
 * `rss 120 = heap 60 (used 40, young 16, code 3) + external 5 (array buffers 2) + file-backed 50 +
 * other native 5`, in MiB.
 */
export function breakdown(sample: MemorySample | undefined): string {
  if (sample === undefined) return 'no sample';
  const mib = (bytes: number) => (bytes / MIB).toFixed(0);
  const other = sample.rss - sample.heapTotal - sample.external - sample.file;
  return `rss ${mib(sample.rss)} = heap ${mib(sample.heapTotal)} (used ${mib(sample.heapUsed)}, young ${mib(sample.young)}, code ${mib(sample.code)}) + external ${mib(sample.external)} (array buffers ${mib(sample.arrayBuffers)}) + file-backed ${mib(sample.file)} + other native ${mib(other)}; heap limit ${mib(sample.heapLimit)}`;
}
