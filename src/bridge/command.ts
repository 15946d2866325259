/**
 * `mcp-operator bridge [flags] [-- <command> <args…>]`: serves a stdio MCP server as Streamable
 * HTTP. With a command it spawns the server itself (local mode); with --supervisor-dir it asks
 * the supervisor in the server container for children (pod mode); with --upstream it fronts a
 * server that speaks Streamable HTTP itself (proxy mode). The flags are the ones of
 * BRIDGE_FLAGS in pod-contract.ts, which the controller renders.
 */

import { parseArgs } from 'node:util';
import { pino, type Logger } from 'pino';
import type { Command } from '../command.ts';
import { parseDuration } from '../duration.ts';
import { durationFlag, integerFlag } from '../flags.ts';
import { operatorError, OperatorError } from '../errors.ts';
import { BRIDGE_FLAGS, BRIDGE_TOKEN_ENV } from './pod-contract.ts';
import { parseOrigins } from './front/guards.ts';
import { parseHostPort } from './front/replicas.ts';
import { startBridge, type AuditOptions, type BridgeOptions } from './server.ts';
import { ARGUMENT_MODES, type ArgumentMode } from './audit/event.ts';

const DEFAULTS = {
  listen: '127.0.0.1:8080',
  path: '/mcp',
  sessionMode: 'PerSession',
  maxSessions: '64',
  warmPool: '0',
  idleTimeout: '15m',
  requestTimeout: '5m',
  maxMessageBytes: String(4 * 1024 * 1024),
} as const;

/** Not part of BridgeSettings: only for running the bridge by hand. */
const EXTRA_FLAGS = { '--log-level': 'info', '--grace-period': '5s' } as const;

const USAGE = `Usage: mcp-operator bridge [flags] [-- <command> [args...]]

Serves a stdio MCP server as Streamable HTTP. Give the server command after --, or
--supervisor-dir in a pod. With --upstream URL it fronts a server that serves Streamable HTTP
itself (proxy mode). Flags:
${[...Object.values(BRIDGE_FLAGS), ...Object.keys(EXTRA_FLAGS)].map((flag) => `  ${flag}`).join('\n')}
The clients' bearer token comes from --auth-token-file or $${BRIDGE_TOKEN_ENV}.
`;

function hostPort(text: string): { host: string; port: number } {
  const match = /^(.*):(\d+)$/.exec(text);
  if (!match)
    throw operatorError('MCPOP_INVALID_FLAG', BRIDGE_FLAGS.listen, `'${text}' is not host:port`);
  return {
    host: match[1]!.replace(/^\[(.*)\]$/, '$1') || '0.0.0.0',
    port: integerFlag(BRIDGE_FLAGS.listen, match[2]!, 0),
  };
}

/** --upstream: an http(s) URL, the server's MCP endpoint. */
function upstreamFlag(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const url = URL.parse(text);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw operatorError(
      'MCPOP_INVALID_FLAG',
      BRIDGE_FLAGS.upstream,
      `'${text}' is not an http(s) URL`,
    );
  }
  return url.href;
}

/** --replica-address and --peers, which go together, each entry a host:port. */
function replicaFlags(
  self: string | undefined,
  peers: string | undefined,
): { self: string; peers: string[] } | undefined {
  if (self === undefined && peers === undefined) return undefined;
  if (self === undefined || peers === undefined) {
    const [given, missing] =
      self === undefined
        ? [BRIDGE_FLAGS.peers, BRIDGE_FLAGS.replicaAddress]
        : [BRIDGE_FLAGS.replicaAddress, BRIDGE_FLAGS.peers];
    throw operatorError('MCPOP_BRIDGE_USAGE', `${given} needs ${missing}`);
  }
  const list = peers
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const [flag, entry] of [
    [BRIDGE_FLAGS.replicaAddress, self],
    ...list.map((peer) => [BRIDGE_FLAGS.peers, peer]),
  ] as const) {
    if (parseHostPort(entry) === undefined) {
      throw operatorError('MCPOP_INVALID_FLAG', flag, `'${entry}' is not host:port`);
    }
  }
  return { self, peers: list };
}

/** An absolute http(s) URL without a fragment (RFC 8707 section 2: the resource indicator). */
function urlFlag(flag: string, text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw operatorError('MCPOP_INVALID_FLAG', flag, `'${text}' is not an absolute URL`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.hash !== '' || text.includes('#'))
    throw operatorError(
      'MCPOP_INVALID_FLAG',
      flag,
      `'${text}' is not an http(s) URL without a fragment`,
    );
  return text;
}

