/**
 * Rendered objects meet a real API server: they are valid, a pod from the template passes the
 * `restricted` Pod Security Standard in enforcing mode, and applying them again changes
 * nothing (the steady state of a reconcile writes nothing).
 */

import {
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
  type V1Deployment,
} from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_GROUP, FIELD_MANAGER, PLURAL } from '../../../src/api/names.ts';
import { API_VERSION, VERSION, type MCPServerSpec } from '../../../src/api/v1alpha1/mcpserver.ts';
import type { StoredMCPServer } from '../../../src/api/v1alpha1/stored.ts';
import { render } from '../../../src/controller/render/render.ts';
import { kubeConfig, useNamespace } from '../../cluster/testing.ts';
import { installCrd } from '../../api/install-crd.ts';
import { OPTIONS } from './fixtures.ts';

const kc = kubeConfig();
const ns = useNamespace('render', kc);
const objects = KubernetesObjectApi.makeApiClient(kc);

beforeAll(async () => {
  await installCrd(kc);
  // https://kubernetes.io/docs/concepts/security/pod-security-admission/#pod-security-admission-labels-for-namespaces
  const label = { 'pod-security.kubernetes.io/enforce': 'restricted' };
  await objects.patch(
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns.name, labels: label } },
    undefined,
    undefined,
    'render-test',
    true,
    PatchStrategy.ServerSideApply,
  );
});

async function createServer(name: string, spec: MCPServerSpec): Promise<StoredMCPServer> {
  return (await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: API_GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: PLURAL,
    body: { apiVersion: API_VERSION, kind: 'MCPServer', metadata: { name }, spec },
  })) as StoredMCPServer;
}

const apply = (object: KubernetesObject) =>
  objects.patch(object, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);

const SERVERS: [string, MCPServerSpec][] = [
  [
    'stdio',
    {
      image: 'node:24-slim',
      transport: 'stdio',
      command: ['npx', '-y', '@modelcontextprotocol/server-everything'],
      env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'upstream', key: 'token' } } }],
      auth: { secretRef: { name: 'clients' } },
      tools: {
        driftPolicy: 'Enforce',
        approved: { tools: [{ name: 'echo', digest: `sha256:${'0'.repeat(64)}` }] },
      },
      pod: { labels: { team: 'a' }, tolerations: [{ operator: 'Exists' }] },
    },
  ],
  [
    'streamable-http',
    { image: 'ghcr.io/example/weather:2', transport: 'streamable-http', port: 3000, replicas: 2 },
  ],
];

describe.each(SERVERS)('rendered objects of a %s server', (transport, spec) => {
  let server: StoredMCPServer;
  let first: KubernetesObject[];

  beforeAll(async () => {
    server = await createServer(`srv-${transport}`, spec);
    first = [];
    for (const object of render(server, OPTIONS)) first.push(await apply(object));
  });

  it('are accepted by the API server, owned by the MCPServer', () => {
    expect(first.map((o) => o.kind)).toContain('Deployment');
    for (const object of first) {
      expect(object.metadata?.ownerReferences?.[0]?.uid).toBe(server.metadata.uid);
    }
  });

  it('make a pod that the restricted Pod Security Standard admits', async () => {
    const deployment = first.find((o): o is V1Deployment => o.kind === 'Deployment');
    const template = deployment?.spec?.template;
    const pod = await kc.makeApiClient(CoreV1Api).createNamespacedPod({
      namespace: ns.name,
      body: {
        metadata: { name: `pod-${transport}`, labels: { probe: 'psa' } },
        spec: template?.spec,
      },
      dryRun: 'All',
    });
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(
      template?.spec?.containers.map((c) => c.name),
    );
  });

  it('are not written again when applied unchanged', async () => {
    const again: KubernetesObject[] = [];
    for (const object of render(server, OPTIONS)) again.push(await apply(object));
    for (const [before, after] of first.map((o, i) => [o, again[i]!] as const)) {
      if (before.kind === 'Deployment') {
        // The Deployment controller writes status; the spec generation is what we control.
        expect(after.metadata?.generation, 'Deployment generation').toBe(
          before.metadata?.generation,
        );
      } else {
        expect(after.metadata?.resourceVersion, `${before.kind} resourceVersion`).toBe(
          before.metadata?.resourceVersion,
        );
      }
    }
  });
});
