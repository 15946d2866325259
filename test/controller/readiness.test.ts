import type { V1ContainerStatus, V1Deployment, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../src/api/core-v1.ts';
import {
  deploymentReadiness,
  externalReadiness,
  podFailure,
} from '../../src/controller/readiness.ts';

function deployment(
  status: NonNullable<V1Deployment['status']>,
  { replicas = 2, generation = 3 } = {},
): V1Deployment {
  return {
    metadata: { name: 'srv', generation },
    spec: { replicas } as V1Deployment['spec'],
    status,
  };
}

const rolledOut = { observedGeneration: 3, replicas: 2, updatedReplicas: 2, availableReplicas: 2 };

const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'srv-abc' }, status });

const waiting = (name: string, reason: string, extra: Partial<V1ContainerStatus> = {}) =>
  ({
    name,
    image: 'example.com/srv:1',
    imageID: '',
    ready: false,
    restartCount: 0,
    state: { waiting: { reason, message: `${reason} details` } },
    ...extra,
  }) as V1ContainerStatus;

describe('deploymentReadiness', () => {
  it('is True once every replica runs the current template and is available', () => {
    expect(deploymentReadiness(deployment(rolledOut), [])).toEqual({
      status: 'True',
      reason: 'Available',
      message: '2/2 pods available.',
    });
  });

  it('waits for a Deployment that does not exist yet', () => {
    expect(deploymentReadiness(undefined, [])).toMatchObject({
      status: 'False',
      reason: 'Progressing',
    });
  });

  it('is not Ready while the Deployment controller has not seen the latest spec', () => {
    const r = deploymentReadiness(deployment({ ...rolledOut, observedGeneration: 2 }), []);
    expect(r).toMatchObject({ status: 'False', reason: 'Progressing' });
    expect(r.message).toMatch(/latest change/);
  });

  it('is not Ready mid-rollout, even when enough old pods are available', () => {
    const r = deploymentReadiness(
      deployment({ observedGeneration: 3, replicas: 3, updatedReplicas: 1, availableReplicas: 2 }),
      [],
    );
    expect(r).toEqual({
      status: 'False',
      reason: 'Progressing',
      message: 'Rolling out: 1/2 pods updated, 2/2 available.',
    });
  });

  it('says ScaledToZero for zero replicas', () => {
    const r = deploymentReadiness(deployment({ observedGeneration: 3 }, { replicas: 0 }), []);
    expect(r).toMatchObject({ status: 'False', reason: 'ScaledToZero' });
  });

  it('names a pod that cannot pull its image, and what to check', () => {
    const pods = [pod({ containerStatuses: [waiting('server', 'ImagePullBackOff')] })];
    const r = deploymentReadiness(deployment({ observedGeneration: 3, replicas: 2 }), pods);
    expect(r.reason).toBe('ImagePullBackOff');
    expect(r.message).toBe(
      'Container server of pod srv-abc cannot pull image example.com/srv:1 (ImagePullBackOff: ImagePullBackOff details). Check spec.image and spec.pod.imagePullSecrets.',
    );
  });

  it('treats ErrImagePull and InvalidImageName as image pull failures', () => {
    for (const reason of ['ErrImagePull', 'InvalidImageName']) {
      expect(podFailure(pod({ containerStatuses: [waiting('server', reason)] }))?.reason).toBe(
        'ImagePullBackOff',
      );
    }
  });

  it('reports a crash loop with restarts, last exit code and the logs command', () => {
    const cs = waiting('server', 'CrashLoopBackOff', {
      restartCount: 4,
      lastState: { terminated: { exitCode: 1, reason: 'Error' } },
    });
    const r = deploymentReadiness(deployment({ observedGeneration: 3 }), [
      pod({ containerStatuses: [cs] }),
    ]);
    expect(r).toEqual({
      status: 'False',
      reason: 'CrashLoopBackOff',
      message:
        'Container server of pod srv-abc keeps crashing (4 restarts, last exit code 1 (Error)). See kubectl logs srv-abc -c server --previous.',
    });
  });

  it('looks at init containers too (the bridge installer)', () => {
    const r = podFailure(
      pod({ initContainerStatuses: [waiting('bridge-install', 'ErrImagePull')] }),
    );
    expect(r?.message).toMatch(/^Container bridge-install of pod srv-abc cannot pull image/);
  });

  it('reports Unschedulable with the scheduler message', () => {
    const unschedulable = pod({
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/3 nodes are available: 3 Insufficient cpu.',
        },
      ],
    });
    const r = deploymentReadiness(deployment({ observedGeneration: 3 }), [unschedulable]);
    expect(r.reason).toBe('Unschedulable');
    expect(r.message).toMatch(
      /^Pod srv-abc cannot be scheduled: 0\/3 nodes are available: 3 Insufficient cpu\. Check spec.resources/,
    );
  });

  it('reports ProgressDeadlineExceeded when no pod says more', () => {
    const r = deploymentReadiness(
      deployment({
        observedGeneration: 3,
        conditions: [
          {
            type: 'Progressing',
            status: 'False',
            reason: 'ProgressDeadlineExceeded',
            message: 'ReplicaSet "srv-1" has timed out progressing.',
          },
        ],
      }),
      [pod({ containerStatuses: [{ name: 'server', ready: false } as V1ContainerStatus] })],
    );
    expect(r.reason).toBe('ProgressDeadlineExceeded');
    expect(r.message).toMatch(/timed out progressing/);
  });

  it('prefers a pod failure over the progress deadline', () => {
    const r = deploymentReadiness(
      deployment({
        observedGeneration: 3,
        conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
      }),
      [pod({ containerStatuses: [waiting('server', 'CrashLoopBackOff')] })],
    );
    expect(r.reason).toBe('CrashLoopBackOff');
  });
});

describe('externalReadiness', () => {
  const discovered = (status: Condition['status'], reason: string, message = ''): Condition => ({
    type: 'Discovered',
    status,
    reason,
    message,
    lastTransitionTime: '2026-01-01T00:00:00Z',
  });
  const url = 'https://mcp.example.com/mcp';

  it('follows discovery: answers → True, fails → False with its message', () => {
    expect(externalReadiness(url, discovered('True', 'Succeeded'))).toMatchObject({
      status: 'True',
      reason: 'External',
    });
    expect(externalReadiness(url, discovered('False', 'Failed', 'connection refused'))).toEqual({
      status: 'False',
      reason: 'External',
      message: 'The server at https://mcp.example.com/mcp does not answer: connection refused.',
    });
  });

  it('is True when the server answers with something discovery cannot use', () => {
    const answered = externalReadiness(url, discovered('False', 'InvalidAnswer', 'not a list'));
    expect(answered).toEqual({
      status: 'True',
      reason: 'External',
      message:
        'Nothing deployed; the server at https://mcp.example.com/mcp answers, but discovery cannot use the answer (see the Discovered condition).',
    });
  });

  it('is Unknown before the first discovery and when discovery is disabled', () => {
    expect(externalReadiness(url, undefined).status).toBe('Unknown');
    expect(externalReadiness(url, discovered('False', 'Pending')).status).toBe('Unknown');
    const disabled = externalReadiness(url, discovered('False', 'Disabled'));
    expect(disabled.status).toBe('Unknown');
    expect(disabled.message).toMatch(/discovery is disabled/);
  });
});
