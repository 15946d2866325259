/**
 * The controller against the real control plane, in-process: MCPServers converge to their
 * objects and status through create, update and delete; what someone else changes is put
 * back; a steady-state resync writes nothing.
 */
import { PatchStrategy, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../../src/controller/manager.ts';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { cluster, reconcileCount, startOperator, writeCount } from './operator.ts';

const kc = kubeConfig();
const ns = useNamespace('ctl', kc);
const k = cluster(kc, () => ns.name);
let operator: Manager;

/**
 * Discovery off: its own schedule writes status (and the fake pods answer nothing), which
 * would blur what these tests count; test/discovery covers it.
 */
const STDIO = {
  image: 'example.com/mcp/everything:1',
  transport: 'stdio' as const,
  command: ['npx', '-y', '@modelcontextprotocol/server-everything'],
  discovery: { enabled: false },
};

beforeAll(async () => {
  await installCrd(kc);
  operator = await startOperator(ns.name, ['--resync-period=1s']);
});

afterAll(async () => {
  await operator?.stop();
});

const deployment = (name: string) => k.apps.readNamespacedDeployment({ name, namespace: ns.name });

/** Server pods that exist now (not being deleted). */
async function pods(name: string): Promise<V1Pod[]> {
  const list = await k.core.listNamespacedPod({
    namespace: ns.name,
    labelSelector: `app.kubernetes.io/instance=${name}`,
  });
  return list.items.filter((p) => p.metadata?.deletionTimestamp === undefined);
}

const gone = async (read: () => Promise<unknown>): Promise<boolean> => {
  try {
    await read();
    return false;
  } catch {
    return true;
  }
};

describe('a stdio MCPServer', () => {
  it('gets a ServiceAccount, Service and Deployment, and Ready with its endpoint', async () => {
    await k.create('alpha', STDIO);
    const server = await k.waitForReady('alpha', 'True', 'Available');
    expect(server.status).toMatchObject({
      observedGeneration: 1,
      endpoint: `http://alpha.${ns.name}.svc:8080/mcp`,
      replicas: 1,
      readyReplicas: 1,
    });
    const d = await deployment('alpha');
    expect(d.spec?.template.spec?.containers.map((c) => c.name)).toEqual(['server', 'bridge']);
    expect(d.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'MCPServer',
      name: 'alpha',
      controller: true,
    });
    await k.core.readNamespacedService({ name: 'alpha', namespace: ns.name });
    await k.core.readNamespacedServiceAccount({ name: 'alpha', namespace: ns.name });
    const events = await k.core.listNamespacedEvent({
      namespace: ns.name,
      fieldSelector: `involvedObject.name=alpha,involvedObject.kind=MCPServer`,
    });
    // What it did, not the routine end of the rollout: that one is in status.
    const reasons = events.items.map((e) => e.reason);
    expect(reasons).toContain('Applied');
    expect(reasons).not.toContain('Available');
  });

  it('rolls its pods when the image or the environment changes', async () => {
    const before = (await pods('alpha')).map((p) => p.metadata?.name);
    await k.patchSpec('alpha', { image: 'example.com/mcp/everything:2' });
    await k.waitForReady('alpha', 'True', 'Available');
    const d = await deployment('alpha');
    expect(d.spec?.template.spec?.containers[0]?.image).toBe('example.com/mcp/everything:2');
    await waitFor('the old pod to go', async () => {
      const now = (await pods('alpha')).map((p) => p.metadata?.name);
      return now.length === 1 && !before.includes(now[0]) ? now : undefined;
    });
    const rolled = (await pods('alpha')).map((p) => p.metadata?.name);
    await k.patchSpec('alpha', { env: [{ name: 'LOG_LEVEL', value: 'debug' }] });
    const server = await k.waitForReady('alpha', 'True', 'Available');
    expect(server.status?.observedGeneration).toBe(3);
    await waitFor('the pod with the new environment', async () => {
      const now = await pods('alpha');
      const env = now[0]?.spec?.containers[0]?.env ?? [];
      return (
        now.length === 1 &&
        !rolled.includes(now[0]?.metadata?.name) &&
        env.some((e) => e.name === 'LOG_LEVEL')
      );
    });
  });

  it('scales with spec.replicas and reports the counts', async () => {
    await k.patchSpec('alpha', { replicas: 2 });
    const server = await k.waitForReady('alpha', 'True', 'Available');
    expect(server.status).toMatchObject({ replicas: 2, readyReplicas: 2 });
    expect((await deployment('alpha')).spec?.replicas).toBe(2);
  });

  it('puts back an owned object someone edited or deleted', async () => {
    const scaled = { apiVersion: 'apps/v1', kind: 'Deployment', spec: { replicas: 5 } };
    await k.objects.patch(
      { ...scaled, metadata: { name: 'alpha', namespace: ns.name } },
      undefined,
      undefined,
      'someone-else',
      undefined,
      PatchStrategy.MergePatch,
    );
    await waitFor(
      'replicas restored to 2',
      async () => (await deployment('alpha')).spec?.replicas === 2,
    );
    const service = await k.core.readNamespacedService({ name: 'alpha', namespace: ns.name });
    await k.core.deleteNamespacedService({ name: 'alpha', namespace: ns.name });
    const recreated = await waitFor('the Service to be recreated', async () => {
      const s = await k.core.readNamespacedService({ name: 'alpha', namespace: ns.name });
      return s.metadata?.uid !== service.metadata?.uid ? s : undefined;
    });
    expect(recreated.spec?.ports?.[0]?.port).toBe(8080);
  });

  it('makes no write on a steady-state resync', async () => {
    await k.waitForReady('alpha', 'True', 'Available');
    // Let rollouts and restores settle; then several 1 s resyncs must not write anything.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const writes = await writeCount(operator.url);
    const passes = await reconcileCount(operator.url);
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(await reconcileCount(operator.url)).toBeGreaterThanOrEqual(passes + 3);
    expect(await writeCount(operator.url)).toBe(writes);
  });

  it('deletes the Deployment, Service and ServiceAccount when it moves to a url', async () => {
    await k.patchSpec('alpha', {
      image: null,
      command: null,
      transport: null,
      env: null,
      replicas: null,
      // Discovery back on: for a url server it is what Ready reports.
      discovery: null,
      // Nothing listens there: discovery is refused at once, and Ready says so.
      url: 'http://127.0.0.1:9/mcp',
    });
    const server = await k.waitForReady('alpha', 'False', 'External');
    expect(server.status?.endpoint).toBe('http://127.0.0.1:9/mcp');
    expect(server.status?.replicas).toBeUndefined();
    await waitFor(
      'the objects to be deleted',
      async () =>
        (await gone(() => deployment('alpha'))) &&
        (await gone(() => k.core.readNamespacedService({ name: 'alpha', namespace: ns.name }))) &&
        gone(() => k.core.readNamespacedServiceAccount({ name: 'alpha', namespace: ns.name })),
    );
  });
});

