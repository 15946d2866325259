/**
 * Containers and volumes of an MCP server pod. For `stdio` the pod follows the bridge contract
 * (src/bridge/pod-contract.ts, docs/adr/0002-stdio-bridge-sidecar.md): an init container copies the
 * static busybox and the supervisor into a shared emptyDir, the server container runs the
 * user's command under that supervisor, and the bridge sidecar serves it as Streamable HTTP.
 * For `streamable-http` the user's container serves MCP itself.
 */

import type {
  V1Container,
  V1EnvVar,
  V1Probe,
  V1ResourceRequirements,
  V1SecurityContext,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { DEFAULTS } from '../../api/v1alpha1/mcpserver.ts';
import {
  BRIDGE_MOUNT_PATH,
  BRIDGE_POD_IP_ENV,
  BRIDGE_VOLUME_NAME,
  bridgeArgs,
  installArgs,
  supervisedCommand,
  type BridgeSettings,
} from '../../bridge/pod-contract.ts';
import { DISCOVERY_TOKEN_KEY } from '../../api/v1alpha1/stored.ts';
import type { StoredMCPServer } from '../../api/v1alpha1/stored.ts';
import { objectNames } from '../../api/v1alpha1/stored.ts';
import {
  DEFAULT_BRIDGE_RESOURCES,
  DEFAULT_SERVER_RESOURCES,
  INIT_RESOURCES,
  type RenderOptions,
} from './options.ts';
import { POLICY_KEY, POLICY_FILE, POLICY_MOUNT_PATH } from './policy.ts';
import { isEnforced, needsDiscoveryToken } from '../../api/v1alpha1/spec.ts';

/** The name of the MCP port on containers and the Service. */
export const MCP_PORT_NAME = 'mcp';
export const SERVER_CONTAINER = 'server';
export const BRIDGE_CONTAINER = 'bridge';
export const INSTALL_CONTAINER = 'bridge-install';
/** The CLI inside our image (see Dockerfile); named explicitly rather than relying on its entrypoint. */
const OPERATOR_BINARY = 'mcp-operator';

const TMP_VOLUME = 'tmp';
const TMP_PATH = '/tmp';
const AUTH_VOLUME = 'auth-token';
const AUTH_MOUNT_PATH = '/var/run/secrets/mcp-operator/auth';
const AUTH_FILE = 'token';
const POLICY_VOLUME = 'policy';
const DISCOVERY_VOLUME = 'discovery-token';
const DISCOVERY_MOUNT_PATH = '/var/run/secrets/mcp-operator/discovery';
/** Owner and group may read: the files are root-owned with the pod's fsGroup as group. */
const SECRET_FILE_MODE = 0o440;

export const effectivePort = (server: StoredMCPServer): number => server.spec.port ?? DEFAULTS.port;
export const effectivePath = (server: StoredMCPServer): string => server.spec.path ?? DEFAULTS.path;

/**
 * The container-level half of the restricted Pod Security Standard: no privilege escalation,
 * no capabilities. https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted
 */
function restricted(readOnlyRootFilesystem: boolean): V1SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    readOnlyRootFilesystem,
  };
}

/**
 * The user's environment, plus HOME=/tmp unless they set HOME: the server runs as a UID that
 * usually has no home directory in the image, and tools such as npx and uvx cache under HOME.
 */
function serverEnv(server: StoredMCPServer): V1EnvVar[] {
  // The API schema mirrors core/v1 EnvVar field for field, so the wire shapes are the same.
  const env = (server.spec.env ?? []) as V1EnvVar[];
  return env.some((variable) => variable.name === 'HOME')
    ? env
    : [...env, { name: 'HOME', value: TMP_PATH }];
}

/** What the user's container has in every transport: image, env, resources, a writable /tmp. */
function serverBase(server: StoredMCPServer, options: RenderOptions): V1Container {
  const { spec } = server;
  return {
    name: SERVER_CONTAINER,
    image: spec.image,
    env: serverEnv(server),
    ...(spec.envFrom === undefined ? {} : { envFrom: spec.envFrom }),
    resources:
      (spec.resources as V1ResourceRequirements | undefined) ??
      options.serverResources ??
      DEFAULT_SERVER_RESOURCES,
    securityContext: restricted(
      spec.securityContext?.readOnlyRootFilesystem ?? DEFAULTS.readOnlyRootFilesystem,
    ),
    volumeMounts: [{ name: TMP_VOLUME, mountPath: TMP_PATH }],
  };
}

const mcpPort = (port: number) => [{ name: MCP_PORT_NAME, containerPort: port, protocol: 'TCP' }];

/**
 * A TCP probe: an HTTP GET on an MCP endpoint may legitimately answer 405 or 400
 * (Streamable HTTP only requires POST), so the port accepting connections is the signal.
 */
const tcpProbe = (periodSeconds: number): V1Probe => ({
  tcpSocket: { port: MCP_PORT_NAME },
  periodSeconds,
  failureThreshold: 3,
});

const httpProbe = (path: string, periodSeconds: number): V1Probe => ({
  httpGet: { path, port: MCP_PORT_NAME },
  periodSeconds,
  failureThreshold: 3,
});

export interface PodParts {
  initContainers?: V1Container[];
  containers: V1Container[];
  volumes: V1Volume[];
}

const tmpVolume: V1Volume = { name: TMP_VOLUME, emptyDir: {} };

