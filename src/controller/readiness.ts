/**
 * What the `Ready` condition says about a deployed server, computed from the Deployment and
 * its Pods as cached: a pure function, so every case is a unit test.
 *
 * Ready is True when the rollout of the current spec is complete (`kubectl rollout status`
 * semantics: the Deployment controller has seen the current generation, every replica runs the
 * current template and is available). Otherwise it is False with the most specific reason we
 * can find, most actionable first: the kubelet's waiting reasons (ImagePullBackOff,
 * CrashLoopBackOff), the scheduler's PodScheduled=False/Unschedulable, the Deployment's
 * Progressing=False/ProgressDeadlineExceeded, and plain Progressing last.
 * https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#deployment-status
 */
import type { V1ContainerStatus, V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { Condition } from '../api/core-v1.ts';
import { ConditionStatus, DiscoveredReason, ReadyReason } from '../api/v1alpha1/conditions.ts';

export interface Readiness {
  status: ConditionStatus;
  reason: ReadyReason;
  message: string;
}

const notReady = (reason: ReadyReason, message: string): Readiness => ({
  status: ConditionStatus.False,
  reason,
  message,
});

/** Another component's message, embedded mid-sentence: without its final period. */
const clause = (text: string | undefined, fallback: string): string =>
  text?.trim().replace(/\.$/, '') || fallback;

/** Progressing, before the Deployment controller has acted on the latest spec. */
export const ROLLOUT_PENDING = 'Waiting for the Deployment controller to act on the latest change.';

/** Kubelet waiting reasons that mean the image cannot be pulled. */
const IMAGE_PULL_REASONS = new Set(['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName']);

/** The first failure a pod shows, with a message that says what to check. */
export function podFailure(pod: V1Pod): Readiness | undefined {
  const name = pod.metadata?.name ?? '';
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    return notReady(
      ReadyReason.Unschedulable,
      `Pod ${name} cannot be scheduled: ${clause(scheduled.message, 'no node fits')}. ` +
        'Check spec.resources and spec.pod nodeSelector, tolerations and affinity against the nodes.',
    );
  }
  const statuses: V1ContainerStatus[] = [
    ...(pod.status?.initContainerStatuses ?? []),
    ...(pod.status?.containerStatuses ?? []),
  ];
  for (const cs of statuses) {
    const waiting = cs.state?.waiting;
    const detail = waiting?.message ? `: ${clause(waiting.message, '')}` : '';
    if (waiting?.reason !== undefined && IMAGE_PULL_REASONS.has(waiting.reason)) {
      return notReady(
        ReadyReason.ImagePullBackOff,
        `Container ${cs.name} of pod ${name} cannot pull image ${cs.image} (${waiting.reason}${detail}). ` +
          'Check spec.image and spec.pod.imagePullSecrets.',
      );
    }
    if (waiting?.reason === 'CrashLoopBackOff') {
      const exit = cs.lastState?.terminated;
      const last = exit
        ? `, last exit code ${exit.exitCode}${exit.reason ? ` (${exit.reason})` : ''}`
        : '';
      return notReady(
        ReadyReason.CrashLoopBackOff,
        `Container ${cs.name} of pod ${name} keeps crashing (${cs.restartCount} restarts${last}). ` +
          `See kubectl logs ${name} -c ${cs.name} --previous.`,
      );
    }
  }
  return undefined;
}

/** Readiness of a server deployed as `deployment` (undefined: not created yet). */
export function deploymentReadiness(
  deployment: V1Deployment | undefined,
  pods: readonly V1Pod[],
): Readiness {
  if (deployment === undefined) return notReady(ReadyReason.Progressing, ROLLOUT_PENDING);
  const name = deployment.metadata?.name ?? '';
  const desired = deployment.spec?.replicas ?? 1;
  const status = deployment.status ?? {};
  const observed = (status.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0);
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const total = status.replicas ?? 0;
  if (desired === 0) {
    return notReady(ReadyReason.ScaledToZero, 'spec.replicas is 0: no server pod runs.');
  }
  if (observed && updated >= desired && available >= desired && total <= updated) {
    return {
      status: ConditionStatus.True,
      reason: ReadyReason.Available,
      message: `${available}/${desired} pods available.`,
    };
  }
  for (const pod of pods) {
    const failure = podFailure(pod);
    if (failure !== undefined) return failure;
  }
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return notReady(
      ReadyReason.ProgressDeadlineExceeded,
      `Deployment ${name} made no progress within its deadline: ${clause(progressing.message, 'no detail')}. ` +
        `See kubectl describe deployment ${name} and its pods' events.`,
    );
  }
  return notReady(
    ReadyReason.Progressing,
    observed
      ? `Rolling out: ${updated}/${desired} pods updated, ${available}/${desired} available.`
      : ROLLOUT_PENDING,
  );
}

/**
 * Readiness of a `url` server: nothing is deployed, so it is whatever discovery last found
 * (the Discovered condition, written by the discovery scheduler).
 */
export function externalReadiness(url: string, discovered: Condition | undefined): Readiness {
  const external = (status: ConditionStatus, message: string): Readiness => ({
    status,
    reason: ReadyReason.External,
    message,
  });
  if (discovered?.status === ConditionStatus.True) {
    return external(ConditionStatus.True, `Nothing deployed; the server at ${url} answers.`);
  }
  // Ready means the server answers; an answer discovery cannot use is Discovered's to report.
  if (discovered?.reason === DiscoveredReason.InvalidAnswer) {
    return external(
      ConditionStatus.True,
      `Nothing deployed; the server at ${url} answers, but discovery cannot use the answer (see the Discovered condition).`,
    );
  }
  if (discovered?.reason === DiscoveredReason.Disabled) {
    return external(
      ConditionStatus.Unknown,
      `Nothing deployed and discovery is disabled, so nothing checks that ${url} answers.`,
    );
  }
  if (
    discovered?.status === ConditionStatus.False &&
    discovered.reason !== DiscoveredReason.Pending
  ) {
    return external(
      ConditionStatus.False,
      `The server at ${url} does not answer: ${clause(discovered.message, 'no detail')}.`,
    );
  }
  return external(
    ConditionStatus.Unknown,
    `Nothing deployed; waiting for the first discovery of ${url}.`,
  );
}
