/**
 * The session table and the children behind it: which upstream a new session gets (a fresh
 * child in PerSession mode, the one shared child in Shared mode), idle expiry, the limit on
 * sessions, readiness, and an orderly shutdown. Knows nothing of HTTP.
 */

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ByteBudget } from '../budget.ts';
import { BRIDGE_CLIENT_INFO, BRIDGE_REQUEST_META } from '../identity.ts';
import type { SessionMode } from '../pod-contract.ts';
import { isErrorResponse } from '../../mcp/jsonrpc.ts';
import { LATEST_HANDSHAKE_VERSION, STATELESS_VERSION } from '../../mcp/versions.ts';
import type { BridgeMetrics, RefusalBound } from '../metrics.ts';
import { Session } from './session.ts';
import { holdChildSubscription, type Capabilities } from './era-2026-listen.ts';
import type { Launcher, Transport } from '../transport.ts';
import type { EntryGuard } from '../entry-guard.ts';
import { Upstream, type EndedRequest, type UpstreamHooks } from '../upstream.ts';
import { LazyUpstream, TranslatingChildren } from './translating-children.ts';

export interface SessionTableConfig {
  mode: SessionMode;
  maxSessions: number;
  idleTimeoutMs: number;
  requestTimeoutMs: number;
}

export interface SessionTableDeps {
  /** Hands out children for sessions (the warm pool in PerSession mode). */
  launcher: Launcher;
  /** Starts children directly, for the readiness probe (which must not drain the pool). */
  probeLauncher: Launcher;
  logger: Logger;
  metrics: BridgeMetrics;
  /** What sessions may have waiting for their children (budget.ts). */
  budget: ByteBudget;
  hooks?: (upstream: Upstream) => UpstreamHooks;
  /** Children waiting in the warm pool, for the children gauge. */
  pooled?: () => number;
  /** Ids for new sessions; by default a random UUID (replicas.ts names the replica in them). */
  sessionId?: () => string;
  /** Runs every message of a child (entry-guard.ts). */
  guard?: EntryGuard;
  /** Every client request when it ends (the audit trail); absent: nothing is gathered. */
  onRequestEnd?: (ended: EndedRequest) => void;
}

/**
 * How the bridge initializes a child that serves more than one client (Shared mode; its
 * children for 2026-07-28 clients in PerSession mode take the clients' input capabilities
 * instead, roots included, see era2026Upstream): at the newest version it knows, so each session can be answered with its own
 * (sessionVersion, src/mcp/versions.ts). Form elicitation and sampling are declared because
 * they can be routed to the client whose request the child works on, and refused for one that
 * did not declare them (upstream.ts); for 2026-07-28 clients they become input requests
 * (MRTR). Roots are left out: a child asks for them outside any request, where no one client
 * is the right one to ask.
 */
const SHARED_INITIALIZE = {
  protocolVersion: LATEST_HANDSHAKE_VERSION,
  capabilities: { elicitation: { form: {} }, sampling: {} },
  clientInfo: BRIDGE_CLIENT_INFO,
};

/**
 * What of a 2026-07-28 client's capabilities a handshake-era child is told when the bridge
 * initializes one for it: the capabilities a server uses within a request (input requests,
 * basic/patterns/mrtr), with the sub-capabilities each may declare. Known names only, so that
 * clients cannot make the bridge start children without bound.
 */
const INPUT_CAPABILITIES: Readonly<Record<string, readonly string[]>> = {
  elicitation: ['form', 'url'],
  sampling: ['context', 'tools'],
  roots: [],
};

/** The input capabilities among `declared`, in a fixed order (their JSON names a child). */
function inputCapabilities(declared: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const [capability, parts] of Object.entries(INPUT_CAPABILITIES)) {
    const value = declared[capability];
    if (typeof value !== 'object' || value === null) continue;
    const kept: Record<string, unknown> = {};
    for (const part of parts) if (Object.hasOwn(value, part)) kept[part] = {};
    picked[capability] = kept;
  }
  return picked;
}

/** Longest a readiness probe waits for each answer. */
const PROBE_TIMEOUT_MS = 30_000;
/** How often open SSE connections get a comment, so idle ones survive proxies and LBs. */
const KEEP_ALIVE_MS = 15_000;

export class SessionLimitError extends Error {}

