import { describe, expect, it } from 'vitest';
import { containerOf, podSpecOf, stdio, streamableHttp } from './fixtures.ts';

const allContainers = (spec: ReturnType<typeof podSpecOf>) => [
  ...(spec.initContainers ?? []),
  ...spec.containers,
];

describe('render: restricted pod security by default', () => {
  it.each([
    ['stdio', stdio()],
    ['streamable-http', streamableHttp()],
  ])(
    '%s: non-root with RuntimeDefault seccomp, one UID and fsGroup for all containers',
    (_, server) => {
      const pod = podSpecOf(server);
      expect(pod.securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        fsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      for (const container of allContainers(pod)) {
        // No container overrides the pod's user: the server and the bridge share the FIFOs.
        expect(container.securityContext?.runAsUser, container.name).toBeUndefined();
        expect(container.securityContext?.allowPrivilegeEscalation, container.name).toBe(false);
        expect(container.securityContext?.capabilities, container.name).toEqual({ drop: ['ALL'] });
        expect(container.securityContext?.readOnlyRootFilesystem, container.name).toBe(true);
      }
    },
  );

  it('merges spec.pod.securityContext over the defaults', () => {
    const pod = podSpecOf(
      stdio({
        pod: { securityContext: { runAsUser: 1000, fsGroup: 2000, supplementalGroups: [3000] } },
      }),
    );
    expect(pod.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 65532,
      fsGroup: 2000,
      supplementalGroups: [3000],
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('lets a server write its root filesystem when asked, and only the server', () => {
    const pod = podSpecOf(stdio({ securityContext: { readOnlyRootFilesystem: false } }));
    expect(containerOf(pod, 'server').securityContext?.readOnlyRootFilesystem).toBe(false);
    expect(containerOf(pod, 'bridge').securityContext?.readOnlyRootFilesystem).toBe(true);
    expect(containerOf(pod, 'bridge-install').securityContext?.readOnlyRootFilesystem).toBe(true);
  });
});
