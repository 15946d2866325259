/**
 * The contract between the pod the controller renders for a stdio MCPServer and the programs
 * that run in it (init container, supervisor, bridge sidecar). One definition, used by
 * `src/controller/render` to build the pod and by `src/bridge` to parse what it is given, so
 * the two cannot drift apart. See docs/adr/0002-stdio-bridge-sidecar.md.
 */

/** Name of the pod-local emptyDir shared by the init container, the server and the bridge. */
export const BRIDGE_VOLUME_NAME = 'mcp-bridge';

/** Where every container of the pod mounts that emptyDir. */
export const BRIDGE_MOUNT_PATH = '/var/run/mcp-bridge';

/** Files the init container copies into the emptyDir (names relative to the mount path). */
export const BUSYBOX_FILE = 'busybox';
export const SUPERVISOR_FILE = 'supervisor.sh';

/** Control FIFO the supervisor reads `start <id>` / `stop <id>` lines from. */
export const CONTROL_FIFO = 'control';

/**
 * Per-child FIFOs: the bridge writes requests to `<id>.in` and reads answers from `<id>.out`.
 * The supervisor creates every FIFO with mode 0660 (owner and group only): when the server and
 * the bridge run as different users, the pod's `securityContext.fsGroup` gives both the
 * emptyDir's group (the kubelet makes the directory setgid, so the FIFOs inherit it). The
 * server container's MCP_SUPERVISOR_FIFO_MODE overrides the mode.
 */
export const childInFifo = (id: string): string => `${id}.in`;
export const childOutFifo = (id: string): string => `${id}.out`;

/**
 * After `resolved <id>` (the bridge sends it when the child's first message arrived), the
 * supervisor writes `<id>.package`: `<launcher> <name> <version>` of the package the child's
 * launcher resolved and runs, or nothing when it runs none (docs/adr/0033).
 */
export const childPackageFile = (id: string): string => `${id}.package`;

/**
 * Environment variable the bridge reads the clients' bearer token from when no token file is
 * given (set it from a Secret with `secretKeyRef`). Never passed on to the server process.
 */
export const BRIDGE_TOKEN_ENV = 'MCP_BRIDGE_AUTH_TOKEN';

/** Seconds the supervisor waits between SIGTERM and SIGKILL when stopping a child. */
export const SUPERVISOR_GRACE_ENV = 'MCP_SUPERVISOR_GRACE_SECONDS';

/** Where our image keeps the files the init container copies. */
export const IMAGE_ASSET_DIR = '/usr/lib/mcp-operator';

export type SessionMode = 'PerSession' | 'Shared';

/** Settings of the bridge sidecar; each maps to one command-line flag of `mcp-operator bridge`. */
export interface BridgeSettings {
  /** Address the bridge listens on, `host:port`. */
  listen: string;
  /** HTTP path of the MCP endpoint. */
  path: string;
  sessionMode: SessionMode;
  maxSessions: number;
  warmPool: number;
  /** Go-style durations as written in the MCPServer spec (`30s`, `5m`). */
  idleTimeout: string;
  requestTimeout: string;
  /** File holding the bearer token clients must present; absent means no auth. */
  authTokenFile?: string;
  /** File holding the enforcement policy (approved tools, allowlist); absent means none. */
  policyFile?: string;
  /**
   * File holding the discovery token: only a request carrying it in DISCOVERY_TOKEN_HEADER may
   * list tools unfiltered (UNFILTERED_LIST_META, both in src/mcp/metadata.ts). Absent means no
   * request may.
   */
  discoveryTokenFile?: string;
  /**
   * OAuth 2.1 (2025-11-25 basic/authorization): the issuer whose access tokens the bridge
   * accepts. With `oauthResource`; absent means no OAuth. Excludes `authTokenFile`.
   */
  oauthIssuer?: string;
  /** The canonical resource URI that tokens must name as their audience (RFC 8707). */
  oauthResource?: string;
  /** Space-separated scopes every request's token must grant. */
  oauthScopes?: string;
  /** Accepted clock difference with the issuer for `exp` and `nbf`, a Go duration (`30s`). */
  oauthClockSkew?: string;
  /**
   * Directory of a mounted Secret with `client-id` and `client-secret`: the bridge's
   * credentials for RFC 7662 introspection of opaque tokens. Absent: only JWTs are accepted.
   */
  oauthIntrospectionDir?: string;
  /** Directory shared with the supervisor; absent means the bridge spawns the command itself. */
  supervisorDir?: string;
  /**
   * Proxy mode: the Streamable HTTP endpoint of a server that serves HTTP itself (in a pod, the
   * server container on localhost). Excludes `supervisorDir` and a command.
   */
  upstream?: string;
  /**
   * Comma-separated browser origins allowed to call the endpoint (`https://app.example`).
   * Requests without an Origin header are always allowed; absent means loopback origins only.
   */
  allowedOrigins?: string;
  /** Largest JSON-RPC message accepted, from a client (HTTP body) or a child (one line). */
  maxMessageBytes?: number;
  /**
   * `host:port` at which the other replicas reach this bridge (the pod IP and the bridge
   * port); it names the sessions this bridge holds. With `peers`; absent, sessions are not
   * routed between replicas.
   */
  replicaAddress?: string;
  /**
   * Comma-separated `host:port` entries of the replicas, names resolved to every address they
   * have (a headless Service): a request for a session another replica holds goes there.
   */
  peers?: string;
  /** `off`: no audit events. Absent: audit events on stdout (docs/audit.md). */
  audit?: 'on' | 'off';
  /** How much of a request's arguments audit events carry: `None`, `Redacted` or `Full`. */
  auditArguments?: string;
  /** `namespace/name` of the MCPServer, which every audit event names. */
  auditServer?: string;
  /**
   * OTLP/HTTP base URL (as OTEL_EXPORTER_OTLP_ENDPOINT): spans and audit log records go there
   * (docs/telemetry.md). Absent: OTEL_EXPORTER_OTLP_ENDPOINT, else no telemetry.
   */
  otlpEndpoint?: string;
  /** The share of new traces recorded, 0 to 1 (a client's sampled flag decides for its own). */
  traceSampling?: string;
}

