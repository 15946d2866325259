/**
 * Helpers for discovery tests against the operator in-process (test/controller/operator.ts
 * starts it): waiting for a condition, when a server was last discovered, asking for a run.
 */

import { PatchStrategy } from '@kubernetes/client-node';
import { DISCOVER_ANNOTATION } from '../../src/api/names.ts';
import { API_VERSION, type MCPServer } from '../../src/api/v1alpha1/mcpserver.ts';
import { waitFor } from '../cluster/testing.ts';
import type { cluster } from '../controller/operator.ts';

type Cluster = ReturnType<typeof cluster>;

/** Waits until condition `type` has `status` (and `reason`) and returns the server. */
export function waitForCondition(
  k: Cluster,
  name: string,
  type: string,
  status: string,
  reason?: string,
  timeoutMs = 30_000,
): Promise<MCPServer> {
  return waitFor(
    `${name} ${type}=${status}${reason === undefined ? '' : ` (${reason})`}`,
    async () => {
      const server = await k.get(name);
      const condition = server.status?.conditions?.find((c) => c.type === type);
      return condition?.status === status && (reason === undefined || condition.reason === reason)
        ? server
        : undefined;
    },
    { timeoutMs },
  );
}

/** When the operator last ran discovery of `namespace/name`, in Unix seconds (from /metrics). */
export async function lastAttempt(url: string, key: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) =>
      l.startsWith(`mcp_operator_discovery_last_attempt_timestamp_seconds{server="${key}"}`),
    );
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

/** Sets the annotation that runs discovery at once, as a user would with kubectl annotate. */
export async function requestDiscovery(k: Cluster, name: string, value: string): Promise<void> {
  const { namespace } = (await k.get(name)).metadata ?? {};
  await k.objects.patch(
    {
      apiVersion: API_VERSION,
      kind: 'MCPServer',
      metadata: { name, namespace, annotations: { [DISCOVER_ANNOTATION]: value } },
    },
    undefined,
    undefined,
    'test',
    undefined,
    PatchStrategy.MergePatch,
  );
}
