/**
 * A streamable-http server under Enforce, on the real node: the operator (in-process, against
 * the real control plane) renders the pod with the bridge in proxy mode in front of the npm
 * everything server serving HTTP; containerd runs both containers from the test images; an SDK
 * client reaches the bridge through the Service's ClusterIP (kube-proxy). It sees only the
 * approved tools, while discovery, through the same bridge with its discovery token, still sees
 * every tool and names the unapproved one as drift.
 *
 * The only stand-in: discovery is pointed at the Service's ClusterIP instead of its DNS name,
 * which the test process cannot resolve.
 */

import type { V1Deployment } from '@kubernetes/client-node';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { StoredMCPServer } from '../../src/api/v1alpha1/stored.ts';
import { toolDigest } from '../../src/tools/digest.ts';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { cluster, startOperator } from '../controller/operator.ts';
import { waitForCondition } from '../discovery/operator.ts';
import type { Manager } from '../../src/controller/manager.ts';
import {
  clusterIpOf,
  connectAgent,
  discoveryRun,
  everythingHttpSpec,
  EVERYTHING_HTTP_PORT,
  POD_TIMEOUT_MS,
  snapshotTools,
  toolNames,
} from './fixtures/everything-http.ts';

const NAME = 'everything-http';

const kc = kubeConfig();
const ns = useNamespace('proxy', kc);
const k = cluster(kc, () => ns.name);
const images = inject('images');
/** ClusterIP by server name, filled in once the operator has created the Service. */
const clusterIps = new Map<string, string>();
let operator: Manager;

const agent = () =>
  connectAgent(new URL(`http://${clusterIps.get(NAME)!}:${EVERYTHING_HTTP_PORT}/mcp`));

beforeAll(async () => {
  await installCrd(kc);
  operator = await startOperator(ns.name, [`--bridge-image=${images.operator}`], {
    discoveryEndpoint: (server: StoredMCPServer) =>
      `http://${clusterIps.get(server.metadata.name) ?? '127.0.0.1'}:${server.spec.port}/mcp`,
  });
}, POD_TIMEOUT_MS);

afterAll(async () => {
  await operator?.stop();
});

describe('a streamable-http server under Enforce, behind the bridge on the real node', () => {
  let all: Tool[];

  it(
    'runs behind the bridge and is discovered through it',
    async () => {
      await k.create(NAME, everythingHttpSpec(images.servers.everything));
      clusterIps.set(NAME, await clusterIpOf(k, ns.name, NAME));
      // The Service is applied before the Deployment.
      const deployment: V1Deployment = await waitFor('the Deployment', () =>
        k.apps.readNamespacedDeployment({ name: NAME, namespace: ns.name }),
      );
      expect(deployment.spec?.template.spec?.containers.map((c) => c.name)).toEqual([
        'server',
        'bridge',
      ]);
      await waitForCondition(k, NAME, 'Ready', 'True', undefined, POD_TIMEOUT_MS);
      await waitForCondition(k, NAME, 'Discovered', 'True', undefined, POD_TIMEOUT_MS);
      all = await snapshotTools(k, ns.name, NAME);
      expect(all.map((t) => t.name)).toContain('get-env');
      const { client, close } = await agent();
      expect(toolNames((await client.listTools()).tools)).toEqual(toolNames(all));
      await close();
    },
    2 * POD_TIMEOUT_MS,
  );

  it(
    'shows an agent only the approved tools and refuses the others; discovery still sees them all',
    async () => {
      // Everything but get-env, which prints the server's environment, is approved.
      const approved = all
        .filter((tool) => tool.name !== 'get-env')
        .map((tool) => ({ name: tool.name, digest: toolDigest(tool) }));
      await k.patchSpec(NAME, { tools: { driftPolicy: 'Enforce', approved: { tools: approved } } });
      const visible = approved.map((t) => t.name).sort();
      // The policy reaches a new pod (a rollout); until then the old one answers unfiltered.
      const { client, close } = await waitFor(
        'the enforcing bridge to serve the Service',
        async () => {
          const candidate = await agent();
          const names = toolNames((await candidate.client.listTools()).tools);
          if (names.join() === visible.join()) return candidate;
          await candidate.close();
          return undefined;
        },
        { timeoutMs: 2 * POD_TIMEOUT_MS, intervalMs: 3_000 },
      );
      const refused = await client.callTool({ name: 'get-env', arguments: {} }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(McpError);
      expect((refused as McpError).data).toEqual({ reason: 'not-approved', tool: 'get-env' });
      expect(
        JSON.stringify(await client.callTool({ name: 'echo', arguments: { message: 'gated' } })),
      ).toContain('gated');
      await close();

      await discoveryRun(k, operator.url, ns.name, NAME, 'after-enforce');
      const server = await waitForCondition(k, NAME, 'Drifted', 'True', 'ToolsChanged');
      expect(toolNames(server.status?.discovery?.tools ?? [])).toEqual(toolNames(all));
      expect(server.status?.drift?.added).toEqual(['get-env']);
    },
    3 * POD_TIMEOUT_MS,
  );
});