/** The child answered `server/discover` without 2026-07-28: it needs the handshake. */
class HandshakeEraChild extends Error {}

/** A child asked for after `close()`: it is stopped at once instead of outliving the bridge. */
export class BridgeClosingError extends Error {
  constructor() {
    super('the bridge is shutting down');
  }
}

/**
 * The child that serves 2026-07-28 clients. `native`: the child speaks that revision itself, so
 * requests reach it as the client sent them and its answers go back as they are; otherwise it
 * was initialized by the bridge, which translates. `capabilities`: what the child declared.
 */
export interface Era2026Upstream {
  upstream: Upstream;
  native: boolean;
  capabilities: Record<string, unknown>;
}

export class SessionTable {
  readonly config: SessionTableConfig;
  readonly #deps: SessionTableDeps;
  readonly #sessions = new Map<string, Session>();
  /** Sessions whose child is being started: they hold a slot of --max-sessions already. */
  #opening = 0;
  readonly #upstreams = new Set<Upstream>();
  /** Upstreams we are closing on purpose; any other close is a crash. */
  readonly #retiring = new WeakSet<Upstream>();
  readonly #shared = new LazyUpstream(() => this.#startInitialized());
  /** Children initialized for 2026-07-28 clients in PerSession mode. */
  readonly #translating: TranslatingChildren;
  /** Open `subscriptions/listen` streams, by the child they listen to; each holds a slot. */
  readonly #listens = new Map<Upstream, number>();
  #listenCount = 0;
  readonly #native = new LazyUpstream(() => this.#startNative());
  /** What the first `server/discover` showed: the child needs the handshake. */
  #handshakeEra = false;
  readonly #nativeCapabilities = new WeakMap<Upstream, Record<string, unknown>>();
  readonly #sweeper: NodeJS.Timeout;
  #lastKeepAlive = Date.now();
  #closing = false;
  /** Children being started: close() waits for them, since its list of upstreams misses them. */
  readonly #launches = new Set<Promise<Transport>>();

