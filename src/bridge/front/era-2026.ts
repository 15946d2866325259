/**
 * Clients of revision 2026-07-28. Such a client sends no `initialize` and no session id: every
 * request carries its version and capabilities in `_meta` and mirrors method and name into
 * headers. The bridge checks those (basic/transports/streamable-http, "Server Validation")
 * whatever the child. A child that speaks 2026-07-28 itself then gets the request as it came
 * and answers it (SessionTable.era2026Upstream). For a child of the handshake era (2025-11-25 and
 * before) the bridge answers `server/discover` from the child's InitializeResult and carries
 * every other request to a child it initialized itself, translating results
 * (era-2026-call.ts) and subscriptions (era-2026-listen.ts).
 */

import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { BRIDGE_REQUEST_META } from '../identity.ts';
import { SessionLimitError, type SessionTable, type Era2026Upstream } from './session-table.ts';
import { OVER_BUDGET, replyOverBudget, type Era2026Handler } from './endpoint.ts';
import { header } from './guards.ts';
import {
  isErrorResponse,
  isNotification,
  isRequest,
  WIRE,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type RequestId,
} from '../../mcp/jsonrpc.ts';
import { SERVER_STATE, era2026Result, Era2026Call, type CallContext } from './era-2026-call.ts';
import { HEADER, META } from '../../mcp/metadata.ts';
import { HANDSHAKE_ONLY_METHODS } from '../../mcp/methods.ts';
import { HANDSHAKE_VERSIONS, STATELESS_VERSION, SUPPORTED_VERSIONS } from '../../mcp/versions.ts';
import {
  headerMismatch,
  paramHeaders,
  paramMismatch,
  requestMeta,
  type ParamHeader,
} from '../../mcp/request-metadata.ts';
import {
  Listener,
  MAX_RESOURCE_SUBSCRIPTIONS,
  refuseUnrelated,
  resourceSubscriptionsOf,
  type Capabilities,
} from './era-2026-listen.ts';
import { ChildLimitError } from './translating-children.ts';
import type { ReplicaRouter } from './replicas.ts';
import { replyEmpty, replyError, replyJson } from '../replies.ts';
import type { SessionPort, Upstream } from '../upstream.ts';
import type { Caller } from '../identity.ts';
import type { AuditTrail } from '../audit/trail.ts';

/**
 * The requests of 2026-07-28 (schema `ClientRequest`): what the bridge translates for a server
 * of the handshake era. Anything else (an extension's methods such as `tasks/*`, which such a
 * server does not offer: docs/adr/0009) is unknown to it as a 2026-07-28 server; it is answered
 * so, not guessed at, since a handshake-era server's own refusal need not be JSON-RPC at all.
 */
const TRANSLATED = new Set([
  'server/discover',
  'subscriptions/listen',
  'completion/complete',
  'prompts/get',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'tools/call',
  'tools/list',
]);

/**
 * Watches the stateless upstream for `tools/list_changed`, which makes the bridge's copy of the
 * tools' `x-mcp-header` annotations stale.
 */
class CatalogWatcher implements SessionPort {
  readonly id = 'stateless-catalog';
  /** The bridge's own listing answers no requests of the child (deliver refuses them). */
  readonly clientCapabilities = {};
  readonly upstream: Upstream;
  stale = true;
  headers = new Map<string, ParamHeader[]>();

  /** The `_meta` its own tools/list carries: a child that speaks 2026-07-28 needs one. */
  readonly #meta: Record<string, unknown> | undefined;

  constructor(upstream: Upstream, meta: Record<string, unknown> | undefined) {
    this.upstream = upstream;
    this.#meta = meta;
    upstream.attach(this);
  }

  deliver(message: JsonRpcMessage): void {
    if (isRequest(message)) {
      refuseUnrelated(this.upstream, this, message);
    } else if (isNotification(message) && message.method === 'notifications/tools/list_changed') {
      this.stale = true;
    }
  }

  upstreamClosed(): void {
    this.stale = true;
  }

