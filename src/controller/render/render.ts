/**
 * render(mcpServer) → the objects that should exist for it. Pure: the same inputs give the
 * same objects, byte for byte, so server-side apply of an unchanged server writes nothing.
 * The reconciler applies what this returns and deletes owned objects it no longer returns.
 */

import type {
  V1ConfigMap,
  V1Deployment,
  V1Service,
  V1ServiceAccount,
  V1ServiceSpec,
} from '@kubernetes/client-node';
import { MCP_PORT_NAME, effectivePath, effectivePort } from './containers.ts';
import { objectMeta, selectorLabels } from './metadata.ts';
import { objectNames, type StoredMCPServer } from '../../api/v1alpha1/stored.ts';
import type { RenderOptions, Resolved } from './options.ts';
import { effectiveReplicas, podTemplate } from './pod.ts';
import { policyConfigMap } from './policy.ts';
import { hasBridge, isEnforced } from '../../api/v1alpha1/spec.ts';

export type DesiredObject = V1ServiceAccount | V1ConfigMap | V1Service | V1Deployment;

/** Kinds render may return, in the order to apply them (a pod needs its SA and ConfigMap). */
export const RENDERED_KINDS = ['ServiceAccount', 'ConfigMap', 'Service', 'Deployment'] as const;

/**
 * What must exist before the Deployment's pods are created: their ServiceAccount (admission
 * refuses a pod whose account is missing) and the ConfigMap they mount. The Services need not
 * wait (pods get no service environment variables: enableServiceLinks is off), so they are
 * written together with the Deployment: creating a Service allocates its cluster IP and is the
 * slowest of these writes under load, and the rollout need not wait for it.
 */
export const isPodPrerequisite = (kind: string | undefined): boolean =>
  kind === 'ServiceAccount' || kind === 'ConfigMap';

/**
 * A few old ReplicaSets suffice to roll back; the default of 10 per server adds up to
 * thousands of idle objects in a cluster with many MCP servers.
 */
const REVISION_HISTORY_LIMIT = 3;

function deployment(
  server: StoredMCPServer,
  options: RenderOptions,
  resolved: Resolved,
): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: objectMeta(server, objectNames(server).deployment),
    spec: {
      replicas: effectiveReplicas(server),
      revisionHistoryLimit: REVISION_HISTORY_LIMIT,
      selector: { matchLabels: selectorLabels(server) },
      template: podTemplate(server, options, resolved),
    },
  };
}

/** A Service of the server's pods on the MCP port; `spec` says what kind. */
function service(
  server: StoredMCPServer,
  name: string,
  spec: Pick<V1ServiceSpec, 'type' | 'clusterIP' | 'publishNotReadyAddresses'>,
): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: objectMeta(server, name),
    spec: {
      ...spec,
      selector: selectorLabels(server),
      ports: [
        {
          name: MCP_PORT_NAME,
          port: effectivePort(server),
          targetPort: MCP_PORT_NAME,
          protocol: 'TCP',
          appProtocol: 'http',
        },
      ],
    },
  };
}

/**
 * The bridges of a server find each other through this headless Service: its name
 * resolves to every pod, ready or not (a pod that is not ready may still hold sessions, and
 * a shutting-down one finishes its requests), and the bridge forwards a request for another
 * replica's session there (src/bridge/front/replicas.ts, docs/adr/0007).
 */
function peerService(server: StoredMCPServer): V1Service {
  return service(server, objectNames(server).peerService, {
    clusterIP: 'None',
    publishNotReadyAddresses: true,
  });
}

function serviceAccount(server: StoredMCPServer): V1ServiceAccount {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: objectMeta(server, objectNames(server).serviceAccount),
    automountServiceAccountToken: false,
  };
}

/** The objects for `server`, in RENDERED_KINDS order. A url server gets none. */
export function render(
  server: StoredMCPServer,
  options: RenderOptions,
  resolved: Resolved = {},
): DesiredObject[] {
  if (server.spec.image === undefined) return [];
  return [
    ...(server.spec.pod?.serviceAccountName === undefined ? [serviceAccount(server)] : []),
    ...(isEnforced(server) ? [policyConfigMap(server, resolved.baseline)] : []),
    service(server, objectNames(server).service, { type: 'ClusterIP' }),
    ...(hasBridge(server) ? [peerService(server)] : []),
    deployment(server, options, resolved),
  ];
}

/**
 * The MCP endpoint clients in the cluster use: the Service for a deployed server (the
 * namespace-qualified `.svc` name resolves from any namespace), or spec.url.
 */
export function endpointOf(server: StoredMCPServer): string {
  if (server.spec.url !== undefined) return server.spec.url;
  const { service: name } = objectNames(server);
  return `http://${name}.${server.metadata.namespace}.svc:${effectivePort(server)}${effectivePath(server)}`;
}
