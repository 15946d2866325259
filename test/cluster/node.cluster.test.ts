/**
 * The real node of the test cluster: pods really run there, Services and cluster DNS work, and no
 * cluster address ever leaves the machine.
 */
import { connect } from 'node:net';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { kubectl } from '../examples/examples.ts';
import { NODE_NETWORK } from './network.ts';
import { ON_REAL_NODE, REAL_NODE_NAME, REAL_NODE_TAINT } from './node.ts';
import { kubeConfig, useNamespace, waitFor } from './testing.ts';
import { routeDevice } from './network.ts';

const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const ns = useNamespace('node', kc);
const images = inject('images');
const POD_TIMEOUT_MS = 120_000;

async function sh(args: readonly string[]): Promise<string> {
  const result = await kubectl(inject('kubeconfig'), args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

async function createPod(pod: V1Pod): Promise<string> {
  await core.createNamespacedPod({ namespace: ns.name, body: pod });
  return pod.metadata!.name!;
}

async function waitRunning(name: string): Promise<V1Pod> {
  return waitFor(
    `pod ${name} Running on the real node`,
    async () => {
      const pod = await core.readNamespacedPod({ name, namespace: ns.name });
      return pod.status?.phase === 'Running' ? pod : undefined;
    },
    { timeoutMs: POD_TIMEOUT_MS, intervalMs: 500 },
  );
}

/** How a TCP connection from the host to `host:port` ends: 'connected' or the error code. */
function tryConnect(host: string, port: number, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

const httpServerPod = (name: string, labels: Record<string, string>): V1Pod => ({
  metadata: { name, labels },
  spec: {
    ...ON_REAL_NODE,
    containers: [
      {
        name: 'web',
        image: images.bases.node,
        imagePullPolicy: 'Never',
        command: [
          'node',
          '-e',
          "require('http').createServer((q, r) => r.end('hello from ' + process.env.HOSTNAME)).listen(8080)",
        ],
        securityContext: { runAsUser: 65532, runAsNonRoot: true, allowPrivilegeEscalation: false },
      },
    ],
  },
});

describe('the real node', () => {
  it('is Ready, tainted, and only pods that tolerate it land on it', async () => {
    const node = await core.readNode({ name: REAL_NODE_NAME });
    expect(node.spec?.taints).toContainEqual(expect.objectContaining(REAL_NODE_TAINT));
    const name = await createPod({
      metadata: { name: 'no-toleration' },
      spec: { containers: [{ name: 'c', image: images.bases.debian }] },
    });
    const pod = await waitFor('the pod to be scheduled', async () => {
      const read = await core.readNamespacedPod({ name, namespace: ns.name });
      return read.spec?.nodeName;
    });
    expect(pod).toMatch(/^kwok-node-/);
  });

  it('runs a restricted pod: init container, fsGroup emptyDir, a FIFO from one container to another', async () => {
    const shared = { name: 'shared', mountPath: '/shared' };
    const restricted = {
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    };
    const name = await createPod({
      metadata: { name: 'fifo' },
      spec: {
        ...ON_REAL_NODE,
        securityContext: {
          runAsUser: 65532,
          runAsGroup: 65532,
          fsGroup: 65532,
          seccompProfile: { type: 'RuntimeDefault' },
        },
        volumes: [{ name: 'shared', emptyDir: {} }],
        initContainers: [
          {
            name: 'make-fifo',
            image: images.bases.debian,
            imagePullPolicy: 'Never',
            command: ['mkfifo', '-m', '0660', '/shared/pipe'],
            volumeMounts: [shared],
            securityContext: restricted,
          },
        ],
        containers: [
          {
            name: 'writer',
            image: images.bases.debian,
            imagePullPolicy: 'Never',
            command: ['sh', '-c', 'echo "uid $(id -u) wrote this" > /shared/pipe; exec sleep 3600'],
            volumeMounts: [shared],
            securityContext: restricted,
          },
          {
            name: 'reader',
            image: images.bases.debian,
            imagePullPolicy: 'Never',
            command: ['sh', '-c', 'cat /shared/pipe; exec sleep 3600'],
            volumeMounts: [shared],
            securityContext: restricted,
          },
        ],
      },
    });
    const pod = await waitRunning(name);
    expect(pod.spec?.nodeName).toBe(REAL_NODE_NAME);
    // Logs come from the kubelet through the API server: that path works too.
    const logs = await waitFor('the reader to print what the writer sent', async () => {
      const text = await sh(['-n', ns.name, 'logs', name, '-c', 'reader']);
      return text.includes('wrote this') ? text : undefined;
    });
    expect(logs.trim()).toBe('uid 65532 wrote this');
  });

  it('serves a Service at its ClusterIP from the host, and by DNS name inside pods', async () => {
    await createPod(httpServerPod('web', { app: 'web' }));
    await waitRunning('web');
    await core.createNamespacedService({
      namespace: ns.name,
      body: {
        metadata: { name: 'web' },
        spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    const service = await core.readNamespacedService({ name: 'web', namespace: ns.name });
    const fromHost = await waitFor('the ClusterIP to answer from the host', async () => {
      const reply = await fetch(`http://${service.spec!.clusterIP}/`).catch(() => undefined);
      return reply?.ok ? reply.text() : undefined;
    });
    expect(fromHost).toBe('hello from web');

    await createPod({
      ...httpServerPod('client', { app: 'client' }),
    });
    await waitRunning('client');
    const script = `fetch('http://web.${ns.name}.svc.cluster.local/').then(r => r.text()).then(t => console.log(t))`;
    const fromPod = await waitFor('the Service to answer by name inside a pod', async () => {
      const out = await sh(['-n', ns.name, 'exec', 'client', '--', 'node', '-e', script]);
      return out.includes('hello from web') ? out.trim() : undefined;
    });
    expect(fromPod).toBe('hello from web');
  });

  it('keeps cluster addresses on the machine: they route to the node bridge, and fail there', async () => {
    for (const address of ['10.96.200.200', '10.244.7.7', '10.88.0.200']) {
      expect(await routeDevice(address), address).toBe(NODE_NETWORK.bridge);
    }
    await core.createNamespacedService({
      namespace: ns.name,
      body: {
        metadata: { name: 'nobody' },
        spec: { selector: { app: 'nobody' }, ports: [{ port: 80 }] },
      },
    });
    const service = await core.readNamespacedService({ name: 'nobody', namespace: ns.name });
    // kube-proxy rejects a Service without endpoints at once.
    expect(
      await waitFor('kube-proxy to reject the Service without endpoints', async () => {
        const outcome = await tryConnect(service.spec!.clusterIP!, 80);
        return outcome === 'ECONNREFUSED' ? outcome : undefined;
      }),
    ).toBe('ECONNREFUSED');
    // An address that no Service holds finds no neighbour on the bridge.
    expect(await tryConnect('10.96.200.200', 80)).toBe('EHOSTUNREACH');
  });
});