  async refresh(): Promise<void> {
    const headers = new Map<string, ParamHeader[]>();
    let cursor: unknown;
    do {
      const response = await this.upstream.request('tools/list', {
        ...(typeof cursor === 'string' ? { cursor } : {}),
        ...(this.#meta ? { _meta: this.#meta } : {}),
      });
      if (isErrorResponse(response)) return;
      for (const tool of (response.result.tools ?? []) as {
        name: string;
        inputSchema?: unknown;
      }[]) {
        headers.set(tool.name, paramHeaders(tool.inputSchema));
      }
      cursor = response.result.nextCursor;
    } while (typeof cursor === 'string');
    this.headers = headers;
    this.stale = false;
  }
}

export class Era2026Endpoint implements Era2026Handler {
  readonly #bridge: SessionTable;
  readonly #logger: Logger;
  readonly #parkMs: number;
  readonly #replicas: ReplicaRouter | undefined;
  readonly #audit: AuditTrail | undefined;
  readonly #parked = new Map<string, { call: Era2026Call; timer: NodeJS.Timeout }>();
  readonly #calls = new Set<Era2026Call>();
  readonly #listeners = new Set<Listener>();
  readonly #catalogs = new WeakMap<Upstream, CatalogWatcher>();

  constructor(options: {
    bridge: SessionTable;
    logger: Logger;
    parkMs: number;
    /** Names parked calls after this replica and routes a retry to the replica that has it. */
    replicas?: ReplicaRouter;
    /** Records the requests refused here (sessions, budget); undefined: no audit events. */
    audit?: AuditTrail | undefined;
  }) {
    this.#bridge = options.bridge;
    this.#logger = options.logger;
    this.#parkMs = options.parkMs;
    this.#replicas = options.replicas;
    this.#audit = options.audit;
  }

