/**
 * The Pod cache keeps only what reconcile reads: what readiness and provenance make of a
 * cached Pod must be what they make of the Pod the API server sent.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podFacts, type Pod } from '../../src/controller/caches.ts';
import { imageDigests } from '../../src/controller/provenance.ts';
import { podFailure } from '../../src/controller/readiness.ts';

const DIGEST = `sha256:${'a'.repeat(64)}`;

const fullPod = (status: V1Pod['status']): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-7d9f-abcde',
    namespace: 'team-a',
    uid: 'u-1',
    resourceVersion: '42',
    labels: { 'app.kubernetes.io/instance': 'web' },
    annotations: { 'mcp-operator.dev/checksum': 'x'.repeat(64) },
  },
  spec: {
    containers: [
      {
        name: 'server',
        image: 'example.com/mcp/web:1',
        args: ['--port', '3000'],
        env: [{ name: 'LOG', value: 'debug' }],
        resources: { requests: { cpu: '100m', memory: '128Mi' } },
      },
    ],
    volumes: [{ name: 'token', secret: { secretName: 'web-discovery' } }],
  },
  status,
});

describe('podFacts', () => {
  it('keeps what readiness reads: an image that cannot be pulled, a crash loop', () => {
    const pulling = fullPod({
      containerStatuses: [
        {
          name: 'server',
          image: 'example.com/mcp/web:1',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ImagePullBackOff', message: 'not found' } },
        },
      ],
    });
    const crashing = fullPod({
      containerStatuses: [
        {
          name: 'server',
          image: 'example.com/mcp/web:1',
          imageID: DIGEST,
          ready: false,
          restartCount: 4,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 1, reason: 'Error' } },
        },
      ],
    });
    for (const pod of [pulling, crashing]) {
      expect(podFailure(podFacts(pod))).toEqual(podFailure(pod));
      expect(podFailure(podFacts(pod))).toBeDefined();
    }
  });

  it('keeps what readiness reads of scheduling', () => {
    const unschedulable = fullPod({
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/3 nodes are available',
        },
      ],
    });
    expect(podFailure(podFacts(unschedulable))?.reason).toBe('Unschedulable');
  });

  it('keeps what provenance reads: the image each container runs and its digest', () => {
    const running = fullPod({
      containerStatuses: [
        {
          name: 'server',
          image: 'example.com/mcp/web:1',
          imageID: `example.com/mcp/web@${DIGEST}`,
          ready: true,
          restartCount: 0,
          state: { running: {} },
        },
      ],
    });
    expect(imageDigests([podFacts(running)], 'server', 'example.com/mcp/web:1')).toEqual([DIGEST]);
  });

  it('drops the spec beyond names and images, and annotations', () => {
    const facts = podFacts(fullPod({}));
    expect(facts.spec?.containers).toEqual([{ name: 'server', image: 'example.com/mcp/web:1' }]);
    expect(facts.spec?.volumes).toBeUndefined();
    expect(facts.metadata.annotations).toBeUndefined();
    expect(facts.metadata.labels).toEqual({ 'app.kubernetes.io/instance': 'web' });
  });
});