describe('a stdio MCPServer, enforced and not', () => {
  const secret = () =>
    k.core.readNamespacedSecret({ name: 'enforced-discovery', namespace: ns.name });

  it('gets a discovery token Secret once: random, owned, never rewritten', async () => {
    await k.create('enforced', {
      ...STDIO,
      tools: {
        driftPolicy: 'Enforce',
        approved: { tools: [{ name: 'echo', digest: `sha256:${'0'.repeat(64)}` }] },
      },
    });
    await k.waitForReady('enforced', 'True', 'Available');
    const first = await secret();
    const token = Buffer.from(first.data?.token ?? '', 'base64').toString();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'MCPServer',
      name: 'enforced',
      controller: true,
    });
    expect(first.metadata?.labels).toMatchObject({
      'app.kubernetes.io/instance': 'enforced',
      'app.kubernetes.io/managed-by': 'mcp-operator',
    });
    const bridge = (await deployment('enforced')).spec?.template.spec?.containers[1];
    expect(bridge?.command).toContain('--discovery-token-file');

    // Steady state: resyncs write nothing, and the token stays what it was.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const writes = await writeCount(operator.url);
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(await writeCount(operator.url)).toBe(writes);
    expect((await secret()).metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
  });

  it('gets it back when someone deletes it, keeps it under Warn, loses it with the bridge', async () => {
    const before = await secret();
    await k.core.deleteNamespacedSecret({ name: 'enforced-discovery', namespace: ns.name });
    const recreated = await waitFor('the Secret to be recreated', async () => {
      const now = await secret().catch(() => undefined);
      return now !== undefined && now.metadata?.uid !== before.metadata?.uid ? now : undefined;
    });
    // Under Warn the operator long-polls the bridge's change feed with the same token.
    await k.patchSpec('enforced', { tools: { driftPolicy: 'Warn' } });
    await waitFor('the policy flag to go', async () =>
      (await deployment('enforced')).spec?.template.spec?.containers[1]?.command?.includes(
        '--policy-file',
      ) === false
        ? true
        : undefined,
    );
    expect((await secret()).metadata?.uid).toBe(recreated.metadata?.uid);
    // A server that speaks HTTP itself, with its bridge opted out, has no bridge to hold a token.
    await k.patchSpec('enforced', {
      transport: 'streamable-http',
      command: null,
      port: 3000,
      bridge: { enabled: false },
    });
    await waitFor('the Secret to be deleted', () => gone(secret));
  });
});

