/**
 * The part of MCPServer status the controller owns, computed from what one reconcile pass
 * observed — a pure function, so it is unit tested case by case.
 *
 * Ownership: status is written whole, at most once per pass (a JSON patch of the status
 * subresource that tests the server's uid: reconcile.ts `statusWrite`), and only by the
 * operator: these fields, and the discovery part (`Discovered` and `Drifted`,
 * status.discovery, status.drift) that src/discovery/discovery-status.ts computes from the latest
 * discovery result and that the reconcile pass merges in. One writer, so no two writes race.
 *
 * metav1.Condition semantics (API conventions, "Typical status properties"):
 * `lastTransitionTime` moves only when `status` changes, not when reason or message do;
 * `observedGeneration` says which spec the condition describes.
 */
import type { Condition } from '../api/core-v1.ts';
import { ConditionType, findCondition, nextCondition } from '../api/v1alpha1/conditions.ts';
import type { MCPServerStatus } from '../api/v1alpha1/mcpserver.ts';
import { MESSAGE_MAX, shown } from '../tools/text.ts';
import type { Readiness } from './readiness.ts';

export interface ControllerStatus {
  observedGeneration: number;
  conditions: Condition[];
  endpoint?: string;
  replicas?: number;
  readyReplicas?: number;
}

export interface StatusInput {
  generation: number;
  current: MCPServerStatus | undefined;
  readiness: Readiness;
  endpoint: string | undefined;
  /** Pod counts of a deployed server; undefined for a url server. */
  replicas?: { replicas: number; readyReplicas: number };
  now: Date;
}

export function computeStatus(input: StatusInput): ControllerStatus {
  const ready = nextCondition(
    findCondition(input.current, ConditionType.Ready),
    {
      type: ConditionType.Ready,
      status: input.readiness.status,
      observedGeneration: input.generation,
      reason: input.readiness.reason,
      // It quotes other components (the kubelet, a registry, discovery of a url server): their
      // text is shown and bounded, so that the API server never refuses the status write.
      message: shown(input.readiness.message, MESSAGE_MAX),
    },
    input.now,
  );
  return {
    observedGeneration: input.generation,
    conditions: [ready],
    ...(input.endpoint === undefined ? {} : { endpoint: input.endpoint }),
    ...input.replicas,
  };
}

const CONDITION_FIELDS = [
  'status',
  'observedGeneration',
  'lastTransitionTime',
  'reason',
  'message',
] as const;

/** Whether writing `next` would change anything in `current`: if not, the pass writes nothing. */
export function statusDiffers(
  current: MCPServerStatus | undefined,
  next: ControllerStatus,
): boolean {
  if (
    current?.observedGeneration !== next.observedGeneration ||
    current.endpoint !== next.endpoint ||
    current.replicas !== next.replicas ||
    current.readyReplicas !== next.readyReplicas
  ) {
    return true;
  }
  return next.conditions.some((want) => {
    const have = findCondition(current, want.type);
    return have === undefined || CONDITION_FIELDS.some((field) => have[field] !== want[field]);
  });
}