/** streamable-http: the user's container, listening on the MCP port itself. */
export function streamableHttpParts(server: StoredMCPServer, options: RenderOptions): PodParts {
  const { command, args } = server.spec;
  const container: V1Container = {
    ...serverBase(server, options),
    ...(command === undefined ? {} : { command }),
    ...(args === undefined ? {} : { args }),
    ports: mcpPort(effectivePort(server)),
    readinessProbe: tcpProbe(5),
    livenessProbe: tcpProbe(10),
  };
  return { containers: [container], volumes: [tmpVolume] };
}

/** The bridge's flags, from spec.bridge with the API defaults for what it leaves out. */
export function bridgeSettings(server: StoredMCPServer): BridgeSettings {
  const bridge = { ...DEFAULTS.bridge, ...server.spec.bridge };
  return {
    // All interfaces: the Service and the kubelet's probes reach the pod IP.
    listen: `0.0.0.0:${effectivePort(server)}`,
    path: effectivePath(server),
    sessionMode: bridge.sessionMode,
    maxSessions: bridge.maxSessions,
    warmPool: bridge.warmPool,
    idleTimeout: bridge.idleTimeout,
    requestTimeout: bridge.requestTimeout,
    ...(server.spec.auth === undefined ? {} : { authTokenFile: `${AUTH_MOUNT_PATH}/${AUTH_FILE}` }),
    ...(isEnforced(server) ? { policyFile: POLICY_FILE } : {}),
    ...(needsDiscoveryToken(server)
      ? { discoveryTokenFile: `${DISCOVERY_MOUNT_PATH}/${DISCOVERY_TOKEN_KEY}` }
      : {}),
    supervisorDir: BRIDGE_MOUNT_PATH,
    // Always, whatever spec.replicas says: the pod template stays the same when it is scaled.
    replicaAddress: `$(${BRIDGE_POD_IP_ENV}):${effectivePort(server)}`,
    peers: `${objectNames(server).peerService}.${server.metadata.namespace}.svc:${effectivePort(server)}`,
  };
}

/**
 * Volumes only the bridge reads: the client token (a file, never an env value), the policy and
 * the discovery token (the Secret the controller creates; see src/controller/discovery-token.ts).
 */
function bridgeOnlyVolumes(server: StoredMCPServer): { volume: V1Volume; mount: V1VolumeMount }[] {
  const parts: { volume: V1Volume; mount: V1VolumeMount }[] = [];
  const secretRef = server.spec.auth?.secretRef;
  if (secretRef !== undefined) {
    parts.push({
      volume: {
        name: AUTH_VOLUME,
        secret: {
          secretName: secretRef.name,
          items: [{ key: secretRef.key ?? DEFAULTS.authKey, path: AUTH_FILE }],
          defaultMode: SECRET_FILE_MODE,
        },
      },
      mount: { name: AUTH_VOLUME, mountPath: AUTH_MOUNT_PATH, readOnly: true },
    });
  }
  if (isEnforced(server)) {
    parts.push({
      volume: {
        name: POLICY_VOLUME,
        configMap: {
          name: objectNames(server).policyConfigMap,
          items: [{ key: POLICY_KEY, path: POLICY_KEY }],
        },
      },
      mount: { name: POLICY_VOLUME, mountPath: POLICY_MOUNT_PATH, readOnly: true },
    });
  }
  if (needsDiscoveryToken(server)) {
    parts.push({
      volume: {
        name: DISCOVERY_VOLUME,
        secret: {
          secretName: objectNames(server).discoverySecret,
          items: [{ key: DISCOVERY_TOKEN_KEY, path: DISCOVERY_TOKEN_KEY }],
          defaultMode: SECRET_FILE_MODE,
        },
      },
      mount: { name: DISCOVERY_VOLUME, mountPath: DISCOVERY_MOUNT_PATH, readOnly: true },
    });
  }
  return parts;
}

/** stdio: init container, the user's command under the supervisor, and the bridge sidecar. */
export function stdioParts(server: StoredMCPServer, options: RenderOptions): PodParts {
  const shared: V1VolumeMount = { name: BRIDGE_VOLUME_NAME, mountPath: BRIDGE_MOUNT_PATH };
  const ours = {
    image: options.image,
    ...(options.imagePullPolicy === undefined ? {} : { imagePullPolicy: options.imagePullPolicy }),
    securityContext: restricted(true),
  };
  const install: V1Container = {
    name: INSTALL_CONTAINER,
    ...ours,
    command: [OPERATOR_BINARY, ...installArgs()],
    resources: INIT_RESOURCES,
    volumeMounts: [shared],
  };
  const base = serverBase(server, options);
  const serverContainer: V1Container = {
    ...base,
    command: supervisedCommand(server.spec.command ?? [], server.spec.args ?? []),
    volumeMounts: [...(base.volumeMounts ?? []), shared],
  };
  const bridgeOnly = bridgeOnlyVolumes(server);
  const bridge: V1Container = {
    name: BRIDGE_CONTAINER,
    ...ours,
    command: [OPERATOR_BINARY, 'bridge', ...bridgeArgs(bridgeSettings(server))],
    env: [{ name: BRIDGE_POD_IP_ENV, valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
    ports: mcpPort(effectivePort(server)),
    readinessProbe: httpProbe('/readyz', 5),
    livenessProbe: httpProbe('/healthz', 10),
    resources: options.bridgeResources ?? DEFAULT_BRIDGE_RESOURCES,
    volumeMounts: [shared, ...bridgeOnly.map((part) => part.mount)],
  };
  return {
    initContainers: [install],
    containers: [serverContainer, bridge],
    volumes: [
      tmpVolume,
      { name: BRIDGE_VOLUME_NAME, emptyDir: {} },
      ...bridgeOnly.map((part) => part.volume),
    ],
  };
}
