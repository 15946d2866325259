/**
 * Rendered objects meet a real API server: they are valid, a pod from the template passes the
 * `restricted` Pod Security Standard in enforcing mode, and applying them again changes
 * nothing (the steady state of a reconcile writes nothing).
 */

import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
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
import { BRIDGE_CONTAINER } from '../../../src/controller/render/containers.ts';
import { kubeConfig, useNamespace, waitFor } from '../../cluster/testing.ts';
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

describe('a stdio server with three replicas', () => {
  it("has three pods, and its bridges' peer Service lists every one of them", async () => {
    const server = await createServer('scaled', {
      image: 'node:24-slim',
      transport: 'stdio',
      command: ['npx', '-y', '@modelcontextprotocol/server-everything'],
      replicas: 3,
      bridge: { sessionMode: 'Shared' },
    });
    for (const object of render(server, OPTIONS)) await apply(object);
    const core = kc.makeApiClient(CoreV1Api);
    const peers = await core.readNamespacedService({ name: 'scaled-peers', namespace: ns.name });
    expect(peers.spec).toMatchObject({
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { 'app.kubernetes.io/name': 'mcp-server', 'app.kubernetes.io/instance': 'scaled' },
      ports: [{ name: 'mcp', port: 8080, targetPort: 'mcp', protocol: 'TCP' }],
    });

    // kwok plays the kubelet: the pods get IPs, and the EndpointSlice controller lists them.
    const podIps = await waitFor('three pods with an IP', async () => {
      const pods = await core.listNamespacedPod({
        namespace: ns.name,
        labelSelector: 'app.kubernetes.io/instance=scaled',
      });
      const ips = pods.items.map((pod) => pod.status?.podIP).filter((ip) => ip !== undefined);
      return ips.length === 3 ? ips.sort() : undefined;
    });
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const listed = await waitFor('the peer Service to list the three pods', async () => {
      const slices = await discovery.listNamespacedEndpointSlice({
        namespace: ns.name,
        labelSelector: 'kubernetes.io/service-name=scaled-peers',
      });
      const addresses = slices.items.flatMap((slice) =>
        (slice.endpoints ?? []).flatMap((endpoint) => endpoint.addresses),
      );
      return addresses.length === 3 ? addresses.sort() : undefined;
    });
    expect(listed).toEqual(podIps);

    const pod = (
      await core.listNamespacedPod({
        namespace: ns.name,
        labelSelector: 'app.kubernetes.io/instance=scaled',
      })
    ).items[0]!;
    const bridge = pod.spec?.containers.find((c) => c.name === BRIDGE_CONTAINER);
    expect(bridge?.env).toContainEqual({
      name: 'MCP_BRIDGE_POD_IP',
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } },
    });
    const args = bridge?.command ?? [];
    expect(args[args.indexOf('--replica-address') + 1]).toBe('$(MCP_BRIDGE_POD_IP):8080');
    expect(args[args.indexOf('--peers') + 1]).toBe(`scaled-peers.${ns.name}.svc:8080`);
  });
});
