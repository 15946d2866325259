/**
 * Who is using the CPU while a bench cell runs, from /proc (Linux): the load generator itself,
 * the processes it started (the target under test: an HTTP server and its MCP server children,
 * or the stdio servers of the direct row), and everything else on the machine. A cell is only
 * meaningful when the last one's processes are gone and nothing else of the bench is busy; on a
 * shared machine the rest is reported, not hidden.
 */

import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface ProcessEntry {
  parent: number;
  /** user + system, in clock ticks. */
  ticks: number;
}

function processTable(): Map<number, ProcessEntry> {
  const table = new Map<number, ProcessEntry>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may hold spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(entry), {
        parent: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
      });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** `root` and every process below it. */
export function processTree(root: number, table = processTable()): number[] {
  const tree = [root];
  for (let i = 0; i < tree.length; i++)
    for (const [child, { parent }] of table) if (parent === tree[i]) tree.push(child);
  return tree;
}

/** Busy ticks of the whole machine (every core), from /proc/stat. */
function machineBusyTicks(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .slice(0, 200)
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .map(Number);
  return user! + nice! + system! + irq! + softirq! + steal!;
}

export interface CpuSample {
  at: number;
  machine: number;
  /** The processes the bench started (below this process), by pid. */
  started: Map<number, number>;
}

/** CPU counters now: the machine's, and each process the bench started. */
export function sampleCpu(): CpuSample {
  const table = processTable();
  const started = new Map<number, number>();
  for (const pid of processTree(process.pid, table).slice(1))
    started.set(pid, table.get(pid)!.ticks);
  return { at: performance.now(), machine: machineBusyTicks(), started };
}

export interface CpuSplit {
  /** Seconds of CPU used by the processes the bench started (alive at both samples). */
  started: number;
  /** Seconds of CPU used by everything else than the bench and what it started, in % of one core. */
  othersPercent: number;
}

/** How the CPU between two samples was split; `ownSeconds` is this process's CPU meanwhile. */
export function cpuBetween(before: CpuSample, after: CpuSample, ownSeconds: number): CpuSplit {
  let startedTicks = 0;
  for (const [pid, ticks] of after.started) {
    const earlier = before.started.get(pid);
    if (earlier !== undefined) startedTicks += ticks - earlier;
  }
  const started = startedTicks / TICKS_PER_SECOND;
  const machine = (after.machine - before.machine) / TICKS_PER_SECOND;
  const elapsed = (after.at - before.at) / 1000;
  const others = Math.max(0, machine - started - ownSeconds);
  return { started, othersPercent: (others / elapsed) * 100 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until none of `pids` (the processes of the cell before) is left, even those that were
 * re-parented away from the bench when their parent exited first; a process that outlives
 * `timeoutMs` is named, since whatever it does would count against the next cell.
 */
export async function waitGone(pids: readonly number[], timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const table = processTable();
    const left = pids.filter((pid) => table.has(pid));
    if (left.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`processes of the previous cell are still running: ${left.join(' ')}`);
    await sleep(50);
  }
}

/** The processes the bench has started and not yet seen end. */
export const startedProcesses = (): number[] => processTree(process.pid).slice(1);

/** RSS of a process and all its descendants, in MiB. */
export function treeRssMiB(pid: number): number {
  let kib = 0;
  for (const member of processTree(pid)) {
    try {
      kib += Number(
        /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${member}/status`, 'utf8'))?.[1] ?? 0,
      );
    } catch {
      // gone meanwhile
    }
  }
  return kib / 1024;
}

/**
 * Waits, up to `maxMs`, for a moment in which the rest of the machine uses less than
 * `percent` of a core, so that a cell does not start in another program's burst. On a busy
 * shared machine it gives up: the cell's "others" figure then says what it shared.
 */
export async function quiet(percent = 25, windowMs = 300, maxMs = 3000): Promise<void> {
  const deadline = performance.now() + maxMs;
  while (performance.now() < deadline) {
    const before = sampleCpu();
    const own = process.cpuUsage();
    await sleep(windowMs);
    const used = process.cpuUsage(own);
    const split = cpuBetween(before, sampleCpu(), (used.user + used.system) / 1e6);
    if (split.othersPercent < percent) return;
  }
}

/**
 * Puts this process, and so everything it starts, in a CPU cgroup of its own, as a pod's
 * containers are. Processes in the root CPU cgroup are scheduled by autogroup
 * (/proc/sys/kernel/sched_autogroup_enabled): every session (setsid) gets one share. The bridge
 * starts each MCP server in a session of its own (so it can signal the server's process group),
 * so 128 servers would each get as much CPU as the bridge and the load generator together,
 * which starves the bridge; in a cgroup, as in Kubernetes, autogroup does not apply. Returns
 * what it did, for the report; the cgroup is removed when this process exits.
 */
export function ownCpuGroup(): string {
  const autogroup = readOr('/proc/sys/kernel/sched_autogroup_enabled').trim() === '1';
  if (!autogroup) return 'autogroup scheduling is off';
  const v1 = /^\d+:(?:[\w,]*,)?cpu(?:,[\w,]*)?:(.*)$/m.exec(readOr('/proc/self/cgroup'));
  const root = v1 ? '/sys/fs/cgroup/cpu' : '/sys/fs/cgroup';
  const current = v1 ? v1[1] : /^0::(.*)$/m.exec(readOr('/proc/self/cgroup'))?.[1];
  if (current !== '/')
    return `already in CPU cgroup ${current ?? '?'}, where autogroup does not apply`;
  const group = join(root, `bench-bridge-${process.pid}`);
  try {
    mkdirSync(group);
    writeFileSync(join(group, 'cgroup.procs'), String(process.pid));
  } catch (error) {
    return `WARNING: autogroup applies and no CPU cgroup could be made (${String(error)}): sessions of the bridge's children starve it`;
  }
  process.on('exit', () => {
    writeFileSync(join(root, 'cgroup.procs'), String(process.pid));
    // Processes just signalled (stopStartedOnExit) leave it within moments.
    for (let attempt = 0; attempt < 40; attempt++) {
      try {
        rmdirSync(group);
        return;
      } catch {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
      }
    }
  });
  return `in CPU cgroup ${group} (autogroup would give each MCP server session its own share)`;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Ends every process the bench started when it exits, also on Ctrl-C or SIGTERM: children
 * outlive a parent that dies, and a bench stopped half-way used to leave its servers (a bridge
 * with a warm pool, supergateway) running, to share the cores with the next run. The tree is
 * read first and signalled at once, so a bridge's children are reached before they are
 * re-parented away.
 */
export function stopStartedOnExit(): void {
  process.on('exit', () => {
    for (const pid of startedProcesses()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143));
}
