/**
 * Wires a running bridge: children (spawned or supervised, behind the warm pool), the session
 * table, policy, auth and audit, then one node:http server (front/http-server.ts) for the MCP
 * endpoint, the change feed, `/healthz`, `/readyz` and `/metrics`, and the order it all stops
 * in. Used by the CLI command and, in-process, by tests and the bench.
 */

import type { Server } from 'node:http';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { createAuth, createDiscoveryToken, type Auth, type DiscoveryToken } from './auth/bearer.ts';
import { SessionTable } from './front/session-table.ts';
import { ChangeFeed, changesRoute } from './front/change-feed.ts';
import { ByteBudget } from './budget.ts';
import { BRIDGE_FLAGS, BRIDGE_TOKEN_ENV, type SessionMode } from './pod-contract.ts';
import { mcpEndpoint } from './front/endpoint.ts';
import { entryGuard, type EntryGuard } from './entry-guard.ts';
import { isLoopback } from './front/guards.ts';
import { listen, routedServer, type Routes } from './front/http-server.ts';
import { Readiness } from './front/readiness.ts';
import { HttpLauncher } from './proxy/http-upstream.ts';
import { CHANGES_PATH } from '../mcp/change-feed.ts';
import { createMetrics, type BridgeMetrics } from './metrics.ts';
import { Era2026Endpoint } from './front/era-2026.ts';
import { PolicyGate } from './policy/gate.ts';
import { parsePolicy, type BridgePolicy } from '../tools/policy.ts';
import { WarmPool } from './child/pool.ts';
import { ReplicaRouter } from './front/replicas.ts';
import { replyText } from './replies.ts';
import { SpawnLauncher } from './child/spawn.ts';
import { SupervisedLauncher } from './child/supervised.ts';
import type { Launcher } from './transport.ts';
import { WatchedFile } from './watched-file.ts';
import { metadataRoutes, startResourceServer, type OAuthOptions } from './auth/oauth-setup.ts';
import type { AuditTrail } from './audit/trail.ts';
import { startAuditTrail, type AuditOptions } from './audit/setup.ts';
import { observeAll, type RequestObserver } from './audit/observer.ts';
import type { Telemetry, TelemetryOptions } from './audit/telemetry.ts';

export type { AuditOptions } from './audit/setup.ts';

export interface BridgeOptions {
  host: string;
  port: number;
  path: string;
  sessionMode: SessionMode;
  maxSessions: number;
  warmPool: number;
  idleTimeoutMs: number;
  requestTimeoutMs: number;
  maxMessageBytes: number;
  allowedOrigins: string[];
  authTokenFile?: string;
  /** Token from the environment, used when there is no token file. */
  authToken?: string;
  policyFile?: string;
  /** The discovery token: only requests carrying it may list tools unfiltered. */
  discoveryTokenFile?: string;
  /** OAuth 2.1 access tokens instead of a bearer token (oauth.ts); absent: no OAuth. */
  oauth?: OAuthOptions | undefined;
  /** Pod mode: the emptyDir shared with the supervisor. */
  supervisorDir?: string;
  /** Local mode: the server command. */
  command?: string[];
  /** Proxy mode: the MCP endpoint of a server that serves Streamable HTTP itself. */
  upstream?: string;
  /** Wait between closing a child's stdin, SIGTERM and SIGKILL; also the drain on shutdown. */
  graceMs: number;
  logger: Logger;
  /** Launcher override for tests (an in-memory server); replaces command/supervisorDir/upstream. */
  launcher?: Launcher;
  /** Replicas of one server: where the others reach this bridge, and where they all are. */
  replicas?: { self: string; peers: string[] };
  /** Audit events (docs/audit.md); absent: none. */
  audit?: AuditOptions | undefined;
  /** Spans and audit log records over OTLP (docs/telemetry.md); absent: no SDK is loaded. */
  telemetry?: Pick<TelemetryOptions, 'endpoint' | 'samplingRatio' | 'server'> | undefined;
}

export interface RunningBridge {
  url: string;
  bridge: SessionTable;
  metrics: BridgeMetrics;
  /** Resolves when the first readiness probe has finished (ready or not). */
  probed: Promise<void>;
  close(): Promise<void>;
}

/** Children for sessions: spawned, supervised or an HTTP upstream, behind the warm pool. */
interface Children {
  launcher: Launcher;
  pool: WarmPool | undefined;
}

/** The parts of a bridge, wired before it listens; `shutdown` stops them. */
interface Parts {
  metrics: BridgeMetrics;
  changes: ChangeFeed;
  guard: EntryGuard;
  policy: WatchedFile<BridgePolicy> | undefined;
  auth: Auth | undefined;
  discoveryToken: DiscoveryToken | undefined;
  oauth: ResourceServerHandle | undefined;
  replicas: ReplicaRouter | undefined;
  audit: AuditTrail | undefined;
  telemetry: Telemetry | undefined;
  /** The audit trail and the spans, as the front and the upstream call them. */
  observer: RequestObserver | undefined;
  bridge: SessionTable;
  era2026: Era2026Endpoint;
  readiness: Readiness;
}

