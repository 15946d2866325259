/**
 * The pod template of an MCP server: containers by transport, the user's pod overlay, the
 * restricted security context and the checksum that rolls pods when their start-up inputs
 * change.
 */

import type { V1PodSecurityContext, V1PodTemplateSpec } from '@kubernetes/client-node';
import { DEFAULTS } from '../../api/v1alpha1/mcpserver.ts';
import { API_GROUP } from '../../api/names.ts';
import { digestOf } from '../../tools/digest.ts';
import { proxiedHttpParts, stdioParts, streamableHttpParts, type PodParts } from './containers.ts';
import { hasBridge } from '../../api/v1alpha1/spec.ts';
import { standardLabels } from './metadata.ts';
import { objectNames, type StoredMCPServer } from '../../api/v1alpha1/stored.ts';
import type { RenderOptions, Resolved } from './options.ts';

export const CHECKSUM_ANNOTATION = `${API_GROUP}/config-checksum`;

/**
 * The UID and GID the pod runs as unless spec.pod.securityContext says otherwise: the usual
 * "nonroot" ID (distroless, our own image). The server and the bridge share it, so both can
 * open the supervisor's FIFOs; fsGroup makes the emptyDir theirs even when a user gives the
 * containers different IDs.
 */
export const DEFAULT_POD_ID = 65532;

/**
 * The pod-level half of the restricted Pod Security Standard (non-root, RuntimeDefault
 * seccomp), with the user's overrides merged over it.
 * https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted
 */
export function podSecurityContext(server: StoredMCPServer): V1PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: DEFAULT_POD_ID,
    runAsGroup: DEFAULT_POD_ID,
    fsGroup: DEFAULT_POD_ID,
    seccompProfile: { type: 'RuntimeDefault' },
    ...server.spec.pod?.securityContext,
  };
}

/**
 * Secrets and ConfigMaps whose content the pods read once, at start (environment variables and
 * the client token), as `Kind/name`, sorted. A change to one of them only reaches the pods
 * through a restart, so their versions go into the checksum. (The policy ConfigMap is not here:
 * the bridge reloads it.)
 */
export function startupReferences(server: StoredMCPServer): string[] {
  const { env = [], envFrom = [], auth } = server.spec;
  const refs = [
    ...env.flatMap(({ valueFrom }) => [
      ...(valueFrom?.secretKeyRef ? [`Secret/${valueFrom.secretKeyRef.name}`] : []),
      ...(valueFrom?.configMapKeyRef ? [`ConfigMap/${valueFrom.configMapKeyRef.name}`] : []),
    ]),
    ...envFrom.flatMap(({ secretRef, configMapRef }) => [
      ...(secretRef ? [`Secret/${secretRef.name}`] : []),
      ...(configMapRef ? [`ConfigMap/${configMapRef.name}`] : []),
    ]),
    ...(auth ? [`Secret/${auth.secretRef.name}`] : []),
  ];
  return [...new Set(refs)].sort();
}

/**
 * Everything else that must roll the pods is in the template already (a changed env entry or
 * Secret name changes the template itself); what is not is the content of the objects it
 * names. The checksum covers their versions as the caller observed them.
 */
export function configChecksum(server: StoredMCPServer, resolved: Resolved): string {
  const versions = resolved.referenceVersions ?? {};
  return digestOf(
    Object.fromEntries(startupReferences(server).map((ref) => [ref, versions[ref] ?? ''])),
  );
}

function parts(server: StoredMCPServer, options: RenderOptions): PodParts {
  if (server.spec.transport === 'stdio') return stdioParts(server, options);
  return hasBridge(server)
    ? proxiedHttpParts(server, options)
    : streamableHttpParts(server, options);
}

/**
 * The pod's identity: the user's ServiceAccount as is, or ours, whose token is not mounted
 * because an MCP server has no business with the Kubernetes API.
 */
function serviceAccount(server: StoredMCPServer) {
  const own = server.spec.pod?.serviceAccountName;
  return own === undefined
    ? {
        serviceAccountName: objectNames(server).serviceAccount,
        automountServiceAccountToken: false,
      }
    : { serviceAccountName: own };
}

export function podTemplate(
  server: StoredMCPServer,
  options: RenderOptions,
  resolved: Resolved,
): V1PodTemplateSpec {
  const pod = server.spec.pod ?? {};
  return {
    metadata: {
      // Ours last: CEL refuses reserved labels, and the selector must hold regardless.
      labels: { ...pod.labels, ...standardLabels(server) },
      annotations: { ...pod.annotations, [CHECKSUM_ANNOTATION]: configChecksum(server, resolved) },
    },
    spec: {
      ...serviceAccount(server),
      // Service links would put every Service of the namespace into the server's environment.
      enableServiceLinks: false,
      securityContext: podSecurityContext(server),
      ...(pod.nodeSelector === undefined ? {} : { nodeSelector: pod.nodeSelector }),
      ...(pod.tolerations === undefined ? {} : { tolerations: pod.tolerations }),
      ...(pod.affinity === undefined ? {} : { affinity: pod.affinity }),
      ...(pod.imagePullSecrets === undefined ? {} : { imagePullSecrets: pod.imagePullSecrets }),
      ...parts(server, options),
    },
  };
}

export const effectiveReplicas = (server: StoredMCPServer): number =>
  server.spec.replicas ?? DEFAULTS.replicas;
