/**
 * How often a rollout in progress is told in status. Every Deployment and Pod change of a
 * server that rolls out enqueues it, and each pass would write the next Progressing message
 * ("1/1 pods updated, 0/1 available", …) with its replica counts: while a thousand servers roll
 * out at once, those writes compete for the API server with the rollouts they describe. A
 * status whose only news is progress within the same rollout is written at most once per
 * interval per server, and the pass asks to be requeued for then.
 *
 * The first status of a new server waits as long when all it would say is that the first
 * rollout is under way: a rollout that ends within the interval then costs one status write
 * (Ready) instead of two. A status write on an MCPServer costs the API server several times a
 * core object's write (its schema and validation rules run each time), and while a thousand
 * servers are created at once those writes compete with the rollouts. The first word on a later
 * generation, Ready, a failure reason and discovery's news are written at once.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  ConditionStatus,
  ConditionType,
  ReadyReason,
  findCondition,
} from '../api/v1alpha1/conditions.ts';
import type { MCPServerStatus } from '../api/v1alpha1/mcpserver.ts';
import type { Condition } from '../api/core-v1.ts';

/**
 * Whether the Ready condition of `next` says Progressing, as that of `current` does for the
 * same generation, and every other condition is as it was: the caller checks the rest of
 * status (discovery, drift, provenance).
 */
export function isProgressOnly(
  current: MCPServerStatus | undefined,
  next: { observedGeneration: number; conditions: Condition[] },
): boolean {
  const others = (conditions: Condition[] | undefined) =>
    (conditions ?? []).filter((c) => c.type !== ConditionType.Ready);
  return (
    isProgressing(findCondition(current, ConditionType.Ready)) &&
    isProgressing(findCondition(next, ConditionType.Ready)) &&
    current?.observedGeneration === next.observedGeneration &&
    isDeepStrictEqual(others(current?.conditions), others(next.conditions))
  );
}

/**
 * Whether `next` is the first status of a server (nothing written yet) and says only that its
 * first rollout is under way.
 */
export function isFirstRollout(
  current: MCPServerStatus | undefined,
  next: { conditions: Condition[] },
): boolean {
  return (
    (current?.conditions ?? []).length === 0 &&
    isProgressing(findCondition(next, ConditionType.Ready))
  );
}

export const isProgressing = (ready: Condition | undefined): boolean =>
  ready?.status === ConditionStatus.False && ready.reason === ReadyReason.Progressing;

export class ProgressWrites {
  readonly #intervalMs: number;
  /** When each rolling-out server's status was last written; only those servers. */
  readonly #writtenAt = new Map<string, number>();
  /** When a new server's first rollout was first seen, until its first status is written. */
  readonly #firstSeenAt = new Map<string, number>();

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** Milliseconds to hold a progress-only write of `key`; 0 when it may go now. */
  holdMs(key: string, now: number): number {
    const at = this.#writtenAt.get(key);
    return at === undefined ? 0 : Math.max(0, at + this.#intervalMs - now);
  }

  /** Milliseconds to hold the first status of `key`, counted from the first time it is asked. */
  firstHoldMs(key: string, now: number): number {
    const seen = this.#firstSeenAt.get(key);
    if (seen === undefined) this.#firstSeenAt.set(key, now);
    return Math.max(0, (seen ?? now) + this.#intervalMs - now);
  }

  /** A status was written for `key`; `progressing` says whether it was a Progressing one. */
  written(key: string, progressing: boolean, now: number): void {
    this.#firstSeenAt.delete(key);
    if (progressing) this.#writtenAt.set(key, now);
    else this.#writtenAt.delete(key);
  }

  forget(key: string): void {
    this.#writtenAt.delete(key);
    this.#firstSeenAt.delete(key);
  }
}