  constructor(config: SessionTableConfig, deps: SessionTableDeps) {
    this.config = config;
    this.#deps = deps;
    this.#translating = new TranslatingChildren({
      limit: config.maxSessions,
      idleMs: config.idleTimeoutMs,
      start: (capabilities) => this.#startInitialized({ ...SHARED_INITIALIZE, capabilities }),
      stop: (upstream) => {
        this.#retiring.add(upstream);
        void upstream.close();
      },
      held: (upstream) => this.#listens.has(upstream),
    });
    deps.metrics.observe({
      sessions: () => this.#sessions.size,
      maxSessions: () => config.maxSessions,
      children: () => this.#upstreams.size + (deps.pooled?.() ?? 0),
    });
    const tick = Math.max(100, Math.min(5_000, config.idleTimeoutMs / 4));
    this.#sweeper = setInterval(() => this.#sweep(), tick);
    this.#sweeper.unref();
  }

  get budget(): ByteBudget {
    return this.#deps.budget;
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  get inFlight(): number {
    let count = 0;
    for (const session of this.#sessions.values()) count += session.inFlight;
    return count;
  }

  /** Sessions, sessions being opened and listen streams: what --max-sessions bounds. */
  get #slotsTaken(): number {
    return this.#sessions.size + this.#opening + this.#listenCount;
  }

  /**
   * A slot of --max-sessions for a `subscriptions/listen` stream on `upstream`, until the
   * returned function releases it; throws SessionLimitError when none is free. A listen is
   * held open as long as a session is, and keeps its child from being stopped as idle.
   */
  holdListen(upstream: Upstream): () => void {
    if (this.#slotsTaken >= this.config.maxSessions) {
      this.countRefusal('sessions');
      throw new SessionLimitError();
    }
    this.#listenCount++;
    this.#listens.set(upstream, (this.#listens.get(upstream) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#listenCount--;
      const left = this.#listens.get(upstream)! - 1;
      if (left === 0) this.#listens.delete(upstream);
      else this.#listens.set(upstream, left);
    };
  }

  session(id: string): Session | undefined {
    return this.#sessions.get(id);
  }

  /** Counts a request refused because `bound` was reached (the saturation alert reads it). */
  countRefusal(bound: RefusalBound): void {
    this.#deps.metrics.refusals.inc({ bound });
  }

  /**
   * A new session with its upstream; throws SessionLimitError when the table is full. The slot
   * is taken before the child is awaited: starting one takes long enough (the supervisor, a
   * cold `npx`) for many requests to pass a check made before it.
   */
  async openSession(): Promise<Session> {
    if (this.#slotsTaken >= this.config.maxSessions) {
      this.countRefusal('sessions');
      throw new SessionLimitError();
    }
    this.#opening++;
    let upstream: Upstream;
    try {
      upstream =
        this.config.mode === 'Shared' ? await this.sharedUpstream() : await this.#startUpstream();
    } finally {
      this.#opening--;
    }
    const sessionId = this.#deps.sessionId?.() ?? randomUUID();
    const session = new Session(sessionId, upstream, this.#deps.budget.account(), {
      ended: (ended, reason) => this.#ended(ended, reason),
    });
    this.#sessions.set(session.id, session);
    return session;
  }

  /**
   * The one child of Shared mode, initialized by the bridge, started on first use and again
   * after it ended.
   */
  sharedUpstream(): Promise<Upstream> {
    return this.#shared.get();
  }

  /**
   * The child that serves 2026-07-28 clients: those requests carry no session, so they cannot
   * have a child each. A child that speaks 2026-07-28 gets them as they are, on a child the
   * bridge never initializes (an initialized one answers in the revision of its handshake;
   * supergateway relays the same way). Else a child initialized by the bridge, and the bridge
   * translates: in Shared mode the shared child; in PerSession mode one per set of input
   * capabilities the clients declared (`declared`), so that the child sees what the client
   * can do, as a handshake-era server sees its client's capabilities (a tool that needs
   * sampling refuses a client without it). Which kind of child is learned from the first
   * child's answer to `server/discover` (2026-07-28 basic/transports/streamable-http,
   * "Backward Compatibility": try a modern request first, fall back to `initialize`).
   */
  async era2026Upstream(declared: Record<string, unknown> = {}): Promise<Era2026Upstream> {
    if (!this.#handshakeEra) {
      const upstream = await this.#native.get().catch((error: unknown) => {
        if (error instanceof HandshakeEraChild) return undefined;
        throw error;
      });
      if (upstream)
        return { upstream, native: true, capabilities: this.#nativeCapabilities.get(upstream)! };
    }
    const upstream =
      this.config.mode === 'Shared'
        ? await this.#shared.get()
        : await this.#translating.get(inputCapabilities(declared));
    const capabilities = (upstream.initializeResult?.capabilities ?? {}) as Record<string, unknown>;
    return { upstream, native: false, capabilities };
  }

  /**
   * Readiness: a child can be started and answers `initialize` and `ping`. Uses a child of its
   * own, which it stops afterwards.
   */
  async probe(): Promise<void> {
    const transport = await this.#launch(this.#deps.probeLauncher);
    const upstream = new Upstream(transport, {
      ...this.#upstreamOptions(),
      requestTimeoutMs: Math.min(this.config.requestTimeoutMs, PROBE_TIMEOUT_MS),
    });
    try {
      const init = await upstream.request('initialize', {
        protocolVersion: LATEST_HANDSHAKE_VERSION,
        capabilities: {},
        clientInfo: BRIDGE_CLIENT_INFO,
      });
      if (isErrorResponse(init)) throw new Error(`initialize failed: ${init.error.message}`);
      upstream.notify('notifications/initialized');
      const ping = await upstream.request('ping');
      if (isErrorResponse(ping)) throw new Error(`ping failed: ${ping.error.message}`);
    } finally {
      await upstream.close();
    }
  }

  /** Waits until no request is in flight, or the deadline passes. */
  async drain(deadline: number): Promise<void> {
    while (this.inFlight > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#sweeper);
    for (const session of [...this.#sessions.values()]) session.end('the bridge is shutting down');
    // Taken before any await: a child whose session just ended leaves the set once it is
    // closed, and its close (a DELETE upstream in proxy mode) must still be waited for.
    const upstreams = [...this.#upstreams];
    for (const upstream of upstreams) this.#retiring.add(upstream);
    await Promise.all([
      ...upstreams.map((upstream) => upstream.close()),
      Promise.allSettled(this.#launches),
    ]);
    await this.#deps.launcher.close();
  }

  async #startInitialized(
    initialize: Record<string, unknown> = SHARED_INITIALIZE,
  ): Promise<Upstream> {
    const upstream = await this.#startUpstream();
    try {
      await upstream.ensureInitialized(initialize);
    } catch (error) {
      this.#retiring.add(upstream);
      void upstream.close();
      throw error;
    }
    return upstream;
  }

  /**
   * A fresh child asked `server/discover`, as a 2026-07-28 client would. One that lists
   * 2026-07-28 is kept as is; one that does not (a handshake-era child answers -32601, or that it
   * is not initialized) is stopped, and the bridge initializes children from then on.
   */
  async #startNative(): Promise<Upstream> {
    const upstream = await this.#startUpstream();
    const discover = await upstream.request('server/discover', { _meta: BRIDGE_REQUEST_META });
    const versions = isErrorResponse(discover) ? undefined : discover.result.supportedVersions;
    if (Array.isArray(versions) && versions.includes(STATELESS_VERSION)) {
      const result = discover as { result: { capabilities?: Capabilities } };
      const capabilities = result.result.capabilities ?? {};
      this.#nativeCapabilities.set(upstream, capabilities);
      holdChildSubscription(upstream, capabilities, BRIDGE_REQUEST_META);
      return upstream;
    }
    const crashed = upstream.isClosed;
    this.#retiring.add(upstream);
    void upstream.close();
    if (crashed) throw new Error('the MCP server process ended before it answered server/discover');
    this.#handshakeEra = true;
    throw new HandshakeEraChild();
  }

  /**
   * A child from `launcher`, unless the bridge is closing: one whose start was under way when
   * close() began is stopped, or it would keep the process alive after shutdown (its output
   * stays open) and run on in the server container.
   */
  async #launch(launcher: Launcher): Promise<Transport> {
    if (this.#closing) throw new BridgeClosingError();
    const starting = this.#launchOrStop(launcher);
    this.#launches.add(starting);
    try {
      return await starting;
    } finally {
      this.#launches.delete(starting);
    }
  }

  async #launchOrStop(launcher: Launcher): Promise<Transport> {
    const transport = await launcher.launch();
    if (!this.#closing) return transport;
    await transport.close();
    throw new BridgeClosingError();
  }

  async #startUpstream(): Promise<Upstream> {
    const transport = await this.#launch(this.#deps.launcher);
    const upstream = new Upstream(transport, this.#upstreamOptions());
    this.#upstreams.add(upstream);
    void upstream.closed.then((reason) => {
      this.#upstreams.delete(upstream);
      if (this.#retiring.has(upstream)) return;
      this.#deps.metrics.childRestarts.inc();
      this.#deps.logger.warn(
        { child: upstream.label, reason },
        'MCP server process ended unexpectedly',
      );
    });
    return upstream;
  }

  #upstreamOptions(): ConstructorParameters<typeof Upstream>[1] {
    return {
      requestTimeoutMs: this.config.requestTimeoutMs,
      logger: this.#deps.logger,
      budget: this.#deps.budget,
      hooks: this.#deps.hooks,
      ...(this.#deps.guard === undefined ? {} : { guard: this.#deps.guard }),
      onRequestDone: (method, outcome, seconds) =>
        this.#deps.metrics.requestDone(method, outcome, seconds),
      ...(this.#deps.onRequestEnd ? { onRequestEnd: this.#deps.onRequestEnd } : {}),
    };
  }

  #ended(session: Session, reason: string): void {
    this.#sessions.delete(session.id);
    this.#deps.logger.info({ session: session.logId, reason }, 'session ended');
    const upstream = session.upstream;
    if (this.config.mode === 'PerSession' && !upstream.isClosed) {
      this.#retiring.add(upstream);
      void upstream.close();
    }
  }

  #sweep(): void {
    const now = Date.now();
    this.#translating.sweep(now);
    const keepAlive = now - this.#lastKeepAlive >= KEEP_ALIVE_MS;
    if (keepAlive) this.#lastKeepAlive = now;
    for (const session of [...this.#sessions.values()]) {
      if (keepAlive) session.keepAlive();
      if (session.idle && now - session.lastActivity > this.config.idleTimeoutMs) {
        session.end(`idle for more than ${this.config.idleTimeoutMs} ms`);
      }
    }
  }
}