/** The --oauth-* flags: all absent (no OAuth), or an issuer and a resource at least. */
function oauthFlags(
  text: (flag: string) => string | undefined,
  authTokenFile: string | undefined,
): BridgeOptions['oauth'] {
  const issuer = text(BRIDGE_FLAGS.oauthIssuer);
  const resource = text(BRIDGE_FLAGS.oauthResource);
  const others = [
    BRIDGE_FLAGS.oauthScopes,
    BRIDGE_FLAGS.oauthClockSkew,
    BRIDGE_FLAGS.oauthIntrospectionDir,
  ];
  if (issuer === undefined && resource === undefined) {
    const stray = others.find((flag) => text(flag) !== undefined);
    if (stray)
      throw operatorError('MCPOP_BRIDGE_USAGE', `${stray} needs ${BRIDGE_FLAGS.oauthIssuer}`);
    return undefined;
  }
  if (issuer === undefined || resource === undefined) {
    throw operatorError(
      'MCPOP_BRIDGE_USAGE',
      `${BRIDGE_FLAGS.oauthIssuer} and ${BRIDGE_FLAGS.oauthResource} go together`,
    );
  }
  if (authTokenFile !== undefined) {
    throw operatorError(
      'MCPOP_BRIDGE_USAGE',
      `${BRIDGE_FLAGS.authTokenFile} and ${BRIDGE_FLAGS.oauthIssuer} exclude each other: both use the Authorization header`,
    );
  }
  const skewText = text(BRIDGE_FLAGS.oauthClockSkew) ?? '30s';
  // Zero is a valid skew (clocks in sync), unlike the durations durationFlag reads.
  const skew = parseDuration(skewText);
  if (skew === undefined || skew > MAX_CLOCK_SKEW_MS) {
    const problem = `'${skewText}' is not a duration from 0s to 5m`;
    throw operatorError('MCPOP_INVALID_FLAG', BRIDGE_FLAGS.oauthClockSkew, problem);
  }
  const introspectionDir = text(BRIDGE_FLAGS.oauthIntrospectionDir);
  return {
    issuer: urlFlag(BRIDGE_FLAGS.oauthIssuer, issuer),
    resource: urlFlag(BRIDGE_FLAGS.oauthResource, resource),
    scopes: (text(BRIDGE_FLAGS.oauthScopes) ?? '').split(/[\s,]+/).filter((s) => s !== ''),
    clockSkewSeconds: Math.floor(skew / 1000),
    ...(introspectionDir === undefined ? {} : { introspectionDir }),
  };
}

/** --audit (on by default), --audit-arguments and --audit-server. */
function auditFlags(text: (flag: string) => string | undefined): AuditOptions | undefined {
  const enabled = text(BRIDGE_FLAGS.audit) ?? 'on';
  if (enabled !== 'on' && enabled !== 'off')
    throw operatorError('MCPOP_INVALID_FLAG', BRIDGE_FLAGS.audit, `'${enabled}' is not on or off`);
  const mode = text(BRIDGE_FLAGS.auditArguments) ?? 'None';
  if (!(ARGUMENT_MODES as readonly string[]).includes(mode)) {
    const problem = `'${mode}' is not one of ${ARGUMENT_MODES.join(', ')}`;
    throw operatorError('MCPOP_INVALID_FLAG', BRIDGE_FLAGS.auditArguments, problem);
  }
  const serverText = text(BRIDGE_FLAGS.auditServer);
  const [namespace, name, ...rest] = serverText?.split('/') ?? [];
  if (serverText !== undefined && (!namespace || !name || rest.length > 0)) {
    const problem = `'${serverText}' is not namespace/name`;
    throw operatorError('MCPOP_INVALID_FLAG', BRIDGE_FLAGS.auditServer, problem);
  }
  if (enabled === 'off') return undefined;
  return {
    arguments: mode as ArgumentMode,
    server: namespace && name ? { namespace, name } : undefined,
  };
}

