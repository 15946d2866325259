import { describe, expect, it } from 'vitest';
import type { MCPServerStatus } from '../../src/api/v1alpha1/mcpserver.ts';
import type { Readiness } from '../../src/controller/readiness.ts';
import {
  computeStatus,
  statusDiffers,
  type StatusInput,
} from '../../src/controller/ready-status.ts';
import { metaTime } from '../../src/api/core-v1.ts';
import { MESSAGE_MAX } from '../../src/tools/text.ts';

const T0 = new Date('2026-03-01T10:00:00.250Z');
const T1 = new Date('2026-03-01T10:05:00.000Z');
const available: Readiness = {
  status: 'True',
  reason: 'Available',
  message: '1/1 pods available.',
};
const progressing: Readiness = { status: 'False', reason: 'Progressing', message: 'Rolling out.' };

const input = (over: Partial<StatusInput>): StatusInput => ({
  generation: 2,
  current: undefined,
  readiness: progressing,
  endpoint: 'http://srv.ns.svc.cluster.local:8080/mcp',
  replicas: { replicas: 1, readyReplicas: 0 },
  now: T0,
  ...over,
});

describe('computeStatus', () => {
  it('writes observedGeneration, the Ready condition, endpoint and replica counts', () => {
    expect(computeStatus(input({}))).toEqual({
      observedGeneration: 2,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          observedGeneration: 2,
          lastTransitionTime: '2026-03-01T10:00:00Z',
          reason: 'Progressing',
          message: 'Rolling out.',
        },
      ],
      endpoint: 'http://srv.ns.svc.cluster.local:8080/mcp',
      replicas: 1,
      readyReplicas: 0,
    });
  });

  it('keeps lastTransitionTime while the status stays, even when reason and message change', () => {
    const first = computeStatus(input({}));
    const crashing: Readiness = { status: 'False', reason: 'CrashLoopBackOff', message: 'crash' };
    const second = computeStatus(input({ current: first, readiness: crashing, now: T1 }));
    expect(second.conditions[0]).toMatchObject({
      reason: 'CrashLoopBackOff',
      lastTransitionTime: metaTime(T0),
    });
  });

  it('bounds the Ready message and shows the control characters of the text it embeds', () => {
    // A url server's Ready quotes discovery, a pod's quotes the kubelet and the registry.
    const quoted = `pull failed: \u001b[2J${'x'.repeat(40_000)}`;
    const readiness: Readiness = { status: 'False', reason: 'ImagePullBackOff', message: quoted };
    const { message } = computeStatus(input({ readiness })).conditions[0]!;
    expect(message.length).toBeLessThanOrEqual(MESSAGE_MAX);
    expect(message).toMatch(/^pull failed: \\e\[2Jxxx.*… \(\d+ more characters\)$/);
  });

  it('moves lastTransitionTime when the status changes', () => {
    const first = computeStatus(input({}));
    const second = computeStatus(input({ current: first, readiness: available, now: T1 }));
    expect(second.conditions[0]).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-03-01T10:05:00Z',
    });
  });

  it('omits replica counts and endpoint when there are none', () => {
    const status = computeStatus(input({ endpoint: undefined, replicas: undefined }));
    expect(Object.keys(status).sort()).toEqual(['conditions', 'observedGeneration']);
  });
});

describe('statusDiffers', () => {
  const discoveredStatus = (base: MCPServerStatus): MCPServerStatus => ({
    ...base,
    conditions: [
      ...(base.conditions ?? []),
      {
        type: 'Discovered',
        status: 'True',
        reason: 'Succeeded',
        message: '3 tools',
        lastTransitionTime: '2026-03-01T09:00:00Z',
      },
    ],
    discovery: { toolCount: 3 },
  });

  it('is false for a pass that observed nothing new, whatever discovery wrote', () => {
    const written = computeStatus(input({}));
    const live = discoveredStatus(written);
    expect(statusDiffers(live, computeStatus(input({ current: live, now: T1 })))).toBe(false);
  });

  it('is true for a first status, a new generation, a new reason, or new counts', () => {
    const live = discoveredStatus(computeStatus(input({})));
    expect(statusDiffers(undefined, computeStatus(input({})))).toBe(true);
    expect(statusDiffers(live, computeStatus(input({ current: live, generation: 3 })))).toBe(true);
    const crash: Readiness = { ...progressing, reason: 'CrashLoopBackOff' };
    expect(statusDiffers(live, computeStatus(input({ current: live, readiness: crash })))).toBe(
      true,
    );
    const counts = { replicas: 1, readyReplicas: 1 };
    expect(statusDiffers(live, computeStatus(input({ current: live, replicas: counts })))).toBe(
      true,
    );
  });

  it('is true when a field the controller wrote must go away', () => {
    const live = computeStatus(input({}));
    const urlServer = computeStatus(input({ current: live, replicas: undefined }));
    expect(statusDiffers(live, urlServer)).toBe(true);
  });
});
