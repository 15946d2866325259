/**
 * Installs the committed MCPServer CRD (the file users apply) into a test cluster and waits
 * until the API server serves it. Idempotent: every test file may call it.
 */

import { readFile } from 'node:fs/promises';
import {
  ApiextensionsV1Api,
  KubernetesObjectApi,
  loadYaml,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { CRD_FILE, CRD_NAME } from '../../src/api/crd.ts';
import { waitFor } from '../cluster/testing.ts';

export async function installCrd(kc: KubeConfig): Promise<void> {
  // loadYaml builds client-node's typed model: the client serializes request bodies through
  // those models and silently drops keys of a plain object it does not map (`enum`,
  // `x-kubernetes-validations`), which would install a CRD without its validation.
  const crd = loadYaml<KubernetesObject>(await readFile(CRD_FILE, 'utf8'));
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const force = true;
  await objects.patch(
    crd,
    undefined,
    undefined,
    'mcp-operator-tests',
    force,
    PatchStrategy.ServerSideApply,
  );
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  await waitFor(`CRD ${CRD_NAME} Established`, async () => {
    const read = await extensions.readCustomResourceDefinition({ name: CRD_NAME });
    return read.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
}
