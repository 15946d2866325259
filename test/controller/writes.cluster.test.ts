/**
 * How the operator writes a server's objects, on the real control plane: created with POST
 * (owned by the operator's field manager through an `Update` entry), applied afterwards only
 * when the rendering or the live object changed, and then owned through an `Apply` entry alone,
 * so that a field the rendering drops is removed from the live object.
 */
import {
  PatchStrategy,
  type KubernetesObject,
  type V1ManagedFieldsEntry,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FIELD_MANAGER } from '../../src/api/names.ts';
import { APPLIED_HASH_ANNOTATION } from '../../src/kube/apply.ts';
import { waitFor } from '../cluster/testing.ts';
import { STDIO, useOperator } from './operator.ts';

const { ns, k } = useOperator('writes');

const deployment = (name: string) => k.apps.readNamespacedDeployment({ name, namespace: ns.name });
const service = (name: string) => k.core.readNamespacedService({ name, namespace: ns.name });

/** The operator's managedFields entries of an object, by operation. */
const operations = (obj: KubernetesObject): string[] =>
  (obj.metadata?.managedFields ?? [])
    .filter((entry: V1ManagedFieldsEntry) => entry.manager === FIELD_MANAGER)
    .map(
      (entry: V1ManagedFieldsEntry) =>
        `${entry.operation}${entry.subresource ? `/${entry.subresource}` : ''}`,
    );

describe("a server's objects", () => {
  it('are created with POST, owned by the operator, and not written again while it rolls out', async () => {
    await k.create('alpha', {
      ...STDIO,
      env: [
        { name: 'KEPT', value: '1' },
        { name: 'DROPPED', value: '2' },
      ],
      pod: { labels: { team: 'a' } },
    });
    await k.waitForReady('alpha', 'True', 'Available');
    const objects = [
      await deployment('alpha'),
      await service('alpha'),
      await k.core.readNamespacedServiceAccount({ name: 'alpha', namespace: ns.name }),
    ];
    for (const obj of objects) {
      expect(operations(obj), obj.kind).toEqual(['Update']);
      expect(obj.metadata?.annotations?.[APPLIED_HASH_ANNOTATION], obj.kind).toBeDefined();
    }
  });

  it('lose an env var and a pod label the spec drops', async () => {
    await k.patchSpec('alpha', { env: [{ name: 'KEPT', value: '1' }], pod: null });
    const updated = await waitFor('the Deployment without them', async () => {
      const d = await deployment('alpha');
      const env = d.spec?.template.spec?.containers[0]?.env?.map((e) => e.name) ?? [];
      return env.includes('DROPPED') || d.spec?.template.metadata?.labels?.['team'] ? undefined : d;
    });
    const env = updated.spec?.template.spec?.containers[0]?.env ?? [];
    expect(env).toContainEqual(expect.objectContaining({ name: 'KEPT', value: '1' }));
    expect(env.map((e) => e.name)).not.toContain('DROPPED');
    expect(updated.spec?.template.metadata?.labels).not.toHaveProperty('team');
    // What the POST owned now belongs to the apply: the next drop is removed as well.
    expect(operations(updated)).toEqual(['Apply']);
    await k.waitForReady('alpha', 'True', 'Available');
  });

  it('are put back with POST when deleted, and by an apply when edited', async () => {
    const before = await service('alpha');
    await k.core.deleteNamespacedService({ name: 'alpha', namespace: ns.name });
    const recreated = await waitFor('the Service to be recreated', async () => {
      const s = await service('alpha').catch(() => undefined);
      return s !== undefined && s.metadata?.uid !== before.metadata?.uid ? s : undefined;
    });
    expect(operations(recreated)).toEqual(['Update']);
    await k.objects.patch(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'alpha', namespace: ns.name, labels: { 'app.kubernetes.io/name': 'x' } },
      },
      undefined,
      undefined,
      'someone-else',
      undefined,
      PatchStrategy.MergePatch,
    );
    const restored = await waitFor('the label put back', async () => {
      const s = await service('alpha');
      return s.metadata?.labels?.['app.kubernetes.io/name'] === 'x' ? undefined : s;
    });
    expect(restored.metadata?.uid).toBe(recreated.metadata?.uid);
    expect(operations(restored)).toEqual(['Apply']);
  });

  it('are taken over by an apply when a POST finds one of them there already', async () => {
    // Made by someone else before the server, without the operator's labels: its cache never
    // holds it, so the operator's POST meets 409 AlreadyExists and falls back to an apply.
    await k.core.createNamespacedService({
      namespace: ns.name,
      body: {
        metadata: { name: 'beta', labels: { team: 'b' } },
        spec: { ports: [{ name: 'other', port: 9999 }] },
      },
    });
    await k.create('beta', STDIO);
    const taken = await waitFor('the Service taken over', async () => {
      const s = await service('beta');
      return s.metadata?.annotations?.[APPLIED_HASH_ANNOTATION] === undefined ? undefined : s;
    });
    expect(taken.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'MCPServer', name: 'beta' });
    expect(taken.spec?.ports?.map((p) => p.port)).toContain(8080);
    expect(operations(taken)).toEqual(['Apply']);
    await k.waitForReady('beta', 'True', 'Available');
  });
});
