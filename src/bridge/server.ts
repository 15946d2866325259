/**
 * Wires a running bridge: children (spawned or supervised, behind the warm pool), the session
 * table, policy, auth and one node:http server for the MCP endpoint, `/healthz`, `/readyz` and
 * `/metrics`. Raw node:http, because the MCP endpoint needs exact control of status codes,
 * headers and SSE framing. Used by the CLI command and, in-process, by tests and the bench.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { createAuth, createDiscoveryToken, type Auth } from './auth/bearer.ts';
import { SessionTable } from './front/session-table.ts';
import { ChangeFeed, changesRoute } from './front/change-feed.ts';
import { ByteBudget } from './budget.ts';
import { BRIDGE_FLAGS, BRIDGE_TOKEN_ENV, type SessionMode } from './pod-contract.ts';
import { mcpEndpoint } from './front/endpoint.ts';
import { entryGuard } from './entry-guard.ts';
import { isLoopback } from './front/guards.ts';
import { HttpLauncher } from './proxy/http-upstream.ts';
import { WIRE } from '../mcp/jsonrpc.ts';
import { CHANGES_PATH } from '../mcp/change-feed.ts';
import { createMetrics, type BridgeMetrics } from './metrics.ts';
import { Era2026Endpoint } from './front/era-2026.ts';
import { PolicyGate } from './policy/gate.ts';
import { parsePolicy, type BridgePolicy } from '../tools/policy.ts';
import { WarmPool } from './child/pool.ts';
import { ReplicaRouter } from './front/replicas.ts';
import { replyError, replyText } from './replies.ts';
import { SpawnLauncher } from './child/spawn.ts';
import { SupervisedLauncher } from './child/supervised.ts';
import type { Launcher } from './transport.ts';
import { WatchedFile } from './watched-file.ts';
import { metadataRoutes, startResourceServer, type OAuthOptions } from './auth/oauth-setup.ts';
import { AuditTrail } from './audit/trail.ts';
import { lineSink } from './audit/sink.ts';
import type { ArgumentMode } from './audit/event.ts';

/** Connections the kernel may hold for the bridge before it accepts them. */
const LISTEN_BACKLOG = 4096;
/** Longer than the idle timeouts of common clients and load balancers (60 s). */
const KEEP_ALIVE_MS = 65_000;

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
}

export interface AuditOptions {
  arguments: ArgumentMode;
  /** The MCPServer served, named in every event. */
  server?: { namespace: string; name: string } | undefined;
  /** A file descriptor or a file; by default stdout. */
  destination?: number | string;
  /** What may wait to be written; by default AUDIT_BUFFER_BYTES (audit/sink.ts). */
  bufferBytes?: number;
}

function auditTrail(
  options: BridgeOptions,
  metrics: BridgeMetrics,
  tokenAuth: boolean,
): AuditTrail | undefined {
  const { audit, logger } = options;
  if (!audit) return undefined;
  const sink = lineSink({
    destination: audit.destination ?? 1,
    ...(audit.bufferBytes === undefined ? {} : { bufferBytes: audit.bufferBytes }),
    onDrop: () => metrics.auditDropped.inc(),
    onError: (error) =>
      logger.error({ err: error }, 'cannot write audit events: they are dropped and counted'),
  });
  return new AuditTrail(
    {
      ...(audit.server && { server: audit.server }),
      // In a pod the host name is the pod's name.
      pod: hostname(),
      credential: tokenAuth ? 'token' : 'none',
      arguments: audit.arguments,
    },
    sink,
  );
}

