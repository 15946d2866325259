/**
 * V8's heap limit from the container's memory limit, for the processes that run in a pod: the
 * operator and the bridge sidecar.
 *
 * Node sizes the old generation from the cgroup limit, but never below 256 MiB on 64-bit: in a
 * container of 256 MiB the heap limit is 259 MiB, above the container's, so under pressure the
 * kernel's OOM killer ends the process before V8 collects harder near its own limit. The rest of
 * the process needs memory too: the young generation, compiled code, malloc'd memory (sockets,
 * TLS, zlib), buffers, and the pages of the node binary (about 45 MiB resident, reclaimable).
 * At the operator's peak with 1,000 servers those were 70 to 85 MiB beside a heap of 53 to
 * 70 MiB (bench/discovery-operator.ts).
 *
 * The heap limit can only be set when the process starts, so `heapRelaunch` says with which
 * flag to start again (cli.ts replaces the process, keeping its pid, its arguments and
 * environment). Pure: the inputs are read by the caller.
 */

const MIB = 1024 * 1024;

/** What the process keeps beside V8's old generation, at least. */
export const NATIVE_RESERVE_MIB = 64;

/**
 * The Node flags that set the heap limit, in either spelling V8 takes (`-` or `_`); one given by
 * the user (or by the relaunch) is kept.
 */
const HEAP_FLAGS = /(^|\s)--max[-_](old[-_]space[-_]size([-_]percentage)?|heap[-_]size)[=\s]/;

/**
 * The old generation's limit in MiB (`--max-old-space-size`) for a container limit of
 * `limitBytes`: a quarter of the limit, and at least 64 MiB, left for everything else, but never
 * less than half the limit for the heap.
 */
export function heapLimitMiB(limitBytes: number): number {
  const limit = Math.floor(limitBytes / MIB);
  const reserve = Math.max(NATIVE_RESERVE_MIB, Math.ceil(limit / 4));
  return Math.max(limit - reserve, Math.floor(limit / 2));
}

export interface HeapInputs {
  /** process.constrainedMemory(): the cgroup's limit, or 0 or a huge number without one. */
  constrainedMemory: number;
  /** os.totalmem(): a "limit" at or above it limits nothing. */
  totalMemory: number;
  /** process.execArgv: the Node flags this process started with. */
  execArgv: readonly string[];
  /** NODE_OPTIONS, where a heap flag may be given too. */
  nodeOptions: string | undefined;
}

/**
 * The flag to start the process again with, or undefined to run as it is: without a memory
 * limit, or when a heap flag was given (by the user, or by the relaunch itself).
 */
export function heapRelaunch(inputs: HeapInputs): string | undefined {
  const limit = inputs.constrainedMemory;
  if (!(limit > 0) || limit >= inputs.totalMemory) return undefined;
  const given = [...inputs.execArgv, inputs.nodeOptions ?? ''].some((flag) =>
    HEAP_FLAGS.test(` ${flag} `),
  );
  if (given) return undefined;
  return `--max-old-space-size=${heapLimitMiB(limit)}`;
}