type ResourceServerHandle = Awaited<ReturnType<typeof startResourceServer>>;

export async function startBridge(options: BridgeOptions): Promise<RunningBridge> {
  const parts = await wireParts(options);
  const server = routedServer(routesOf(options, parts), parts.guard);
  const url = `${await listen(server, options)}${options.path}`;
  options.logger.info({ url, sessionMode: options.sessionMode }, 'bridge listening');
  warnIfOpenToAll(options, parts);
  const probed = parts.readiness.probe(parts.bridge, options.logger);
  let closing: Promise<void> | undefined;
  return {
    url,
    bridge: parts.bridge,
    metrics: parts.metrics,
    probed,
    close() {
      closing ??= shutdown(parts, server, probed, options.graceMs);
      return closing;
    },
  };
}

/** Everything but the socket: children, policy, credentials, audit, sessions, both eras. */
async function wireParts(options: BridgeOptions): Promise<Parts> {
  const { logger } = options;
  const metrics = createMetrics();
  const changes = new ChangeFeed();
  // The warm pool starts its children now, while the files below are read.
  const children = startChildren(options, changes);
  const policy = await loadPolicy(options);
  const auth = await createAuth({
    file: options.authTokenFile,
    envToken: options.authToken,
    logger,
  });
  const discoveryToken = await createDiscoveryToken({ file: options.discoveryTokenFile, logger });
  const oauth = options.oauth && (await startResourceServer(options.oauth, logger));
  const replicas = options.replicas && new ReplicaRouter({ ...options.replicas, logger });
  const telemetry = options.telemetry && (await startTelemetry(options.telemetry, logger, metrics));
  const audit =
    options.audit &&
    startAuditTrail(options.audit, {
      logger,
      metrics,
      credential: oauth ? 'oauth' : auth ? 'token' : 'none',
      alsoTo: telemetry?.auditSink,
    });
  const observer = observeAll(telemetry?.spans, audit);
  metrics.observeChanges({
    generation: () => changes.mark.generation,
    waiting: () => changes.waiting,
  });
  const guard = entryGuard(logger, (entry) => metrics.entryFailures.inc({ entry }));
  const bridge = sessionTable(options, children, {
    metrics,
    changes,
    guard,
    policy,
    replicas,
    observer,
  });
  const era2026 = new Era2026Endpoint({
    bridge,
    logger,
    parkMs: options.requestTimeoutMs,
    ...(replicas === undefined ? {} : { replicas }),
    audit,
  });
  const readiness = new Readiness(policy);
  return {
    ...{ metrics, changes, guard, policy, auth, discoveryToken, oauth, replicas, audit },
    ...{ telemetry, observer },
    ...{ bridge, era2026, readiness },
  };
}

function startChildren(options: BridgeOptions, changes: ChangeFeed): Children {
  const launcher = launcherFor(options, changes);
  const pool =
    options.warmPool > 0 && options.sessionMode === 'PerSession'
      ? new WarmPool(launcher, options.warmPool, options.logger)
      : undefined;
  return { launcher, pool };
}

function launcherFor(options: BridgeOptions, changes: ChangeFeed): Launcher {
  if (options.launcher) return options.launcher;
  if (options.upstream) {
    return new HttpLauncher({
      url: options.upstream,
      maxMessageBytes: options.maxMessageBytes,
      requestTimeoutMs: options.requestTimeoutMs,
      logger: options.logger,
    });
  }
  const common = { maxLineBytes: options.maxMessageBytes, graceMs: options.graceMs };
  if (options.supervisorDir)
    return new SupervisedLauncher({
      dir: options.supervisorDir,
      ...common,
      onPackage: (resolved) => changes.observePackage(resolved),
    });
  const [command, ...args] = options.command ?? [];
  if (command === undefined)
    throw new Error('a command, a supervisor directory or an upstream URL is required');
  return new SpawnLauncher({ command, args, ...common });
}

async function loadPolicy(options: BridgeOptions): Promise<WatchedFile<BridgePolicy> | undefined> {
  if (!options.policyFile) return undefined;
  const file = options.policyFile;
  const watched = new WatchedFile({
    path: file,
    parse: (text) => parsePolicy(text, file),
    logger: options.logger,
    what: 'policy',
  });
  await watched.start();
  return watched;
}

