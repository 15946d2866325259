/**
 * `mcp-operator bridge [flags] [-- <command> <args…>]`: serves a stdio MCP server as Streamable
 * HTTP. With a command it spawns the server itself (local mode); with --supervisor-dir it asks
 * the supervisor in the server container for children (pod mode); with --upstream it fronts a
 * server that speaks Streamable HTTP itself (proxy mode). The flags are the ones of
 * BRIDGE_FLAGS in pod-contract.ts, which the controller renders.
 */

import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino, type Logger } from 'pino';
import type { Command } from '../command.ts';
import { parseDuration } from '../duration.ts';
import {
  argumentError,
  durationFlag,
  flagHelp,
  hostPortFlag,
  integerFlag,
  logLevelFlag,
} from '../flags.ts';
import { operatorError, OperatorError } from '../errors.ts';
import { BRIDGE_DEFAULTS, BRIDGE_EXTRA_FLAGS, BRIDGE_FLAG_SPECS } from './flags.ts';
import { BRIDGE_FLAGS, BRIDGE_TOKEN_ENV } from './pod-contract.ts';
import { parseOrigins } from './front/guards.ts';
import { parseHostPort } from './front/replicas.ts';
import { startBridge, type AuditOptions, type BridgeOptions } from './server.ts';
import { ARGUMENT_MODES, type ArgumentMode } from './audit/event.ts';

const DEFAULTS = {
  listen: BRIDGE_DEFAULTS.listen,
  path: BRIDGE_DEFAULTS.path,
  sessionMode: BRIDGE_DEFAULTS.sessionMode,
  maxSessions: BRIDGE_DEFAULTS.maxSessions,
  warmPool: BRIDGE_DEFAULTS.warmPool,
  idleTimeout: BRIDGE_DEFAULTS.idleTimeout,
  requestTimeout: BRIDGE_DEFAULTS.requestTimeout,
  maxMessageBytes: BRIDGE_DEFAULTS.maxMessageBytes,
} as const;

const { logLevel: LOG_LEVEL, gracePeriod: GRACE_PERIOD } = BRIDGE_EXTRA_FLAGS;

const USAGE = `Usage: mcp-operator bridge [flags] [-- <command> [args...]]

Serves an MCP server as Streamable HTTP, with policy, auth and limits in front of it. Give it
one of: a stdio server's command after -- (local mode: it spawns the command), --supervisor-dir
(in a pod: the supervisor in the server container spawns it), or --upstream URL (proxy mode: a
server that serves Streamable HTTP itself).

  mcp-operator bridge -- npx -y @modelcontextprotocol/server-everything
  mcp-operator bridge --upstream http://127.0.0.1:3001/mcp --listen 127.0.0.1:8081

Flags:
${flagHelp(BRIDGE_FLAG_SPECS)}
`;

const HELP_HINT = 'Run `mcp-operator bridge --help` for the flags.';

function hostPort(text: string): { host: string; port: number } {
  const { host, port } = hostPortFlag(BRIDGE_FLAGS.listen, text);
  return { host: host || '0.0.0.0', port };
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
  const skewText = text(BRIDGE_FLAGS.oauthClockSkew) ?? BRIDGE_DEFAULTS.oauthClockSkew;
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
  const server = servedFlag(text);
  if (enabled === 'off') return undefined;
  return { arguments: mode as ArgumentMode, server };
}

/** --audit-server: the MCPServer served, which audit events and the telemetry resource name. */
function servedFlag(
  text: (flag: string) => string | undefined,
): { namespace: string; name: string } | undefined {
  const serverText = text(BRIDGE_FLAGS.auditServer);
  const [namespace, name, ...rest] = serverText?.split('/') ?? [];
  if (serverText !== undefined && (!namespace || !name || rest.length > 0)) {
    const problem = `'${serverText}' is not namespace/name`;
    throw operatorError('MCPOP_INVALID_FLAG', BRIDGE_FLAGS.auditServer, problem);
  }
  return namespace && name ? { namespace, name } : undefined;
}