  /** 2026-07-28 or later in the header, or (without one) the version in `_meta` and no session. */
  claims(req: IncomingMessage, message: JsonRpcMessage): boolean {
    const version = header(req, HEADER.protocolVersion);
    if (version !== undefined)
      return !HANDSHAKE_VERSIONS.includes(version) && version >= STATELESS_VERSION;
    if (!isRequest(message) || header(req, HEADER.sessionId) !== undefined) return false;
    return typeof requestMeta(message)[META.protocolVersion] === 'string';
  }

  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    message: JsonRpcMessage,
    bytes: number,
    caller: Caller | undefined,
  ): Promise<void> {
    if (!isRequest(message)) {
      // This revision defines no client notifications over HTTP, and clients send no responses.
      if (isNotification(message)) return replyEmpty(res, 202);
      return replyError(res, 400, WIRE.INVALID_REQUEST, 'Clients of 2026-07-28 send no responses');
    }
    const refusal = this.#validate(req, message);
    if (refusal)
      return replyError(res, 400, refusal.code, refusal.message, {
        id: message.id,
        data: refusal.data,
      });
    if (HANDSHAKE_ONLY_METHODS.has(message.method)) {
      return replyError(
        res,
        404,
        WIRE.METHOD_NOT_FOUND,
        `Method not found: ${message.method} is not part of ${STATELESS_VERSION}`,
        { id: message.id },
      );
    }
    let child: Era2026Upstream;
    try {
      const declared = requestMeta(message)[META.clientCapabilities] as Record<string, unknown>;
      child = await this.#bridge.era2026Upstream(declared);
    } catch (error) {
      if (error instanceof ChildLimitError) {
        this.#bridge.countRefusal('sessions');
        this.#audit?.refused(req, { status: 503, reason: 'max_sessions', message, caller });
        return replySessionLimit(res, message.id, error.message);
      }
      this.#logger.error({ err: error }, 'cannot start the MCP server for 2026-07-28 clients');
      return replyError(res, 503, WIRE.SERVER_ERROR, 'The MCP server could not be started', {
        id: message.id,
      });
    }
    // The client may have gone while the child started: that cancels its request.
    if (res.destroyed) return;
    const state = message.params?.requestState;
    // A child of 2026-07-28 keeps its state in requestState itself: any replica can serve it.
    if (
      !child.native &&
      typeof state === 'string' &&
      !this.#parked.has(state) &&
      (await this.#replicas?.routeParked(req, res, state, message))
    ) {
      return;
    }
    const { upstream, native } = child;
    if (!native && !TRANSLATED.has(message.method)) {
      return replyError(res, 404, WIRE.METHOD_NOT_FOUND, `Method not found: ${message.method}`, {
        id: message.id,
      });
    }
    const init = upstream.initializeResult ?? {};
    if (message.method === 'server/discover' && !native)
      return replyJson(res, 200, { jsonrpc: '2.0', id: message.id, result: discoverResult(init) });
    if (message.method === 'subscriptions/listen')
      return this.#listen(child, message, req, res, bytes, caller);
    if (message.method === 'tools/call') {
      const mismatch = await this.#paramHeaders(child, req, message);
      if (mismatch)
        return replyError(res, 400, WIRE.HEADER_MISMATCH, `Header mismatch: ${mismatch}`, {
          id: message.id,
        });
    }
    if (native) return this.#relay(upstream, message, res, bytes, caller);
    this.#call(upstream, message, res, init.serverInfo, bytes, caller);
  }

  /** Ends parked calls and subscriptions (shutdown). */
  close(): void {
    for (const listener of this.#listeners) listener.close();
    for (const call of this.#calls) call.abandon();
  }

  /**
   * In the order the checks of 2026-07-28 depend on each other: a request without the required
   * `_meta` fields is malformed (-32602, basic "Per-request protocol fields") whatever its
   * headers say, since there is no body value to compare them with; then the headers must
   * mirror the body (-32020, basic/transports/streamable-http "Server Validation"); then the
   * version must be one we speak (-32022, basic/versioning).
   */
  #validate(
    req: IncomingMessage,
    request: JsonRpcRequest,
  ): { code: number; message: string; data?: unknown } | undefined {
    const meta = requestMeta(request);
    const requested = meta[META.protocolVersion];
    const missing: string[] = [];
    if (typeof requested !== 'string') missing.push(META.protocolVersion);
    const capabilities = meta[META.clientCapabilities];
    if (typeof capabilities !== 'object' || capabilities === null || Array.isArray(capabilities))
      missing.push(META.clientCapabilities);
    if (missing.length > 0) {
      return {
        code: WIRE.INVALID_PARAMS,
        message: `Invalid params: _meta is missing ${missing.join(' and ')}`,
      };
    }
    const mismatch = headerMismatch(req, request);
    if (mismatch) return { code: WIRE.HEADER_MISMATCH, message: `Header mismatch: ${mismatch}` };
    if (requested !== STATELESS_VERSION) {
      return {
        code: WIRE.UNSUPPORTED_PROTOCOL_VERSION,
        message: 'Unsupported protocol version',
        data: { supported: SUPPORTED_VERSIONS, requested },
      };
    }
    return undefined;
  }

  async #paramHeaders(
    { upstream, native }: Era2026Upstream,
    req: IncomingMessage,
    request: JsonRpcRequest,
  ): Promise<string | undefined> {
    let catalog = this.#catalogs.get(upstream);
    if (!catalog) {
      catalog = new CatalogWatcher(upstream, native ? BRIDGE_REQUEST_META : undefined);
      this.#catalogs.set(upstream, catalog);
    }
    if (catalog.stale) await catalog.refresh();
    const annotations = catalog.headers.get(request.params?.name as string) ?? [];
    return paramMismatch(req, request.params?.arguments, annotations);
  }

  /** To a child that speaks 2026-07-28: the request as the client sent it, the answer as is. */
  #relay(
    upstream: Upstream,
    request: JsonRpcRequest,
    res: ServerResponse,
    bytes: number,
    caller: Caller | undefined,
  ): void {
    const call = new Era2026Call(this.#context(upstream, undefined), request, res, {
      native: true,
    });
    this.#calls.add(call);
    call.start(request, bytes, caller);
  }

  #call(
    upstream: Upstream,
    request: JsonRpcRequest,
    res: ServerResponse,
    serverInfo: unknown,
    bytes: number,
    caller: Caller | undefined,
  ): void {
    const state = request.params?.requestState;
    if (typeof state === 'string' && state.startsWith(SERVER_STATE)) {
      // The child's own state: the retry is a new call to it, with the state it made.
      const params = { ...request.params, requestState: state.slice(SERVER_STATE.length) };
      request = { ...request, params };
    } else if (state !== undefined) {
      const parked = typeof state === 'string' ? this.#parked.get(state) : undefined;
      // Another subject's call is answered as if it were not there, and stays parked for its
      // owner: the state alone proves nothing, it may have leaked.
      if (!parked || !parked.call.ownedBy(caller)) {
        replyError(
          res,
          400,
          WIRE.INVALID_PARAMS,
          'Invalid params: requestState is unknown or expired; send the request again without it',
          { id: request.id },
        );
        return;
      }
      if (!parked.call.resumableBy(request)) {
        // Not consumed: the call's own retry may still come.
        replyError(
          res,
          400,
          WIRE.INVALID_PARAMS,
          'Invalid params: requestState belongs to another request; a retry repeats the method and name of the request it answers',
          { id: request.id },
        );
        return;
      }
      this.#parked.delete(state as string);
      clearTimeout(parked.timer);
      parked.call.resume(request, res);
      return;
    }
    const call = new Era2026Call(this.#context(upstream, serverInfo), request, res);
    this.#calls.add(call);
    call.start(request, bytes, caller);
  }

  #context(upstream: Upstream, serverInfo: unknown): CallContext {
    return {
      upstream,
      serverInfo,
      park: (call) => {
        const state = this.#replicas?.newId() ?? randomBytes(18).toString('base64url');
        // A client that never comes back must not hold the child's call forever.
        const timer = setTimeout(() => {
          this.#parked.delete(state);
          call.abandon();
        }, this.#parkMs);
        timer.unref();
        this.#parked.set(state, { call, timer });
        return state;
      },
      done: (call) => {
        this.#calls.delete(call);
      },
    };
  }

  /**
   * A listen holds a slot of --max-sessions and the bytes of its request (its filter) for as
   * long as it is open; the `resources/subscribe` requests it causes count as its requests, and
   * as the caller's (screened and audited as theirs).
   */
  #listen(
    child: Era2026Upstream,
    request: JsonRpcRequest,
    req: IncomingMessage,
    res: ServerResponse,
    bytes: number,
    caller: Caller | undefined,
  ): void {
    const uris = resourceSubscriptionsOf(request);
    if (uris.length > MAX_RESOURCE_SUBSCRIPTIONS) {
      return replyError(
        res,
        400,
        WIRE.INVALID_PARAMS,
        `Invalid params: at most ${MAX_RESOURCE_SUBSCRIPTIONS} resource subscriptions in one subscriptions/listen (${uris.length} distinct)`,
        { id: request.id },
      );
    }
    let release: () => void;
    try {
      release = this.#bridge.holdListen(child.upstream);
    } catch (error) {
      if (!(error instanceof SessionLimitError)) throw error;
      const limit = this.#bridge.config.maxSessions;
      const refusal = { status: 503, reason: 'max_sessions', message: request, caller };
      this.#audit?.refused(req, refusal);
      return replySessionLimit(res, request.id, `the limit of ${limit} is reached`);
    }
    const account = this.#bridge.budget.account();
    const bound = account.admit(bytes);
    if (bound !== undefined) {
      release();
      this.#audit?.refused(req, { ...OVER_BUDGET[bound], message: request, caller });
      return replyOverBudget(this.#bridge, res, bound);
    }
    const listener = new Listener(
      child.upstream,
      request,
      res,
      child.capabilities as Capabilities,
      account,
      caller,
      child.native ? BRIDGE_REQUEST_META : undefined,
    );
    this.#listeners.add(listener);
    res.once('close', () => {
      this.#listeners.delete(listener);
      account.give(bytes);
      release();
    });
    listener.start();
  }
}

/** 503 for a request that would pass --max-sessions, as for a new session (endpoint.ts). */
function replySessionLimit(res: ServerResponse, id: RequestId, why: string): void {
  replyError(res, 503, WIRE.SERVER_ERROR, `Too many sessions: ${why}; retry later`, {
    id,
    headers: { 'retry-after': 5 },
  });
}

/** DiscoverResult (server/discover) from the child's InitializeResult. */
function discoverResult(init: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {
    supportedVersions: SUPPORTED_VERSIONS,
    capabilities: init.capabilities ?? {},
  };
  if (typeof init.instructions === 'string') result.instructions = init.instructions;
  return era2026Result(
    'server/discover',
    { ...result, ttlMs: 0, cacheScope: 'private' },
    init.serverInfo,
  );
}
