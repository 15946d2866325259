/**
 * Helpers for controller tests against the real control plane: an operator in-process (the
 * same Manager the `controller` command runs), MCPServer CRUD through client-node (an
 * independent client, not the operator's own), and the operator's request counters read from
 * its /metrics endpoint.
 */
import {
  AppsV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { inject } from 'vitest';
import type { Condition } from '../../src/api/core-v1.ts';
import {
  API_VERSION,
  type MCPServer,
  type MCPServerSpec,
} from '../../src/api/v1alpha1/mcpserver.ts';
import { parseControllerConfig } from '../../src/controller/config.ts';
import { loadClientConfig } from '../../src/kube/config.ts';
import { Manager, type ManagerOptions } from '../../src/controller/manager.ts';
import { waitFor, type WaitOptions } from '../cluster/testing.ts';
import { testLogger } from '../support/log.ts';

/** An operator watching only `namespace`, with its HTTP server on a free port. */
export async function startOperator(
  namespace: string,
  flags: string[] = [],
  options: Pick<ManagerOptions, 'discoveryEndpoint' | 'changeWatch'> = {},
) {
  const config = parseControllerConfig(
    [
      `--namespaces=${namespace}`,
      '--no-leader-elect',
      '--metrics-address=127.0.0.1:0',
      '--bridge-image=mcp-operator:test',
      ...flags,
    ],
    {},
  );
  const clientConfig = await loadClientConfig({ kubeconfig: inject('kubeconfig'), env: {} });
  return Manager.start({ config, clientConfig, log: testLogger(), ...options });
}

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The operator's requests to the API server so far, by verb, over every code and resource (from /metrics). */
export async function requestCounts(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(
    /^mcp_operator_kube_requests_total\{verb="(\w+)",code="\d+",resource="[\w/]+"\} (\d+)$/gm,
  )) {
    counts[m[1]!] = (counts[m[1]!] ?? 0) + Number(m[2]);
  }
  // A pattern that no longer matches the series would count no writes, and every "writes
  // nothing" assertion would pass for it.
  if (Object.keys(counts).length === 0) throw new Error(`no request series in ${url}/metrics`);
  return counts;
}

export async function writeCount(url: string): Promise<number> {
  const counts = await requestCounts(url);
  return Object.entries(counts)
    .filter(([verb]) => WRITE_VERBS.has(verb))
    .reduce((sum, [, n]) => sum + n, 0);
}

export async function reconcileCount(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return [...text.matchAll(/^mcp_operator_reconcile_total\{result="\w+"\} (\d+)$/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
}

/** MCPServers and their objects in one namespace, through client-node. */
export function cluster(kc: KubeConfig, namespace: () => string) {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const ref = (name: string): KubernetesObject => ({
    apiVersion: API_VERSION,
    kind: 'MCPServer',
    metadata: { name, namespace: namespace() },
  });
  const get = async (name: string): Promise<MCPServer> => {
    // MCPServer's metadata is client-node's own V1ObjectMeta, so the read can be typed as one.
    const server: KubernetesObject & MCPServer = await objects.read<KubernetesObject & MCPServer>({
      apiVersion: API_VERSION,
      kind: 'MCPServer',
      metadata: { name, namespace: namespace() },
    });
    return server;
  };
  return {
    objects,
    apps,
    core,
    get,
    create: (name: string, spec: MCPServerSpec) =>
      objects.create({ ...ref(name), spec } as KubernetesObject),
    /** JSON merge patch of the spec (null removes a field). */
    patchSpec: (name: string, spec: Record<string, unknown>) =>
      objects.patch(
        { ...ref(name), spec } as KubernetesObject,
        undefined,
        undefined,
        'test',
        undefined,
        PatchStrategy.MergePatch,
      ),
    delete: (name: string) => objects.delete(ref(name)),
    /** The Events about MCPServer `name` with `reason`. */
    events: async (name: string, reason: string) =>
      (
        await core.listNamespacedEvent({
          namespace: namespace(),
          fieldSelector: `involvedObject.name=${name},reason=${reason}`,
        })
      ).items,
    ready: async (name: string): Promise<Condition | undefined> =>
      (await get(name)).status?.conditions?.find((c) => c.type === 'Ready'),
    /** Waits for Ready to have `status` (and `reason`, if given) for the current generation. */
    waitForReady: (name: string, status: string, reason?: string, options?: WaitOptions) =>
      waitFor(
        `${name} Ready=${status}${reason ? ` (${reason})` : ''}`,
        async () => {
          const server = await get(name);
          const ready = server.status?.conditions?.find((c) => c.type === 'Ready');
          const current = server.status?.observedGeneration === server.metadata.generation;
          return current &&
            ready?.status === status &&
            (reason === undefined || ready.reason === reason)
            ? server
            : undefined;
        },
        options,
      ),
  };
}
