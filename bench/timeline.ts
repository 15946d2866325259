/**
 * Where each server's time to Ready went in the operator phase, from the bench's own watches
 * (WatchedCount's first-seen and first-done times):
 * - create: the MCPServer first seen → its Deployment first seen (the operator's first pass);
 * - rollout: the Deployment first seen → available (the cluster's work, as in the floor);
 * - status: the Deployment available → the MCPServer Ready (the operator's pass that tells it).
 * Told as percentiles over the servers, so that a tail shows in which stage it sits, with the
 * seconds from the phase's start at which half, 90% and all of the Deployments were available.
 */
import type { WatchedCount } from './harness.ts';
import type { KubeObject } from '../src/kube/resources.ts';

type Times = Pick<WatchedCount<KubeObject>, 'seenAt' | 'doneAt'>;

export interface Timeline {
  /** Milliseconds per server in each stage. */
  stages: Record<'create' | 'rollout' | 'status', number[]>;
  /** Seconds from the start until each Deployment was available, sorted. */
  availableSeconds: number[];
}

/** Milliseconds from each Deployment first seen to it available: the cluster's part. */
export function rolloutMs(deployments: Times): number[] {
  return [...deployments.doneAt].map(([name, at]) => at - (deployments.seenAt.get(name) ?? at));
}

/** Deployments are named as their servers (objectNames), in their namespaces. */
export function timeline(servers: Times, deployments: Times, startedMs: number): Timeline {
  const stages: Timeline['stages'] = { create: [], rollout: rolloutMs(deployments), status: [] };
  for (const [name, created] of servers.seenAt) {
    const deployed = deployments.seenAt.get(name);
    const available = deployments.doneAt.get(name);
    const ready = servers.doneAt.get(name);
    if (deployed !== undefined) stages.create.push(deployed - created);
    if (available !== undefined && ready !== undefined) stages.status.push(ready - available);
  }
  const availableSeconds = [...deployments.doneAt.values()]
    .map((at) => (at - startedMs) / 1000)
    .sort((a, b) => a - b);
  return { stages, availableSeconds };
}

/** The value below which `fraction` of `sorted` lie (nearest rank). */
export function quantile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length, Math.ceil(fraction * sorted.length)) - 1]!;
}

/** `create 1.2/3.4/5.6, …`: p50/p90/max in seconds. */
export function stagesText(stages: Record<string, number[]>): string {
  return Object.entries(stages)
    .map(([stage, ms]) => {
      const sorted = [...ms].sort((a, b) => a - b);
      const s = (fraction: number) => (quantile(sorted, fraction) / 1000).toFixed(1);
      return `${stage} ${s(0.5)}/${s(0.9)}/${s(1)}`;
    })
    .join(', ');
}