/**
 * --otlp-endpoint and --trace-sampling, with the standard OpenTelemetry variables as their
 * defaults (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_SAMPLER_ARG; OTEL_SDK_DISABLED=true turns
 * it off). No endpoint: no telemetry, and no SDK loaded.
 */
function telemetryFlags(
  text: (flag: string) => string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): BridgeOptions['telemetry'] {
  const endpoint =
    text(BRIDGE_FLAGS.otlpEndpoint) ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined);
  if (endpoint === undefined || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true')
    return undefined;
  const ratioText = text(BRIDGE_FLAGS.traceSampling) ?? (env.OTEL_TRACES_SAMPLER_ARG || '1');
  const samplingRatio = Number(ratioText);
  if (ratioText.trim() === '' || !(samplingRatio >= 0 && samplingRatio <= 1)) {
    const problem = `'${ratioText}' is not a number from 0 to 1`;
    throw operatorError('MCPOP_INVALID_FLAG', BRIDGE_FLAGS.traceSampling, problem);
  }
  return {
    endpoint: urlFlag(BRIDGE_FLAGS.otlpEndpoint, endpoint),
    samplingRatio,
    server: servedFlag(text),
  };
}

/** A bound on --oauth-clock-skew: a longer one would keep expired tokens alive. */
const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** Flags and the command after `--` → options (without the logger). */
export function parseBridgeArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Omit<BridgeOptions, 'logger'> & { logLevel: string } {
  const known = BRIDGE_FLAG_SPECS.map(({ flag }) => flag);
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: Object.fromEntries(
        known.map((flag) => [flag.slice(2), { type: 'string' as const }]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw argumentError(error, known) ?? error;
  }
  const { values, positionals } = parsed;
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
    telemetry: telemetryFlags(text, env),
    graceMs: durationFlag(GRACE_PERIOD.flag, text(GRACE_PERIOD.flag) ?? GRACE_PERIOD.default),
    logLevel: logLevelFlag(LOG_LEVEL.flag, text(LOG_LEVEL.flag) ?? LOG_LEVEL.default),
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
    if (!(error instanceof OperatorError)) throw error;
    process.stderr.write(`mcp-operator bridge: ${error.message}\n${HELP_HINT}\n`);
    return 2;
  }
  const logger = pino({ level: options.logLevel, base: { component: 'bridge' } });
  let running;
  try {
    if (options.command !== undefined) await findCommand(options.command[0]!, process.env);
    running = await startBridge({ ...options, logger });
  } catch (error) {
    const refusal = startRefusal(error, options);
    if (refusal === undefined) throw error;
    process.stderr.write(`mcp-operator bridge: ${refusal.message}\n`);
    return 1;
  }
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

/** A mistake at start that one line explains: the address taken, the command missing. */
function startRefusal(
  error: unknown,
  options: { host: string; port: number },
): OperatorError | undefined {
  if (error instanceof OperatorError) return error;
  if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    return operatorError('MCPOP_ADDRESS_IN_USE', `${host}:${options.port}`, BRIDGE_FLAGS.listen);
  }
  return undefined;
}

/**
 * Local mode: the command must exist before the bridge serves, or every session would fail to
 * start it, each with a trace. A name with a slash is a path; one without is looked up on PATH,
 * as spawn does.
 */
async function findCommand(
  command: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  const executable = async (path: string) =>
    access(path, constants.X_OK).then(
      () => true,
      () => false,
    );
  if (command.includes('/')) {
    if (!(await executable(command)))
      throw operatorError('MCPOP_COMMAND_NOT_FOUND', command, '(no executable file there)');
    return;
  }
  const dirs = (env['PATH'] ?? '').split(delimiter).filter((dir) => dir !== '');
  for (const dir of dirs) if (await executable(join(dir, command))) return;
  throw operatorError('MCPOP_COMMAND_NOT_FOUND', command, 'on PATH');
}

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
