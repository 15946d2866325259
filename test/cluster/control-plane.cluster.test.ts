/**
 * Proof that the test control plane is a real one: controllers, the scheduler, kwok's fake
 * kubelet, garbage collection and CEL validation all do what they do in a cluster.
 */
import {
  ApiException,
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1Pod,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KWOK_NODE_ANNOTATION } from './control-plane.ts';
import { kubeConfig, useNamespace, waitFor } from './testing.ts';

const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const ns = useNamespace('control-plane');

const isReady = (pod: V1Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function podsOf(labelSelector: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns.name, labelSelector })).items;
}

async function createDeployment(name: string, replicas: number): Promise<void> {
  const labels = { app: name };
  await apps.createNamespacedDeployment({
    namespace: ns.name,
    body: {
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          // Nothing pulls this image: kwok plays the kubelet.
          spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] },
        },
      },
    },
  });
}

describe('workloads', () => {
  it('runs a Deployment as a ReplicaSet whose pods become Ready on kwok nodes', async () => {
    await createDeployment('web', 2);

    const replicaSet = await waitFor('a ReplicaSet owned by the Deployment', async () => {
      const list = await apps.listNamespacedReplicaSet({
        namespace: ns.name,
        labelSelector: 'app=web',
      });
      return list.items.find((rs) => rs.metadata?.ownerReferences?.[0]?.name === 'web');
    });
    const pods = await waitFor('two Ready pods', async () => {
      const ready = (await podsOf('app=web')).filter(isReady);
      return ready.length === 2 ? ready : undefined;
    });

    for (const pod of pods) {
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'ReplicaSet',
        uid: replicaSet.metadata?.uid,
      });
      expect(pod.status?.phase).toBe('Running');
      const node = await core.readNode({ name: pod.spec?.nodeName ?? '' });
      expect(node.metadata?.annotations?.[KWOK_NODE_ANNOTATION]).toBe('fake');
    }
    await waitFor('the Deployment to report 2 available replicas', async () => {
      const deployment = await apps.readNamespacedDeployment({ name: 'web', namespace: ns.name });
      return deployment.status?.availableReplicas === 2;
    });
  });
});

describe('garbage collection', () => {
  it('deletes a ConfigMap whose owner is deleted', async () => {
    const owner = await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'owner' } },
    });
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' },
          ],
        },
      },
    });

    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: ns.name });

    await waitFor('the dependent ConfigMap to be collected', async () => {
      const names = (await core.listNamespacedConfigMap({ namespace: ns.name })).items.map(
        (cm) => cm.metadata?.name,
      );
      return !names.includes('dependent');
    });
  });

  it('deletes a Deployment’s ReplicaSet and pods with it', async () => {
    await createDeployment('doomed', 1);
    await waitFor('a Ready pod', async () => (await podsOf('app=doomed')).some(isReady));

    await apps.deleteNamespacedDeployment({
      name: 'doomed',
      namespace: ns.name,
      propagationPolicy: 'Foreground',
    });

    await waitFor('the ReplicaSet and pod to be gone', async () => {
      const replicaSets = await apps.listNamespacedReplicaSet({
        namespace: ns.name,
        labelSelector: 'app=doomed',
      });
      return replicaSets.items.length === 0 && (await podsOf('app=doomed')).length === 0;
    });
  });
});

describe('CustomResourceDefinition validation', () => {
  it('rejects an object that breaks an x-kubernetes-validations rule, with the rule’s message', async () => {
    const group = `cel-${randomBytes(3).toString('hex')}.test.mcp-operator.dev`;
    const extensions = kc.makeApiClient(ApiextensionsV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const message = 'spec.min must not be greater than spec.max';
    await extensions.createCustomResourceDefinition({
      body: {
        metadata: { name: `ranges.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'ranges', singular: 'range', kind: 'Range' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      properties: { min: { type: 'integer' }, max: { type: 'integer' } },
                      x_kubernetes_validations: [{ rule: 'self.min <= self.max', message }],
                    },
                  },
                },
              },
            },
          ],
        },
      },
    });
    try {
      const create = (name: string, spec: { min: number; max: number }): Promise<object> =>
        custom.createNamespacedCustomObject({
          group,
          version: 'v1',
          namespace: ns.name,
          plural: 'ranges',
          body: { apiVersion: `${group}/v1`, kind: 'Range', metadata: { name }, spec },
        }) as Promise<object>;
      // The first request after a CRD is established may still get a 404 while discovery catches up.
      await waitFor('the CRD to serve objects', () => create('valid', { min: 1, max: 2 }));

      const rejection = await create('invalid', { min: 3, max: 2 }).then(
        () => undefined,
        (error: unknown) => error,
      );

      expect(rejection).toBeInstanceOf(ApiException);
      const { code, body } = rejection as ApiException<string>;
      expect(code).toBe(422);
      expect(JSON.parse(body)).toMatchObject({
        reason: 'Invalid',
        details: {
          causes: [{ field: 'spec', message: expect.stringContaining(message) as string }],
        },
      });
    } finally {
      await extensions.deleteCustomResourceDefinition({ name: `ranges.${group}` });
    }
  });
});