export interface RunningBridge {
  url: string;
  bridge: SessionTable;
  metrics: BridgeMetrics;
  /** Resolves when the first readiness probe has finished (ready or not). */
  probed: Promise<void>;
  close(): Promise<void>;
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

export async function startBridge(options: BridgeOptions): Promise<RunningBridge> {
  const { logger } = options;
  const metrics = createMetrics();
  const changes = new ChangeFeed();
  const launcher = launcherFor(options, changes);
  const pool =
    options.warmPool > 0 && options.sessionMode === 'PerSession'
      ? new WarmPool(launcher, options.warmPool, logger)
      : undefined;
  const policy = await loadPolicy(options);
  const auth: Auth | undefined = await createAuth({
    file: options.authTokenFile,
    envToken: options.authToken,
    logger,
  });
  const discoveryToken = await createDiscoveryToken({ file: options.discoveryTokenFile, logger });
  const oauth = options.oauth && (await startResourceServer(options.oauth, logger));
  const replicas = options.replicas && new ReplicaRouter({ ...options.replicas, logger });
  const audit = auditTrail(options, metrics, auth !== undefined);
  metrics.observeChanges({
    generation: () => changes.mark.generation,
    waiting: () => changes.waiting,
  });
  const guard = entryGuard(logger, (entry) => metrics.entryFailures.inc({ entry }));
  const bridge = new SessionTable(
    {
      mode: options.sessionMode,
      maxSessions: options.maxSessions,
      idleTimeoutMs: options.idleTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
    },
    {
      launcher: pool ?? launcher,
      probeLauncher: launcher,
      logger,
      metrics,
      // Room for a few messages of the largest size per session; for the bridge, a share of the
      // sidecar's memory limit (256Mi) at the default --max-message-bytes of 4 MiB.
      budget: new ByteBudget({
        session: 4 * options.maxMessageBytes,
        bridge: 16 * options.maxMessageBytes,
      }),
      pooled: () => pool?.size ?? 0,
      guard,
      ...(replicas === undefined ? {} : { sessionId: () => replicas.newId() }),
      ...(audit === undefined ? {} : { onRequestEnd: audit.requestEnded }),
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

  let accepting = true;
  let ready = false;
  const era2026 = new Era2026Endpoint({
    bridge,
    logger,
    parkMs: options.requestTimeoutMs,
    ...(replicas === undefined ? {} : { replicas }),
  });
  const endpoint = mcpEndpoint({
    bridge,
    maxBodyBytes: options.maxMessageBytes,
    allowedOrigins: options.allowedOrigins,
    auth,
    oauth: oauth?.server,
    oauthRefused: (reason) => metrics.oauthRefusals.inc({ reason }),
    policy: () => policy?.value,
    discoveryToken,
    logger,
    accepting: () => accepting,
    era2026,
    audit,
  });

  const routes: Routes = {
    // A request for another replica's session goes there before anything else reads it.
    [options.path]: replicas
      ? async (req, res) => {
          if (await replicas.route(req, res)) return;
          await endpoint(req, res);
        }
      : endpoint,
    [CHANGES_PATH]: changesRoute(changes, discoveryToken),
    '/healthz': (_req, res) => replyText(res, 200, 'ok\n'),
    '/readyz': (_req, res) => {
      // A policy update that does not parse leaves the last good one in force: still ready.
      const noPolicy =
        policy && policy.value === undefined ? `no policy loaded (${policy.error})` : undefined;
      const problem = !accepting
        ? 'shutting down'
        : !ready
          ? 'no MCP server has answered yet'
          : noPolicy;
      replyText(
        res,
        problem === undefined ? 200 : 503,
        problem === undefined ? 'ready\n' : `not ready: ${problem}\n`,
      );
    },
    '/metrics': async (_req, res) => {
      replyText(res, 200, await metrics.registry.metrics(), metrics.registry.contentType);
    },
    ...(oauth && metadataRoutes(oauth.server, () => policy?.value)),
  };

  const server: Server = createServer((req, res) => {
    guard.run(
      'http_request',
      { method: req.method },
      () => {
        const route = routeOf(routes, req.url ?? '/');
        if (route === 'malformed')
          return replyError(
            res,
            400,
            WIRE.INVALID_REQUEST,
            'Bad Request: the request target is not a URL',
          );
        if (!route) return replyText(res, 404, 'not found\n');
        // Routes answer synchronously when they can (endpoint.ts): a throw and a rejection alike.
        return route(req, res);
      },
      () => {
        if (!res.headersSent)
          replyError(res, 500, WIRE.INTERNAL_ERROR, 'Internal error in the bridge');
        else res.destroy();
      },
    );
  });
  // SSE streams are long-lived; only the time to receive a request is bounded.
  server.requestTimeout = 60_000;
  server.headersTimeout = 30_000;
  // Idle keep-alive connections are left for the client (or the load balancer in front) to
  // close. With Node's 5 s, a client that reuses a connection as the bridge closes it gets a
  // reset: under load the two timers fire together (seen in a test with a thousand sessions).
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Node's default backlog (511) overflows when a burst of agents connect at once while the
    // event loop is busy; the kernel then drops their handshakes, and some end in a reset.
    // The kernel caps it at net.core.somaxconn.
    server.listen({ port: options.port, host: options.host, backlog: LISTEN_BACKLOG }, resolve);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}${options.path}`;
  logger.info({ url, sessionMode: options.sessionMode }, 'bridge listening');
  if (!auth && !oauth && !isLoopback(options.host)) {
    // Sessions need no credentials then (2025-11-25 basic/transports: servers SHOULD
    // authenticate all connections); in a cluster that is every pod that can reach the Service.
    logger.warn(
      { address: options.host },
      `listening beyond loopback without a bearer token: anyone who can reach this address can use the MCP server; set ${BRIDGE_FLAGS.authTokenFile} or $${BRIDGE_TOKEN_ENV}`,
    );
  }

  const stopProbing = new AbortController();
  const probed = probeUntilReady(bridge, logger, stopProbing.signal).then((ok) => {
    ready = ok;
  });

  /** Graceful: stop taking sessions, let requests in flight finish, then stop children. */
  const shutdown = async (): Promise<void> => {
    accepting = false;
    stopProbing.abort();
    const closed = new Promise((resolve) => server.close(resolve));
    await bridge.drain(Date.now() + options.graceMs);
    era2026.close();
    await bridge.close();
    server.closeAllConnections();
    await closed;
    replicas?.close();
    policy?.stop();
    auth?.stop();
    discoveryToken?.stop();
    oauth?.stop();
    await probed;
    await audit?.close();
  };
  let closing: Promise<void> | undefined;

  return {
    url,
    bridge,
    metrics,
    probed,
    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}

type Route = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
type Routes = Record<string, Route>;

/**
 * The route of a request target. A bare path, as clients send it, is looked up as it is: no URL
 * parsed for every request. Anything else is parsed; node:http passes on targets the URL
 * parser refuses (`http://[/`), which are 'malformed'. Own keys only: a target is the client's.
 */
function routeOf(routes: Routes, target: string): Route | 'malformed' | undefined {
  if (Object.hasOwn(routes, target)) return routes[target];
  const url = URL.parse(target, 'http://bridge');
  if (url === null) return 'malformed';
  return Object.hasOwn(routes, url.pathname) ? routes[url.pathname] : undefined;
}

/** Probes until a child answers; backs off between attempts; gives up when shutting down. */
async function probeUntilReady(
  bridge: SessionTable,
  logger: Logger,
  stop: AbortSignal,
): Promise<boolean> {
  for (let delay = 500; !stop.aborted; delay = Math.min(delay * 2, 30_000)) {
    try {
      await bridge.probe();
      logger.info('readiness probe passed: the MCP server answers initialize and ping');
      return true;
    } catch (error) {
      if (stop.aborted) break;
      logger.error({ err: error, retryInMs: delay }, 'readiness probe failed');
    }
    await sleep(delay, undefined, { signal: stop }).catch(() => undefined);
  }
  return false;
}
