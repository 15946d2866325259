/**
 * Helpers for tests that run against the shared control plane (`*.cluster.test.ts`): a
 * KubeConfig, a fresh namespace per test file, and polling.
 *
 *   const kc = kubeConfig();
 *   const ns = useNamespace('my-feature');
 *   it('…', async () => {
 *     await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: ns.name, body });
 *     await waitFor('the thing', async () => …);
 *   });
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { waitFor } from '../support/wait.ts';

/** A KubeConfig for the cluster the global setup provides (admin credentials). */
export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  return kc;
}

/**
 * Creates a namespace with a unique name and waits until pods can be created in it (the
 * ServiceAccount admission plugin rejects pods until the controller manager has made the
 * `default` ServiceAccount).
 */
export async function createNamespace(kc: KubeConfig, prefix = 'test'): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({
    body: { metadata: { name, labels: { 'mcp-operator.dev/test': 'true' } } },
  });
  await waitFor(`the default ServiceAccount in namespace ${name}`, async () =>
    (await core.readNamespacedServiceAccount({ name: 'default', namespace: name }))
      ? true
      : undefined,
  );
  return name;
}

/** Deletes a namespace without waiting: the namespace controller empties it in the background. */
export async function deleteNamespace(kc: KubeConfig, name: string): Promise<void> {
  await kc.makeApiClient(CoreV1Api).deleteNamespace({ name });
}

/**
 * A namespace for the surrounding test file or `describe` block: created before its tests and
 * deleted after them. Read `.name` inside tests and hooks, not at collection time.
 */
export function useNamespace(
  prefix = 'test',
  kc: KubeConfig = kubeConfig(),
): { readonly name: string } {
  let name: string | undefined;
  beforeAll(async () => {
    name = await createNamespace(kc, prefix);
  });
  afterAll(async () => {
    if (name !== undefined) await deleteNamespace(kc, name);
  });
  return {
    get name(): string {
      if (name === undefined)
        throw new Error('useNamespace: the namespace exists only while tests run');
      return name;
    },
  };
}

export { waitFor, type WaitOptions } from '../support/wait.ts';