/** The flag each setting is passed with. The bridge's argument parser reads the same table. */
export const BRIDGE_FLAGS = {
  listen: '--listen',
  path: '--path',
  sessionMode: '--session-mode',
  maxSessions: '--max-sessions',
  warmPool: '--warm-pool',
  idleTimeout: '--idle-timeout',
  requestTimeout: '--request-timeout',
  authTokenFile: '--auth-token-file',
  policyFile: '--policy-file',
  discoveryTokenFile: '--discovery-token-file',
  oauthIssuer: '--oauth-issuer',
  oauthResource: '--oauth-resource',
  oauthScopes: '--oauth-scopes',
  oauthClockSkew: '--oauth-clock-skew',
  oauthIntrospectionDir: '--oauth-introspection-dir',
  supervisorDir: '--supervisor-dir',
  upstream: '--upstream',
  allowedOrigins: '--allowed-origins',
  maxMessageBytes: '--max-message-bytes',
  replicaAddress: '--replica-address',
  peers: '--peers',
  audit: '--audit',
  auditArguments: '--audit-arguments',
  auditServer: '--audit-server',
  otlpEndpoint: '--otlp-endpoint',
  traceSampling: '--trace-sampling',
} as const satisfies Record<keyof BridgeSettings, string>;

/**
 * The bridge container's own pod IP (Downward API `status.podIP`), which its
 * `--replica-address` names as `$(MCP_BRIDGE_POD_IP)`: the kubelet expands it in args.
 */
export const BRIDGE_POD_IP_ENV = 'MCP_BRIDGE_POD_IP';

/** Arguments after `mcp-operator bridge` for the given settings (pod mode: no child command). */
export function bridgeArgs(settings: BridgeSettings): string[] {
  const args: string[] = [];
  for (const key of Object.keys(BRIDGE_FLAGS) as (keyof BridgeSettings)[]) {
    const value = settings[key];
    if (value !== undefined) args.push(BRIDGE_FLAGS[key], String(value));
  }
  return args;
}

/** Arguments after `mcp-operator` for the init container: copy busybox and the supervisor. */
export function installArgs(mountPath: string = BRIDGE_MOUNT_PATH): string[] {
  return ['bridge-install', '--to', mountPath];
}

/**
 * The server container's command: the user's command run under the supervisor by the static
 * busybox. Command and args stay separate argv entries; the supervisor receives them as
 * positional parameters and never interpolates them into a string.
 */
export function supervisedCommand(
  command: readonly string[],
  args: readonly string[],
  mountPath: string = BRIDGE_MOUNT_PATH,
): string[] {
  return [
    `${mountPath}/${BUSYBOX_FILE}`,
    'sh',
    `${mountPath}/${SUPERVISOR_FILE}`,
    '--',
    ...command,
    ...args,
  ];
}
