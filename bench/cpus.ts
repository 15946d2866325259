/**
 * CPU placement for the controller bench's --split-cpus: the control plane on one core, the
 * operator and the bench's own client on the other. In a cluster the operator runs on a worker
 * node and takes no CPU from the API server; on a machine of two cores it competes with it,
 * and then elapsed time follows the sum of both. With the cores split, the floor and the
 * operator phase give the control plane the same one core, and the ratio shows what the
 * operator's requests cost the control plane, apart from the operator's own CPU.
 */
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const CONTROL_PLANE_CPU = 0;
export const CLIENT_CPU = 1;

/** Why the cores cannot be split here, or undefined when they can. */
export function cannotSplit(components: readonly unknown[]): string | undefined {
  if (availableParallelism() < 2) return 'needs two cores';
  if (components.length === 0) return 'needs the local control plane (KUBECONFIG is set)';
  return undefined;
}

/** Pins every thread of `pid` to `cpu`; threads it starts later inherit the pinning. */
export async function pin(pid: number, cpu: number): Promise<void> {
  await run('taskset', ['--all-tasks', '--cpu-list', '--pid', String(cpu), String(pid)]);
}

/** Prefix of a command line that starts it pinned to `cpu`. */
export const pinnedLauncher = (cpu: number): string[] => ['taskset', '--cpu-list', String(cpu)];
