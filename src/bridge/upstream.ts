/**
 * One MCP server process and the sessions that share it. In PerSession mode an upstream has a
 * single session; in Shared mode many. The routing is the same either way, so both modes run
 * the same code:
 *
 * - Request ids are rewritten to the upstream's own integers on the way in and restored
 *   (string or number, exactly as sent) on the way out, so sessions cannot collide.
 * - Progress tokens (`_meta.progressToken`, 2025-11-25 basic/utilities/progress) and
 *   cancellations (basic/utilities/cancellation) are mapped the same way.
 * - `initialize` reaches the child once; later sessions get its result replayed, with the
 *   protocol version negotiated for each (versions.ts), and only the first
 *   `notifications/initialized` is passed on (basic/lifecycle).
 * - Server→client requests (sampling, elicitation, roots) and unattributed notifications go to
 *   the session of the request they came with, when the transport tells (an HTTP server's
 *   response stream); else to the session whose request the child most recently received and
 *   has not answered: the one it is working for. With nothing in flight, notifications go to
 *   every session and requests to the most recently attached one. A request for a capability that session did not declare
 *   is refused to the child instead. `list_changed` goes to every session;
 *   `resources/updated` to the sessions that subscribed to the URI.
 */

import type { Logger } from 'pino';
import type { Account, ByteBudget } from './budget.ts';
import { salvageIds, type BadLine } from './framing.ts';
import {
  errorResponse,
  idKey,
  isErrorResponse,
  isNotification,
  isRequest,
  WIRE,
  type JsonRpcError,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../mcp/jsonrpc.ts';
import type { Span } from '@opentelemetry/api';
import {
  ARRIVAL,
  SPAN,
  type Arrival,
  type Arrived,
  type Caller,
  type Outcome,
  type Spanned,
  type Verdict,
} from './identity.ts';
import type { Transport } from './transport.ts';
import { sessionVersion } from '../mcp/versions.ts';
import { META } from '../mcp/metadata.ts';
import { passedOn } from './message-text.ts';
import { LIST_CHANGED } from '../mcp/methods.ts';
import { ownValue } from '../mcp/untrusted.ts';
import { entryGuard, type EntryGuard } from './entry-guard.ts';

/**
 * The client capability each server→client request needs (2025-11-25 basic/lifecycle,
 * "Capability Negotiation"; client/elicitation, client/sampling, client/roots).
 */
export const CLIENT_CAPABILITY: Readonly<Record<string, string>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** What an upstream needs from a session. */
export interface SessionPort {
  readonly id: string;
  /** What the client declared it can do; the child may ask it only for those. */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /** Holds the bytes of this session's messages (budget.ts); none: the upstream's own. */
  readonly account?: Account;
  /** A message for the client; `relatedTo` is the client's id of the request it belongs to. */
  deliver(message: JsonRpcMessage, relatedTo?: RequestId): void;
  /** The child is gone; the session cannot go on. */
  upstreamClosed(reason: string): void;
}

/** Extension points, used by the policy filter (policy.ts). */
export interface UpstreamHooks {
  /**
   * Before a client request reaches the child; an error response refuses it. `verdict`, when
   * given, is filled with what the screening found (the audit trail reads it).
   */
  screen?(
    request: JsonRpcRequest,
    caller: Caller | undefined,
    verdict?: Verdict,
  ): Promise<JsonRpcError | undefined> | undefined;
  /** Before a client notification reaches the child; an error refuses it (HTTP 400). */
  screenNotification?(notification: JsonRpcNotification): JsonRpcError | undefined;
  /**
   * A successful result on its way back to a session; `params` are the request's. Returns
   * `result` itself when it changes nothing, a new object otherwise (never `result` changed in
   * place): an unchanged result goes on as the child wrote it (message-text.ts).
   */
  transformResult?(
    method: string,
    result: Record<string, unknown>,
    params: Record<string, unknown> | undefined,
    caller: Caller | undefined,
  ): Record<string, unknown>;
  /** Every notification from the child, before it is routed. */
  observeNotification?(notification: JsonRpcNotification): void;
}

export interface UpstreamOptions {
  requestTimeoutMs: number;
  logger: Logger;
  budget: ByteBudget;
  hooks?: (upstream: Upstream) => UpstreamHooks;
  /** Called once per client or bridge request when it ends. */
  onRequestDone?: (method: string, outcome: Outcome, seconds: number) => void;
  /** Runs each message of the child, and each request on its way to it; by default one of its own. */
  guard?: EntryGuard;
  /** Called once per client request when it ends, with all there is to know of it (audit/). */
  onRequestEnd?: (ended: EndedRequest) => void;
}

/** A client request that ended: what the audit trail records of it. */
export interface EndedRequest {
  method: string;
  params: Record<string, unknown> | undefined;
  caller: Caller | undefined;
  arrival: Arrival | undefined;
  verdict: Verdict | undefined;
  /** The bridge's span of the request, when tracing is on. */
  span: Span | undefined;
  /** The request's size as the client sent it. */
  bytes: number;
  /** The answer as the child (or the bridge, for a refusal) wrote it; none when cancelled. */
  response: JsonRpcResponse | undefined;
  outcome: Outcome;
  seconds: number;
}

/**
 * Requests whose answer is the end of a stream (2026-07-28 basic/patterns/subscriptions): the
 * request timeout does not apply. Ending and reopening one would open a window in which the
 * child's notifications go nowhere.
 */
const STREAMS = new Set(['subscriptions/listen']);

interface Pending {
  childId: number;
  method: string;
  params: Record<string, unknown> | undefined;
  /** undefined: a request of the bridge itself. */
  session: SessionPort | undefined;
  /** Who sent the request, with OAuth (policy.ts); undefined: no OAuth, or the bridge. */
  caller: Caller | undefined;
  clientId: RequestId;
  clientProgressToken: string | number | undefined;
  /** Holds `bytes`, the size of the client's request, until it ends. */
  account: Account;
  bytes: number;
  startedAt: number;
  /** When it times out (performance.now() clock); progress moves it on. Infinity: never. */
  deadline: number;
  sent: boolean;
  settle?: (response: JsonRpcResponse) => void;
  /** With onRequestEnd only: what the screening found, and where the request came from. */
  verdict: Verdict | undefined;
  arrival: Arrival | undefined;
  span: Span | undefined;
}

interface Attachment {
  /** Client request id → child request id, for cancellations. */
  inFlight: Map<string, number>;
  subscriptions: Set<string>;
}

export class Upstream {
  readonly label: string;
  readonly #transport: Transport;
  readonly #options: UpstreamOptions;
  readonly #hooks: UpstreamHooks;
  readonly #guard: EntryGuard;
  readonly #pending = new Map<number, Pending>();
  readonly #attachments = new Map<SessionPort, Attachment>();
  /** Requests from the child to a client: child's request id → the session asked. */
  readonly #serverRequests = new Map<string, { session: SessionPort; id: RequestId }>();
  /** Holds the bytes of the bridge's own messages, and of sessions without an account. */
  readonly #account: Account;
  #nextId = 1;
  /** The child's answer to the first initialize that succeeded. */
  #initResult: Record<string, unknown> | undefined;
  #initializedSent = false;
  #closedReason: string | undefined;
  /**
   * One timer for all requests in flight, due at the earliest deadline, instead of a timer set
   * and cleared for every request. Deadlines only grow (they are set in order and progress
   * moves them later), so it is re-armed only when it fires.
   */
  #timeouts: NodeJS.Timeout | undefined;
  readonly closed: Promise<string>;

  constructor(transport: Transport, options: UpstreamOptions) {
    this.#transport = transport;
    this.#options = options;
    this.label = transport.label;
    this.#account = options.budget.account();
    this.#hooks = options.hooks?.(this) ?? {};
    this.#guard = options.guard ?? entryGuard(options.logger, () => undefined);
    this.closed = new Promise((resolve) => {
      transport.attach({
        onMessage: (message, relatedTo) => this.#guardedFromChild(message, relatedTo),
        onBadLine: (line) =>
          this.#guard.run(
            'child_message',
            { child: this.label },
            () => this.#badLine(line),
            () => undefined,
          ),
        onClose: (reason) => resolve(this.#childClosed(reason)),
      });
    });
  }

  /** In flight in the child: requests of clients and of the bridge not yet answered. */
  get inFlight(): number {
    return this.#pending.size;
  }

  get isClosed(): boolean {
    return this.#closedReason !== undefined;
  }

  get sessionCount(): number {
    return this.#attachments.size;
  }

  /** The child's InitializeResult, once a session (or the bridge) has initialized it. */
  get initializeResult(): Record<string, unknown> | undefined {
    return this.#initResult;
  }

  attach(session: SessionPort): void {
    this.#attachments.set(session, { inFlight: new Map(), subscriptions: new Set() });
  }

  /** The session ended: the child stops working for it and forgets it. */
  detach(session: SessionPort): void {
    const attachment = this.#attachments.get(session);
    if (!attachment) return;
    this.#attachments.delete(session);
    for (const childId of attachment.inFlight.values()) {
      this.#cancelInChild(childId, 'the client session ended');
    }
    for (const [key, asked] of this.#serverRequests) {
      if (asked.session !== session) continue;
      this.#serverRequests.delete(key);
      this.#send(errorResponse(asked.id, WIRE.SERVER_ERROR, 'The client session ended'));
    }
    for (const uri of attachment.subscriptions) {
      if (!this.#subscribed(uri))
        void this.request('resources/unsubscribe', { uri }).catch(() => undefined);
    }
  }

  /**
   * A message from a client of this session, `bytes` long as the client sent it, by `caller`
   * (OAuth). A request is answered through the session; a notification the hooks refuse is not
   * passed on, and the refusal is returned.
   */
  fromClient(
    session: SessionPort,
    message: JsonRpcMessage,
    bytes = 0,
    caller?: Caller,
  ): JsonRpcError | undefined {
    const attachment = this.#attachments.get(session);
    if (!attachment) return undefined;
    const account = session.account ?? this.#account;
    if (isRequest(message)) this.#clientRequest(session, attachment, message, bytes, caller);
    else if (isNotification(message)) return this.#clientNotification(attachment, message, account);
    else this.#clientResponse(session, message, account);
    return undefined;
  }

  /** A request of the bridge itself (readiness, tool catalog, 2026-07-28 translation). */
  request(method: string, params?: Record<string, unknown>): Promise<JsonRpcResponse> {
    return new Promise((settle) => {
      const request: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method };
      if (params) request.params = params;
      const pending = this.#register(undefined, request, 0, undefined);
      pending.settle = settle;
      this.#forward(pending, request);
    });
  }

  /**
   * Initializes the child on the bridge's own account (for 2026-07-28 clients, which have no
   * handshake), unless a session already did: then its result is reused.
   */
  async ensureInitialized(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.#initResult) return this.#initResult;
    const response = await this.request('initialize', params);
    if (isErrorResponse(response))
      throw new Error(`the MCP server refused initialize: ${response.error.message}`);
    if (!this.#initializedSent) {
      this.#initializedSent = true;
      this.notify('notifications/initialized');
    }
    return response.result;
  }

  /**
   * Change notifications of the child may have been missed (the bridge's subscription on a
   * child of 2026-07-28 was lost): whatever watches them takes every list as changed.
   */
  assumeListsChanged(): void {
    for (const method of Object.keys(LIST_CHANGED))
      this.#hooks.observeNotification?.({ jsonrpc: '2.0', method });
  }

  /** Sends a notification of the bridge itself to the child. */
  notify(method: string, params?: Record<string, unknown>): void {
    this.#send(params ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', method });
  }

  async close(): Promise<void> {
    await this.#transport.close();
    await this.closed;
  }

  // --- client → child ------------------------------------------------------------------

  #clientRequest(
    session: SessionPort,
    attachment: Attachment,
    request: JsonRpcRequest,
    bytes: number,
    caller: Caller | undefined,
  ): void {
    const key = idKey(request.id);
    if (attachment.inFlight.has(key)) {
      session.deliver(
        errorResponse(
          request.id,
          WIRE.INVALID_REQUEST,
          `Request id ${String(request.id)} is already in use`,
        ),
      );
      return;
    }
    if (request.method === 'initialize' && this.#replayInitialize(session, request)) return;
    const pending = this.#register(session, request, bytes, caller);
    attachment.inFlight.set(key, pending.childId);
    if (this.#options.onRequestEnd) {
      pending.verdict = {};
      pending.arrival = (request as Arrived)[ARRIVAL];
      pending.span = (request as Spanned)[SPAN];
    }
    // A request that could not be screened (the hook threw or rejected) is refused with an
    // error by the guard, never passed on unchecked.
    this.#guarded(pending, () => {
      const screening = this.#hooks.screen?.(request, caller, pending.verdict);
      if (!screening) return this.#admit(pending, attachment, request);
      return screening.then((refusal) => {
        if (!this.#pending.has(pending.childId)) return; // cancelled or timed out meanwhile
        if (refusal) this.#finish(pending, { ...refusal, id: pending.childId }, 'refused');
        else this.#admit(pending, attachment, request);
      });
    });
  }

  #clientNotification(
    attachment: Attachment,
    notification: JsonRpcNotification,
    account: Account,
  ): JsonRpcError | undefined {
    const refusal = this.#hooks.screenNotification?.(notification);
    if (refusal) return refusal;
    if (notification.method === 'notifications/initialized') {
      if (this.#initializedSent) return undefined;
      this.#initializedSent = true;
    }
    if (notification.method === 'notifications/cancelled') {
      const requestId = notification.params?.requestId as RequestId | undefined;
      const childId =
        requestId === undefined ? undefined : attachment.inFlight.get(idKey(requestId));
      const pending = childId === undefined ? undefined : this.#pending.get(childId);
      if (!pending) return undefined;
      if (pending.sent) {
        this.#send(
          { ...notification, params: { ...notification.params, requestId: pending.childId } },
          account,
        );
      } else this.#finish(pending, undefined, 'cancelled');
      return undefined;
    }
    this.#send(notification, account);
    return undefined;
  }

  #clientResponse(session: SessionPort, response: JsonRpcResponse, account: Account): void {
    if (response.id === undefined || response.id === null) return;
    const key = idKey(response.id);
    if (this.#serverRequests.get(key)?.session !== session) return; // not asked of this session
    this.#serverRequests.delete(key);
    this.#send(response, account);
  }

  #register(
    session: SessionPort | undefined,
    request: JsonRpcRequest,
    bytes: number,
    caller: Caller | undefined,
  ): Pending {
    const childId = this.#nextId++;
    const account = session?.account ?? this.#account;
    account.take(bytes);
    const meta = request.params?._meta as Record<string, unknown> | undefined;
    const token = meta?.progressToken;
    const startedAt = performance.now();
    const pending: Pending = {
      childId,
      method: request.method,
      params: request.params,
      session,
      caller,
      clientId: request.id,
      clientProgressToken:
        typeof token === 'string' || typeof token === 'number' ? token : undefined,
      account,
      bytes,
      startedAt,
      deadline: STREAMS.has(request.method) ? Infinity : startedAt + this.#options.requestTimeoutMs,
      sent: false,
      verdict: undefined,
      arrival: undefined,
      span: undefined,
    };
    this.#pending.set(childId, pending);
    if (pending.deadline !== Infinity) this.#armTimeouts(pending.deadline);
    return pending;
  }

  /**
   * A request the policy let through (or that needs no screening). A subscription another
   * session holds in the child is answered here; everything else goes to the child.
   */
  #admit(pending: Pending, attachment: Attachment, request: JsonRpcRequest): void {
    if (this.#heldElsewhere(attachment, request)) {
      this.#finish(pending, { jsonrpc: '2.0', id: pending.childId, result: {} }, 'ok');
    } else this.#forward(pending, request);
  }

  #forward(pending: Pending, request: JsonRpcRequest): void {
    if (this.#closedReason !== undefined) {
      this.#finish(pending, this.#exitError(pending.childId), 'child_exit');
      return;
    }
    pending.sent = true;
    const rewritten: JsonRpcRequest = { ...request, id: pending.childId };
    if (pending.clientProgressToken !== undefined) {
      // The child sees our id as the token: unique in this upstream, and mapped back below.
      const meta = { ...(request.params!._meta as object), progressToken: pending.childId };
      rewritten.params = { ...request.params, _meta: meta };
    }
    // Its bytes stay held by the pending request until the answer: not counted twice.
    this.#transport.send(rewritten);
  }

  #replayInitialize(session: SessionPort, request: JsonRpcRequest): boolean {
    const init = this.#initResult;
    if (!init) return false;
    const protocolVersion = sessionVersion(request.params?.protocolVersion, init.protocolVersion);
    const result = { ...init, protocolVersion };
    session.deliver({ jsonrpc: '2.0', id: request.id, result }, request.id);
    return true;
  }

  /**
   * In a shared child a URI stays subscribed while any session wants it: the first subscribe
   * and the last unsubscribe reach the child, the others are answered here. A session's
   * subscription is recorded only once the child has accepted it (#answer), so a refused one
   * (by the policy or the child) answers no later subscribe unscreened.
   */
  #heldElsewhere(attachment: Attachment, request: JsonRpcRequest): boolean {
    const uri = request.params?.uri;
    const subscribing = request.method === 'resources/subscribe';
    if (typeof uri !== 'string' || (!subscribing && request.method !== 'resources/unsubscribe'))
      return false;
    const elsewhere = [...this.#attachments.values()].some(
      (other) => other !== attachment && other.subscriptions.has(uri),
    );
    if (subscribing && elsewhere) attachment.subscriptions.add(uri);
    else if (!subscribing) attachment.subscriptions.delete(uri);
    return elsewhere;
  }

  #subscribed(uri: string): boolean {
    return [...this.#attachments.values()].some((a) => a.subscriptions.has(uri));
  }

  /**
   * Runs the work of a client request on its way to the child: a throw (a message that cannot
   * be serialized, a hook that fails) ends that request with an error, and nothing stays
   * pending until its timeout.
   */
  #guarded(pending: Pending, work: () => unknown): void {
    this.#guard.run('http_request', { child: this.label, method: pending.method }, work, () =>
      this.#failed(pending),
    );
  }

  /** A request whose handling threw: its client gets an error, however far it had got. */
  #failed(pending: Pending): void {
    const message = 'Internal error in the bridge';
    if (this.#pending.has(pending.childId)) {
      this.#finish(pending, errorResponse(pending.childId, WIRE.INTERNAL_ERROR, message), 'error');
      return;
    }
    // Already answered, or on its way: the answer itself failed, so it is replaced.
    pending.session?.deliver(
      errorResponse(pending.clientId, WIRE.INTERNAL_ERROR, message),
      pending.clientId,
    );
  }

  // --- child → client ------------------------------------------------------------------

  /**
   * Every message of the child, in the guard: whatever it makes the bridge do, a throw costs
   * only the request it answers (or, for a request of the child, that request).
   */
  #guardedFromChild(message: JsonRpcMessage, relatedTo: RequestId | undefined): void {
    const answers =
      !isRequest(message) && !isNotification(message) && typeof message.id === 'number'
        ? this.#pending.get(message.id)
        : undefined;
    this.#guard.run(
      'child_message',
      { child: this.label, method: answers?.method },
      () => this.#fromChild(message, relatedTo),
      () => {
        if (answers) this.#failed(answers);
        else if (isRequest(message))
          this.#send(
            errorResponse(message.id, WIRE.INTERNAL_ERROR, 'Internal error in the bridge'),
          );
      },
    );
  }

  /** `relatedTo`: our id of the request whose answer carried the message, if known. */
  #fromChild(message: JsonRpcMessage, relatedTo?: RequestId): void {
    if (isRequest(message)) return this.#childRequest(message, relatedTo);
    if (isNotification(message)) return this.#childNotification(message, relatedTo);
    const pending = typeof message.id === 'number' ? this.#pending.get(message.id) : undefined;
    if (!pending) {
      this.#options.logger.warn(
        { child: this.label },
        'response for no request in flight; dropped',
      );
      return;
    }
    this.#finish(pending, message, isErrorResponse(message) ? 'error' : 'ok');
  }

  #childRequest(request: JsonRpcRequest, relatedTo: RequestId | undefined): void {
    if (this.#ended(relatedTo)) {
      const message = 'The request this belongs to has ended';
      this.#send(errorResponse(request.id, WIRE.INVALID_REQUEST, message));
      return;
    }
    const target = this.#work(relatedTo);
    const session = target?.session ?? [...this.#attachments.keys()].at(-1);
    if (!session) {
      this.#send(errorResponse(request.id, WIRE.INTERNAL_ERROR, 'No client session is connected'));
      return;
    }
    const capability = ownValue(CLIENT_CAPABILITY, request.method);
    if (capability !== undefined && session.clientCapabilities[capability] === undefined) {
      const message = `The client does not support ${request.method}`;
      this.#send(errorResponse(request.id, WIRE.METHOD_NOT_FOUND, message));
      return;
    }
    this.#serverRequests.set(idKey(request.id), { session, id: request.id });
    session.deliver(request, target?.session === session ? target.clientId : undefined);
  }

  #childNotification(notification: JsonRpcNotification, relatedTo: RequestId | undefined): void {
    this.#hooks.observeNotification?.(notification);
    const params = notification.params ?? {};
    switch (notification.method) {
      case 'notifications/progress':
        return this.#progress(notification);
      case 'notifications/cancelled': {
        const key = idKey(params.requestId as RequestId);
        const asked = this.#serverRequests.get(key);
        this.#serverRequests.delete(key);
        asked?.session.deliver(notification);
        return;
      }
      case 'notifications/tools/list_changed':
      case 'notifications/prompts/list_changed':
      case 'notifications/resources/list_changed':
        return this.#broadcast(notification);
      case 'notifications/resources/updated': {
        const uri = params.uri;
        const subscribers = [...this.#attachments].filter(([, a]) =>
          a.subscriptions.has(uri as string),
        );
        if (subscribers.length === 0) return this.#broadcast(notification);
        for (const [session] of subscribers) session.deliver(notification);
        return;
      }
      default: {
        // Tagged with a subscription (2026-07-28 basic/patterns/subscriptions): it belongs to
        // subscription streams, not to the request the child happens to be working on.
        if (
          (params._meta as Record<string, unknown> | undefined)?.[META.subscriptionId] !== undefined
        )
          return this.#broadcast(notification);
        if (this.#ended(relatedTo)) {
          this.#options.logger.debug(
            { child: this.label, method: notification.method },
            'notification for a request that has ended; dropped',
          );
          return;
        }
        const work = this.#work(relatedTo);
        if (work?.session) work.session.deliver(notification, work.clientId);
        else this.#broadcast(notification);
      }
    }
  }

  #progress(notification: JsonRpcNotification): void {
    const token = notification.params?.progressToken;
    const pending = typeof token === 'number' ? this.#pending.get(token) : undefined;
    if (!pending?.session || pending.clientProgressToken === undefined) return;
    // Progress shows the request is alive: it restarts the request's timeout.
    if (pending.deadline !== Infinity)
      pending.deadline = performance.now() + this.#options.requestTimeoutMs;
    const params = { ...notification.params, progressToken: pending.clientProgressToken };
    pending.session.deliver({ ...notification, params }, pending.clientId);
  }

  #broadcast(notification: JsonRpcNotification): void {
    for (const session of this.#attachments.keys()) session.deliver(notification);
  }

  /** The client request a message came with, or else the one the child is working on. */
  #work(relatedTo: RequestId | undefined): Pending | undefined {
    const related = typeof relatedTo === 'number' ? this.#pending.get(relatedTo) : undefined;
    return related?.session ? related : this.#currentWork();
  }

  /**
   * The message came with a request that has ended (answered, timed out, cancelled): it
   * belongs to no one, and must not reach whichever request is in flight now.
   */
  #ended(relatedTo: RequestId | undefined): boolean {
    return (
      relatedTo !== undefined && !(typeof relatedTo === 'number' && this.#pending.has(relatedTo))
    );
  }

  /** The client request the child most recently received and has not answered. */
  #currentWork(): Pending | undefined {
    let latest: Pending | undefined;
    for (const pending of this.#pending.values()) {
      if (pending.sent && pending.session) latest = pending;
    }
    return latest;
  }

  /** Counted once the answer is on its way: the metrics are not in the time of the answer. */
  #finish(pending: Pending, response: JsonRpcResponse | undefined, outcome: Outcome): void {
    const seconds = (performance.now() - pending.startedAt) / 1000;
    this.#answer(pending, response);
    this.#options.onRequestDone?.(pending.method, outcome, seconds);
    this.#reportEnd(pending, response, outcome, seconds);
  }

  #reportEnd(
    pending: Pending,
    response: JsonRpcResponse | undefined,
    outcome: Outcome,
    seconds: number,
  ): void {
    if (!pending.session || !this.#options.onRequestEnd) return;
    this.#options.onRequestEnd({
      method: pending.method,
      params: pending.params,
      caller: pending.caller,
      arrival: pending.arrival,
      verdict: pending.verdict,
      span: pending.span,
      bytes: pending.bytes,
      response,
      outcome,
      seconds,
    });
  }

  #answer(pending: Pending, response: JsonRpcResponse | undefined): void {
    this.#pending.delete(pending.childId);
    pending.account.give(pending.bytes);
    if (pending.method === 'initialize' && response && !isErrorResponse(response))
      this.#initResult ??= response.result;
    if (!pending.session) {
      pending.settle?.(response ?? errorResponse(0, WIRE.REQUEST_TIMEOUT, 'cancelled'));
      return;
    }
    const attachment = this.#attachments.get(pending.session);
    attachment?.inFlight.delete(idKey(pending.clientId));
    if (!response) return;
    const uri = pending.params?.uri;
    if (pending.method === 'resources/subscribe' && typeof uri === 'string') {
      if (!isErrorResponse(response)) attachment?.subscriptions.add(uri);
    }
    const restored = { ...response, id: pending.clientId } as JsonRpcResponse;
    if (!isErrorResponse(restored) && this.#hooks.transformResult) {
      const result = this.#hooks.transformResult(
        pending.method,
        restored.result,
        pending.params,
        pending.caller,
      );
      if (result !== restored.result) {
        pending.session.deliver({ ...restored, result }, pending.clientId);
        return;
      }
    }
    // Unchanged but for its id: the child's line goes on as it came (message-text.ts).
    passedOn(response, pending.childId, restored, pending.clientId);
    pending.session.deliver(restored, pending.clientId);
  }

  #armTimeouts(deadline: number): void {
    if (this.#timeouts !== undefined) return;
    this.#timeouts = setTimeout(this.#expire, Math.max(0, deadline - performance.now()));
    this.#timeouts.unref();
  }

  /** Times out the requests past their deadline, and re-arms for the next one. */
  readonly #expire = (): void => {
    this.#timeouts = undefined;
    const now = performance.now();
    let next = Infinity;
    for (const pending of [...this.#pending.values()]) {
      if (pending.deadline <= now) this.#timeOut(pending);
      else next = Math.min(next, pending.deadline);
    }
    if (next !== Infinity) this.#armTimeouts(next);
  };

  #timeOut(pending: Pending): void {
    const { childId, method } = pending;
    if (pending.sent)
      this.notify('notifications/cancelled', {
        requestId: childId,
        reason: 'timed out in the bridge',
      });
    const message = `Request timed out: the MCP server did not answer ${method} within ${this.#options.requestTimeoutMs} ms`;
    this.#finish(pending, errorResponse(childId, WIRE.REQUEST_TIMEOUT, message), 'timeout');
  }

  #cancelInChild(childId: number, reason: string): void {
    const pending = this.#pending.get(childId);
    if (!pending) return;
    if (pending.sent) this.notify('notifications/cancelled', { requestId: childId, reason });
    this.#pending.delete(childId);
    pending.account.give(pending.bytes);
    const seconds = (performance.now() - pending.startedAt) / 1000;
    this.#options.onRequestDone?.(pending.method, 'cancelled', seconds);
    this.#reportEnd(pending, undefined, 'cancelled', seconds);
  }

  #badLine(line: BadLine): void {
    // Log size and reason only: the line itself may hold anything, secrets included.
    this.#options.logger.warn(
      { child: this.label, reason: line.reason, bytes: line.bytes },
      'skipped a line from the MCP server that is not a JSON-RPC message',
    );
    const matches = new Set(
      salvageIds(line.sample).filter(
        (id): id is number => typeof id === 'number' && this.#pending.has(id),
      ),
    );
    if (matches.size !== 1) return;
    const [childId] = matches;
    const message = `The MCP server's response could not be read (${line.reason}, ${line.bytes} bytes)`;
    this.#finish(
      this.#pending.get(childId!)!,
      errorResponse(childId!, WIRE.INTERNAL_ERROR, message),
      'error',
    );
  }

  #childClosed(reason: string): string {
    this.#closedReason = reason;
    this.#options.logger.info({ child: this.label, reason }, 'MCP server process ended');
    for (const pending of [...this.#pending.values()]) {
      this.#finish(pending, this.#exitError(pending.childId), 'child_exit');
    }
    for (const session of [...this.#attachments.keys()]) session.upstreamClosed(reason);
    this.#attachments.clear();
    return reason;
  }

  #exitError(childId: number): JsonRpcError {
    const reason = this.#closedReason ?? 'unknown';
    return errorResponse(childId, WIRE.SERVER_ERROR, `The MCP server process ended (${reason})`);
  }

  #send(message: JsonRpcMessage, account = this.#account): void {
    this.#transport.send(message, account);
  }
}
