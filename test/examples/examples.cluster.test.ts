/**
 * `kubectl apply -f examples/`, as a user runs it, against the real API server with the
 * committed CRD: every example is accepted (CEL rules, strict field validation) and stored as
 * written (nothing pruned).
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { beforeAll, expect, inject, it } from 'vitest';
import { API_GROUP, PLURAL } from '../../src/api/names.ts';
import { VERSION, type MCPServer } from '../../src/api/v1alpha1/mcpserver.ts';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace } from '../cluster/testing.ts';
import { EXAMPLES_DIR, kubectl, loadExamples } from './examples.ts';

const kc = kubeConfig();
const ns = useNamespace('examples', kc);
const examples = await loadExamples();

beforeAll(() => installCrd(kc));

it('kubectl apply -f examples/ creates every example', async () => {
  const result = await kubectl(inject('kubeconfig'), ['apply', '-n', ns.name, '-f', EXAMPLES_DIR]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout.trim().split('\n').sort()).toEqual(
    examples.map((e) => `mcpserver.${API_GROUP}/${e.server.metadata?.name} created`).sort(),
  );

  const api = kc.makeApiClient(CustomObjectsApi);
  for (const { file, server } of examples) {
    const stored = (await api.getNamespacedCustomObject({
      group: API_GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: PLURAL,
      name: server.metadata.name!,
    })) as MCPServer;
    // The API server adds defaults; everything the example says must still be there.
    expect({ file, spec: stored.spec }).toMatchObject({ file, spec: server.spec });
  }
});
