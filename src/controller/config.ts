/**
 * The controller's configuration, from command-line flags with environment variables as
 * fallback (flags win). Parsed when the command runs, never at import time, and passed down;
 * nothing below reads `process.env`.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
  type FlagSpec,
  LOG_LEVELS,
  argumentError,
  durationFlag,
  flagHelp,
  hostPortFlag,
  integerFlag,
  logLevelFlag,
} from '../flags.ts';
import { operatorError } from '../errors.ts';
import { type EgressSettings, isCidr } from '../discovery/egress.ts';
import type { LeaseSettings } from '../kube/leader.ts';

export interface ControllerConfig {
  /** Namespaces to watch; empty watches every namespace. */
  namespaces: string[];
  /** MCPServers reconciled at once. */
  concurrency: number;
  leaderElection: { enabled: boolean } & LeaseSettings;
  /** Our image: init container and bridge sidecar of stdio servers. */
  bridgeImage: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** `host:port` of /healthz, /readyz and /metrics. */
  metricsAddress: string;
  /** Every MCPServer is reconciled at least this often, changes or not. */
  resyncPeriodMs: number;
  /**
   * How long a stopping leader waits for its passes in flight before it cuts them off and
   * releases the Lease: shorter than the pod's grace period, or SIGKILL comes first and the
   * standby waits out the lease.
   */
  shutdownTimeoutMs: number;
  logLevel: string;
  /** A kubeconfig file; unset: $KUBECONFIG, ~/.kube/config or the in-cluster config. */
  kubeconfig?: string;
  /** Where discovery may connect (docs/tenancy.md). */
  discoveryEgress: EgressSettings;
}

/**
 * Each flag: what it takes and means, its environment variable and its default. `--help` and
 * docs/configuration.md are generated from this table.
 */
const FLAGS = {
  namespaces: {
    env: 'MCP_OPERATOR_NAMESPACES',
    default: '',
    type: 'list',
    meaning: 'Namespaces whose MCPServers to manage, comma-separated; empty: every namespace.',
  },
  concurrency: {
    env: 'MCP_OPERATOR_CONCURRENCY',
    default: '32',
    type: 'integer',
    meaning: 'MCPServers reconciled at once.',
  },
  'leader-elect': {
    env: 'MCP_OPERATOR_LEADER_ELECT',
    default: 'true',
    type: 'boolean',
    meaning:
      'Elect a leader with a Lease, so that one replica acts and the others stand by; --no-leader-elect turns it off.',
  },
  'leader-election-namespace': {
    env: 'MCP_OPERATOR_LEADER_ELECTION_NAMESPACE',
    default: '',
    type: 'namespace',
    meaning: "The Lease's namespace; empty: $POD_NAMESPACE (the operator's own), else default.",
  },
  'leader-election-name': {
    env: 'MCP_OPERATOR_LEADER_ELECTION_NAME',
    default: 'mcp-operator',
    type: 'name',
    meaning: "The Lease's name.",
  },
  'bridge-image': {
    env: 'MCP_OPERATOR_BRIDGE_IMAGE',
    default: 'mcp-operator:latest',
    type: 'image',
    meaning: 'Image of the bridge sidecar and its init container (the operator image).',
  },
  'image-pull-policy': {
    env: 'MCP_OPERATOR_IMAGE_PULL_POLICY',
    default: '',
    type: 'Always|IfNotPresent|Never',
    meaning: "Pull policy of those containers; empty: Kubernetes' default for the tag.",
  },
  'metrics-address': {
    env: 'MCP_OPERATOR_METRICS_ADDRESS',
    default: ':8080',
    type: 'host:port',
    meaning: 'Where /metrics, /healthz and /readyz are served; no host: every address.',
  },
  'resync-period': {
    env: 'MCP_OPERATOR_RESYNC_PERIOD',
    default: '10m',
    type: 'duration',
    meaning: 'Every MCPServer is reconciled at least this often, changed or not.',
  },
  'shutdown-timeout': {
    env: 'MCP_OPERATOR_SHUTDOWN_TIMEOUT',
    default: '20s',
    type: 'duration',
    meaning:
      "How long a stopping leader waits for passes in flight before it releases the Lease; keep it below the pod's grace period.",
  },
  'log-level': {
    env: 'MCP_OPERATOR_LOG_LEVEL',
    default: 'info',
    type: 'level',
    meaning: `One of ${LOG_LEVELS.join(', ')}; logs are JSON lines on stdout.`,
  },
  'discovery-denied-cidrs': {
    env: 'MCP_OPERATOR_DISCOVERY_DENIED_CIDRS',
    default: '',
    type: 'list',
    meaning:
      'Address ranges discovery does not connect to, besides the built-in ones (docs/tenancy.md).',
  },
  'discovery-allowed-cidrs': {
    env: 'MCP_OPERATOR_DISCOVERY_ALLOWED_CIDRS',
    default: '',
    type: 'list',
    meaning: 'Address ranges discovery may connect to although denied: exceptions win.',
  },
  // No variable of its own: without the flag, loadFromDefault reads $KUBECONFIG (a path list).
  kubeconfig: {
    env: undefined,
    default: '',
    type: 'file',
    meaning:
      'A kubeconfig file; unset: $KUBECONFIG, ~/.kube/config, or the in-cluster ServiceAccount.',
  },
} as const satisfies Record<string, Omit<FlagSpec, 'flag'>>;
type Flag = keyof typeof FLAGS;