/** A bound on --oauth-clock-skew: a longer one would keep expired tokens alive. */
const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** Flags and the command after `--` → options (without the logger). */
export function parseBridgeArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Omit<BridgeOptions, 'logger'> & { logLevel: string } {
  const flagNames = [...Object.values(BRIDGE_FLAGS), ...Object.keys(EXTRA_FLAGS)].map((flag) =>
    flag.slice(2),
  );
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(flagNames.map((name) => [name, { type: 'string' as const }])),
    allowPositionals: true,
    strict: true,
  });
  const text = (flag: string): string | undefined => values[flag.slice(2)];
  const setting = <K extends keyof typeof DEFAULTS>(key: K): string =>
    text(BRIDGE_FLAGS[key]) ?? DEFAULTS[key];
  const settings = Object.fromEntries(
    Object.keys(DEFAULTS).map((key) => [key, setting(key as keyof typeof DEFAULTS)]),
  ) as Record<keyof typeof DEFAULTS, string>;
  const mode = settings.sessionMode;
  if (mode !== 'PerSession' && mode !== 'Shared') {
    throw operatorError(
      'MCPOP_INVALID_FLAG',
      BRIDGE_FLAGS.sessionMode,
      `'${mode}' is not PerSession or Shared`,
    );
  }
  const supervisorDir = text(BRIDGE_FLAGS.supervisorDir);
  const upstream = upstreamFlag(text(BRIDGE_FLAGS.upstream));
  const sources = [
    supervisorDir && BRIDGE_FLAGS.supervisorDir,
    upstream && BRIDGE_FLAGS.upstream,
    positionals.length > 0 && 'a command after --',
  ].filter((source) => typeof source === 'string');
  if (sources.length === 0) {
    throw operatorError(
      'MCPOP_BRIDGE_USAGE',
      `give the server command after --, ${BRIDGE_FLAGS.upstream}, or ${BRIDGE_FLAGS.supervisorDir}`,
    );
  }
  if (sources.length > 1) {
    throw operatorError('MCPOP_BRIDGE_USAGE', `${sources.join(' and ')} exclude each other`);
  }
  const replicas = replicaFlags(text(BRIDGE_FLAGS.replicaAddress), text(BRIDGE_FLAGS.peers));
  const path = settings.path;
  if (!path.startsWith('/'))
    throw operatorError('MCPOP_INVALID_FLAG', BRIDGE_FLAGS.path, `'${path}' does not start with /`);
  const maxSessions = integerFlag(BRIDGE_FLAGS.maxSessions, settings.maxSessions, 1);
  const warmPool = integerFlag(BRIDGE_FLAGS.warmPool, settings.warmPool, 0);
  if (warmPool > maxSessions) {
    throw operatorError(
      'MCPOP_INVALID_FLAG',
      BRIDGE_FLAGS.warmPool,
      `${warmPool} exceeds ${BRIDGE_FLAGS.maxSessions} ${maxSessions}`,
    );
  }
  return {
    ...hostPort(settings.listen),
    path,
    sessionMode: mode,
    maxSessions,
    warmPool,
    idleTimeoutMs: durationFlag(BRIDGE_FLAGS.idleTimeout, settings.idleTimeout),
    requestTimeoutMs: durationFlag(BRIDGE_FLAGS.requestTimeout, settings.requestTimeout),
    maxMessageBytes: integerFlag(BRIDGE_FLAGS.maxMessageBytes, settings.maxMessageBytes, 1024),
    allowedOrigins: parseOrigins(text(BRIDGE_FLAGS.allowedOrigins)),
    authTokenFile: text(BRIDGE_FLAGS.authTokenFile),
    authToken: env[BRIDGE_TOKEN_ENV],
    policyFile: text(BRIDGE_FLAGS.policyFile),
    discoveryTokenFile: text(BRIDGE_FLAGS.discoveryTokenFile),
    oauth: oauthFlags(text, text(BRIDGE_FLAGS.authTokenFile)),
    supervisorDir,
    upstream,
    command: positionals.length > 0 ? positionals : undefined,
    ...(replicas === undefined ? {} : { replicas }),
    audit: auditFlags(text),
    graceMs: durationFlag(
      '--grace-period',
      text('--grace-period') ?? EXTRA_FLAGS['--grace-period'],
    ),
    logLevel: text('--log-level') ?? EXTRA_FLAGS['--log-level'],
  };
}

const bridge: Command = async (argv) => {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(USAGE);
    return 0;
  }
  let options;
  try {
    options = parseBridgeArgs(argv, process.env);
  } catch (error) {
    if (!(error instanceof OperatorError) && !(error instanceof TypeError)) throw error;
    process.stderr.write(`mcp-operator bridge: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  const logger = pino({ level: options.logLevel, base: { component: 'bridge' } });
  const running = await startBridge({ ...options, logger });
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  logger.info({ signal }, 'shutting down: draining requests in flight, then stopping MCP servers');
  await running.close();
  logger.info('stopped');
  exitIfStillRunning(logger, options.graceMs);
  return 0;
};

/**
 * After shutdown the process ends by itself, once nothing is left open. Should something still
 * be (a child the shutdown missed, say), name it and exit, rather than hold the pod in
 * Terminating until the kubelet's SIGKILL at the end of the grace period.
 */
function exitIfStillRunning(logger: Logger, afterMs: number): void {
  setTimeout(() => {
    logger.error({ open: process.getActiveResourcesInfo() }, 'still running after shutdown');
    process.exit(1);
  }, afterMs).unref();
}

export default bridge;
