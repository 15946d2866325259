/**
 * Containers and volumes of an MCP server pod. For `stdio` the pod follows the bridge contract
 * (src/bridge/pod-contract.ts, docs/adr/0002-stdio-bridge-sidecar.md): an init container copies the
 * static busybox and the supervisor into a shared emptyDir, the server container runs the
 * user's command under that supervisor, and the bridge sidecar serves it as Streamable HTTP.
 * For `streamable-http` the user's container serves MCP itself, on localhost behind the bridge
 * in proxy mode (the Service targets the bridge), or directly when spec.bridge.enabled is false.
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
import { hasBridge, isEnforced, needsDiscoveryToken } from '../../api/v1alpha1/spec.ts';
import { oauthBridgeSettings, oauthBridgeVolumes } from './oauth.ts';

/** The name of the MCP port on containers and the Service. */
export const MCP_PORT_NAME = 'mcp';
/** In proxy mode, the server's own port: the Service targets the bridge's `mcp` port. */
export const UPSTREAM_PORT_NAME = 'mcp-upstream';
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

/** Where the bridge listens: spec.port for stdio; in proxy mode, beside the server's port. */
export const bridgePort = (server: StoredMCPServer): number =>
  server.spec.transport === 'stdio'
    ? effectivePort(server)
    : (server.spec.bridge?.port ?? DEFAULTS.bridge.proxyPort);

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

const mcpPort = (port: number, name = MCP_PORT_NAME) => [
  { name, containerPort: port, protocol: 'TCP' },
];

/**
 * A TCP probe: an HTTP GET on an MCP endpoint may legitimately answer 405 or 400
 * (Streamable HTTP only requires POST), so the port accepting connections is the signal.
 */
const tcpProbe = (periodSeconds: number, port = MCP_PORT_NAME): V1Probe => ({
  tcpSocket: { port },
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

/**
 * streamable-http: the user's container, listening on the MCP port itself. Behind the bridge
 * its port has another name, so the Service's named target port reaches the bridge.
 */
function httpServerContainer(server: StoredMCPServer, options: RenderOptions): V1Container {
  const { command, args } = server.spec;
  const portName = hasBridge(server) ? UPSTREAM_PORT_NAME : MCP_PORT_NAME;
  return {
    ...serverBase(server, options),
    ...(command === undefined ? {} : { command }),
    ...(args === undefined ? {} : { args }),
    ports: mcpPort(effectivePort(server), portName),
    readinessProbe: tcpProbe(5, portName),
    livenessProbe: tcpProbe(10, portName),
  };
}

/** streamable-http without a bridge (spec.bridge.enabled false): the user's container alone. */
export function streamableHttpParts(server: StoredMCPServer, options: RenderOptions): PodParts {
  return { containers: [httpServerContainer(server, options)], volumes: [tmpVolume] };
}

/**
 * streamable-http behind the bridge (proxy mode): the bridge is the server's client on
 * localhost, one MCP session there per client session (src/bridge/proxy/http-upstream.ts).
 */
export function proxiedHttpParts(server: StoredMCPServer, options: RenderOptions): PodParts {
  const upstream = `http://127.0.0.1:${effectivePort(server)}${effectivePath(server)}`;
  const bridge = bridgeParts(server, options, { upstream });
  return {
    containers: [httpServerContainer(server, options), bridge.container],
    volumes: [tmpVolume, ...bridge.volumes],
  };
}

/** Where the bridge's children come from: the supervisor (stdio) or the server's URL (proxy). */
type BridgeSource = Required<Pick<BridgeSettings, 'supervisorDir'>> | { upstream: string };

/** The bridge's flags, from spec.bridge with the API defaults for what it leaves out. */
export function bridgeSettings(server: StoredMCPServer, source: BridgeSource): BridgeSettings {
  const bridge = { ...DEFAULTS.bridge, ...server.spec.bridge };
  const port = bridgePort(server);
  return {
    // All interfaces: the Service and the kubelet's probes reach the pod IP.
    listen: `0.0.0.0:${port}`,
    path: effectivePath(server),
    sessionMode: bridge.sessionMode,
    maxSessions: bridge.maxSessions,
    warmPool: bridge.warmPool,
    idleTimeout: bridge.idleTimeout,
    requestTimeout: bridge.requestTimeout,
    ...(bridge.audit?.enabled === false ? { audit: 'off' as const } : {}),
    auditArguments: bridge.audit?.arguments ?? DEFAULTS.bridge.auditArguments,
    auditServer: `${server.metadata.namespace}/${server.metadata.name}`,
    ...(server.spec.auth === undefined ? {} : { authTokenFile: `${AUTH_MOUNT_PATH}/${AUTH_FILE}` }),
    ...oauthBridgeSettings(server),
    ...(isEnforced(server) ? { policyFile: POLICY_FILE } : {}),
    ...(needsDiscoveryToken(server)
      ? { discoveryTokenFile: `${DISCOVERY_MOUNT_PATH}/${DISCOVERY_TOKEN_KEY}` }
      : {}),
    ...source,
    // Always, whatever spec.replicas says: the pod template stays the same when it is scaled.
    replicaAddress: `$(${BRIDGE_POD_IP_ENV}):${port}`,
    peers: `${objectNames(server).peerService}.${server.metadata.namespace}.svc:${port}`,
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
  parts.push(...oauthBridgeVolumes(server, SECRET_FILE_MODE));
  return parts;
}

/** Our image, for the init container and the bridge: read-only, nothing to escalate. */
function ourImage(options: RenderOptions) {
  return {
    image: options.image,
    ...(options.imagePullPolicy === undefined ? {} : { imagePullPolicy: options.imagePullPolicy }),
    securityContext: restricted(true),
  };
}

/** stdio: init container, the user's command under the supervisor, and the bridge sidecar. */
export function stdioParts(server: StoredMCPServer, options: RenderOptions): PodParts {
  const shared: V1VolumeMount = { name: BRIDGE_VOLUME_NAME, mountPath: BRIDGE_MOUNT_PATH };
  const install: V1Container = {
    name: INSTALL_CONTAINER,
    ...ourImage(options),
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
  const bridge = bridgeParts(server, options, { supervisorDir: BRIDGE_MOUNT_PATH }, [shared]);
  return {
    initContainers: [install],
    containers: [serverContainer, bridge.container],
    volumes: [tmpVolume, { name: BRIDGE_VOLUME_NAME, emptyDir: {} }, ...bridge.volumes],
  };
}

/** The bridge sidecar, and the volumes only it reads; `mounts`: what it shares with the server. */
function bridgeParts(
  server: StoredMCPServer,
  options: RenderOptions,
  source: BridgeSource,
  mounts: V1VolumeMount[] = [],
): { container: V1Container; volumes: V1Volume[] } {
  const bridgeOnly = bridgeOnlyVolumes(server);
  const container: V1Container = {
    name: BRIDGE_CONTAINER,
    ...ourImage(options),
    command: [OPERATOR_BINARY, 'bridge', ...bridgeArgs(bridgeSettings(server, source))],
    env: [{ name: BRIDGE_POD_IP_ENV, valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
    ports: mcpPort(bridgePort(server)),
    readinessProbe: httpProbe('/readyz', 5),
    livenessProbe: httpProbe('/healthz', 10),
    resources: options.bridgeResources ?? DEFAULT_BRIDGE_RESOURCES,
    volumeMounts: [...mounts, ...bridgeOnly.map((part) => part.mount)],
  };
  return { container, volumes: bridgeOnly.map((part) => part.volume) };
}