/** The controller's flags, for --help and docs/configuration.md. */
export const CONTROLLER_FLAG_SPECS: readonly FlagSpec[] = Object.entries(FLAGS).map(
  ([flag, spec]) => ({ flag: `--${flag}`, ...spec }),
);

export function controllerUsage(command: string): string {
  return `Usage: mcp-operator ${command} [flags]

Flags (each falls back to its environment variable, then its default):
${flagHelp(CONTROLLER_FLAG_SPECS)}
`;
}

/** Boolean flags may stand alone, or be negated with `--no-`. */
const BOOLEAN_SPELLINGS: Record<string, string> = {
  '--leader-elect': '--leader-elect=true',
  '--no-leader-elect': '--leader-elect=false',
};

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;

/** A comma-separated list of address ranges, each checked (`10.0.0.0/8,fd00::/8`). */
function cidrs(flag: string, text: string): string[] {
  const list = text
    .split(',')
    .map((cidr) => cidr.trim())
    .filter((cidr) => cidr !== '');
  const bad = list.find((cidr) => !isCidr(cidr));
  if (bad !== undefined) {
    throw operatorError(
      'MCPOP_INVALID_FLAG',
      `--${flag}`,
      `'${bad}' is not an address range such as 10.0.0.0/8 or fd00::/8`,
    );
  }
  return list;
}

/** Checked here, so that a mistake is a line at start, not a listen error later. */
function metricsAddress(text: string): string {
  hostPortFlag('--metrics-address', text);
  return text;
}

function boolean(flag: string, text: string): boolean {
  if (text === 'true' || text === '') return true;
  if (text === 'false') return false;
  throw operatorError('MCPOP_INVALID_FLAG', `--${flag}`, `'${text}' is not true or false`);
}

/**
 * Reads flags from `argv` and falls back to `env`. `--leader-elect=false` and
 * `--no-leader-elect` both turn leader election off; `--leader-elect` alone turns it on.
 */
export function parseControllerConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ControllerConfig {
  const options = Object.fromEntries(
    Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }]),
  );
  let parsed;
  try {
    parsed = parseArgs({
      args: argv.map((arg) => BOOLEAN_SPELLINGS[arg] ?? arg),
      options,
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    const known = [...CONTROLLER_FLAG_SPECS.map(({ flag }) => flag), '--no-leader-elect'];
    throw argumentError(error, known) ?? error;
  }
  const { values } = parsed;
  const get = (flag: Flag): string => {
    const name: string | undefined = FLAGS[flag].env;
    return values[flag] ?? (name === undefined ? undefined : env[name]) ?? FLAGS[flag].default;
  };
  const pullPolicy = get('image-pull-policy');
  if (pullPolicy !== '' && !(PULL_POLICIES as readonly string[]).includes(pullPolicy)) {
    throw operatorError(
      'MCPOP_INVALID_FLAG',
      '--image-pull-policy',
      `'${pullPolicy}' is not one of ${PULL_POLICIES.join(', ')}`,
    );
  }
  return {
    namespaces: get('namespaces')
      .split(',')
      .map((ns) => ns.trim())
      .filter((ns) => ns !== ''),
    concurrency: integerFlag('--concurrency', get('concurrency'), 1),
    leaderElection: {
      enabled: boolean('leader-elect', get('leader-elect')),
      // In a pod, the Downward API sets POD_NAMESPACE: the Lease lives beside the operator.
      namespace: get('leader-election-namespace') || env['POD_NAMESPACE'] || 'default',
      name: get('leader-election-name'),
      identity: `${env['POD_NAME'] ?? hostname()}_${randomBytes(4).toString('hex')}`,
      // client-go's defaults (kube-controller-manager uses the same).
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    },
    bridgeImage: get('bridge-image'),
    ...(pullPolicy === ''
      ? {}
      : { imagePullPolicy: pullPolicy as ControllerConfig['imagePullPolicy'] }),
    metricsAddress: metricsAddress(get('metrics-address')),
    resyncPeriodMs: durationFlag('--resync-period', get('resync-period')),
    shutdownTimeoutMs: durationFlag('--shutdown-timeout', get('shutdown-timeout')),
    logLevel: logLevelFlag('--log-level', get('log-level')),
    ...(get('kubeconfig') === '' ? {} : { kubeconfig: get('kubeconfig') }),
    discoveryEgress: {
      // What client-node's in-cluster configuration reads: the API server's Service address.
      inCluster: env['KUBERNETES_SERVICE_HOST'] !== undefined,
      apiServerAddress: env['KUBERNETES_SERVICE_HOST'],
      denied: cidrs('discovery-denied-cidrs', get('discovery-denied-cidrs')),
      allowed: cidrs('discovery-allowed-cidrs', get('discovery-allowed-cidrs')),
    },
  };
}