/** The sessions of both eras over the children, each upstream behind the policy gate. */
function sessionTable(
  options: BridgeOptions,
  { launcher, pool }: Children,
  parts: Pick<Parts, 'metrics' | 'changes' | 'guard' | 'policy' | 'replicas' | 'observer'>,
): SessionTable {
  const { metrics, changes, policy, replicas, observer } = parts;
  return new SessionTable(
    {
      mode: options.sessionMode,
      maxSessions: options.maxSessions,
      idleTimeoutMs: options.idleTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
    },
    {
      launcher: pool ?? launcher,
      probeLauncher: launcher,
      logger: options.logger,
      metrics,
      // Room for a few messages of the largest size per session; for the bridge, a share of the
      // sidecar's memory limit (256Mi) at the default --max-message-bytes of 4 MiB.
      budget: new ByteBudget({
        session: 4 * options.maxMessageBytes,
        bridge: 16 * options.maxMessageBytes,
      }),
      pooled: () => pool?.size ?? 0,
      guard: parts.guard,
      ...(replicas === undefined ? {} : { sessionId: () => replicas.newId() }),
      ...(observer === undefined ? {} : { onRequestEnd: observer.requestEnded }),
      hooks: (upstream) =>
        changes.observing(
          policy
            ? new PolicyGate(
                () => policy.value,
                upstream,
                (reason) => metrics.policyDenials.inc({ reason }),
              ).hooks()
            : {},
        ),
    },
  );
}

/** The paths the bridge serves: the MCP endpoint, the change feed, probes, metrics, metadata. */
function routesOf(options: BridgeOptions, parts: Parts): Routes {
  const { metrics, changes, policy, auth, discoveryToken, oauth, replicas, readiness } = parts;
  const endpoint = mcpEndpoint({
    bridge: parts.bridge,
    maxBodyBytes: options.maxMessageBytes,
    allowedOrigins: options.allowedOrigins,
    auth,
    oauth: oauth?.server,
    oauthRefused: (reason) => metrics.oauthRefusals.inc({ reason }),
    policy: () => policy?.value,
    discoveryToken,
    logger: options.logger,
    accepting: () => readiness.accepting,
    era2026: parts.era2026,
    audit: parts.observer,
  });
  return {
    // A request for another replica's session goes there before anything else reads it.
    [options.path]: replicas
      ? async (req, res) => {
          if (await replicas.route(req, res)) return;
          await endpoint(req, res);
        }
      : endpoint,
    [CHANGES_PATH]: changesRoute(changes, discoveryToken),
    '/healthz': (_req, res) => replyText(res, 200, 'ok\n'),
    '/readyz': readiness.route,
    '/metrics': async (_req, res) => {
      replyText(res, 200, await metrics.registry.metrics(), metrics.registry.contentType);
    },
    ...(oauth && metadataRoutes(oauth.server, () => policy?.value)),
  };
}

function warnIfOpenToAll(options: BridgeOptions, { auth, oauth }: Parts): void {
  if (auth || oauth || isLoopback(options.host)) return;
  // Sessions need no credentials then (2025-11-25 basic/transports: servers SHOULD
  // authenticate all connections); in a cluster that is every pod that can reach the Service.
  options.logger.warn(
    { address: options.host },
    `listening beyond loopback without a bearer token: anyone who can reach this address can use the MCP server; set ${BRIDGE_FLAGS.authTokenFile} or $${BRIDGE_TOKEN_ENV}`,
  );
}

/** Graceful: stop taking sessions, let requests in flight finish, then stop children. */
async function shutdown(
  parts: Parts,
  server: Server,
  probed: Promise<void>,
  graceMs: number,
): Promise<void> {
  const { bridge, era2026 } = parts;
  parts.readiness.stopAccepting();
  const closed = new Promise((resolve) => server.close(resolve));
  await bridge.drain(Date.now() + graceMs);
  era2026.close();
  await bridge.close();
  server.closeAllConnections();
  await closed;
  parts.replicas?.close();
  parts.policy?.stop();
  parts.auth?.stop();
  parts.discoveryToken?.stop();
  parts.oauth?.stop();
  await probed;
  await parts.audit?.close();
  await parts.telemetry?.shutdown();
}

/**
 * The OpenTelemetry SDK, loaded only now: a bridge without an OTLP endpoint never loads it
 * (ADR 0013 keeps the hot path lean; docs/telemetry.md).
 */
async function startTelemetry(
  options: NonNullable<BridgeOptions['telemetry']>,
  logger: Logger,
  metrics: BridgeMetrics,
): Promise<Telemetry> {
  const { startTelemetry: start } = await import('./audit/telemetry.ts');
  return start({
    ...options,
    // In a pod the host name is the pod's name.
    pod: hostname(),
    logger,
    onDropped: (signal, reason, count) => metrics.telemetryDropped.inc({ signal, reason }, count),
  });
}