describe('a deleted MCPServer', () => {
  it('takes its objects with it (garbage collection of dependents)', async () => {
    await k.create('beta', {
      image: 'example.com/mcp/web:1',
      transport: 'streamable-http',
      port: 3000,
    });
    await k.waitForReady('beta', 'True');
    await k.delete('beta');
    // The garbage collector learns of a newly installed CRD at its next discovery (every
    // 30 s), so on a fresh control plane the first collection can take that long.
    const gc = { timeoutMs: 60_000 };
    await waitFor(
      'the Deployment to be garbage-collected',
      () => gone(() => deployment('beta')),
      gc,
    );
    await waitFor(
      'the Service to be garbage-collected',
      () => gone(() => k.core.readNamespacedService({ name: 'beta', namespace: ns.name })),
      gc,
    );
  });
});

/** Pod status as the kubelet writes it when it cannot pull the server image. */
const IMAGE_PULL_BACK_OFF: V1Pod['status'] = {
  phase: 'Running',
  conditions: [
    { type: 'PodScheduled', status: 'True' },
    { type: 'Ready', status: 'False', reason: 'ContainersNotReady' },
    { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady' },
  ],
  containerStatuses: [
    {
      name: 'server',
      image: 'example.com/mcp/missing:1',
      imageID: '',
      ready: false,
      restartCount: 0,
      state: {
        waiting: {
          reason: 'ImagePullBackOff',
          message: 'Back-off pulling image "example.com/mcp/missing:1"',
        },
      },
    },
  ],
};

describe('a server that cannot become Ready', () => {
  it('says Unschedulable, with the scheduler message, when no node fits', async () => {
    await k.create('gamma', {
      image: 'example.com/mcp/web:1',
      transport: 'streamable-http',
      port: 3000,
      pod: { nodeSelector: { 'mcp-operator.dev/no-such-node': 'true' } },
    });
    const server = await k.waitForReady('gamma', 'False', 'Unschedulable');
    const ready = server.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready?.message).toMatch(
      /^Pod gamma-[a-z0-9-]+ cannot be scheduled: 0\/\d+ nodes are available/,
    );
    expect(ready?.message).toMatch(/Check spec.resources and spec.pod nodeSelector/);
  });

  it('says ImagePullBackOff when the kubelet cannot pull the image', async () => {
    await k.create('delta', {
      image: 'example.com/mcp/missing:1',
      transport: 'streamable-http',
      port: 3000,
    });
    // kwok's fake kubelet starts every image; write the status a real kubelet writes when a
    // pull fails, once kwok has made the pod Running (so its pod-ready stage, which only
    // matches Pending pods, leaves ours alone). A conflict with kwok's own write is retried.
    await waitFor('the pod to show ImagePullBackOff', async () => {
      const [pod] = await pods('delta');
      if (pod?.status?.phase !== 'Running') return undefined;
      await k.core.replaceNamespacedPodStatus({
        name: pod.metadata!.name!,
        namespace: ns.name,
        body: { ...pod, status: { ...pod.status, ...IMAGE_PULL_BACK_OFF } },
      });
      return true;
    });
    const server = await k.waitForReady('delta', 'False', 'ImagePullBackOff');
    const ready = server.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready?.message).toContain('cannot pull image example.com/mcp/missing:1');
    expect(ready?.message).toContain('Check spec.image and spec.pod.imagePullSecrets.');
    const [warning] = await waitFor('an ImagePullBackOff event', async () => {
      const found = await k.events('delta', 'ImagePullBackOff');
      return found.length > 0 ? found : undefined;
    });
    expect(warning?.type).toBe('Warning');
  });
});
