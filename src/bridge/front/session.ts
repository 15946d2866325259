/**
 * One MCP session of the Streamable HTTP transport (2025-11-25 basic/transports, "Session
 * Management"): the HTTP side of a client. It decides on which stream each message from the
 * child travels:
 *
 * - a response goes back on the POST that carried its request: as one JSON body when nothing
 *   came before it, else as the last event of an SSE stream (which ends with it);
 * - a request or notification the child sent while working on a client request goes on that
 *   request's stream (switching it to SSE), so a client without a GET stream still sees
 *   progress, logs, sampling and elicitation;
 * - anything else goes on the session's GET stream, and waits there until one is open.
 */

import type { ServerResponse } from 'node:http';
import type { Account } from '../budget.ts';
import {
  errorResponse,
  idKey,
  isResponse,
  WIRE,
  type JsonRpcError,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type RequestId,
} from '../../mcp/jsonrpc.ts';
import { HEADER } from '../../mcp/metadata.ts';
import { replyJson, replyJsonListed, type HeaderList } from '../replies.ts';
import { EventStream, SSE_HEADER_LIST } from './sse.ts';
import type { Caller } from '../identity.ts';
import type { SessionPort, Upstream } from '../upstream.ts';

/** Completed POST streams kept for a late Last-Event-ID, per session. */
const RETAINED_STREAMS = 16;
const GET_STREAM = 0;

/** The answer to one POSTed request: JSON until something else has to go out first. */
class Exchange {
  readonly id: RequestId;
  readonly #res: ServerResponse;
  readonly #session: Session;
  #stream: EventStream | undefined;
  done = false;

  constructor(id: RequestId, session: Session, res: ServerResponse) {
    this.id = id;
    this.#session = session;
    this.#res = res;
  }

  /** False when the client went away before anything was sent: nothing can reach it. */
  get reachable(): boolean {
    return this.#stream !== undefined || !this.#res.destroyed;
  }

  send(message: JsonRpcMessage): void {
    if (isResponse(message)) this.done = true;
    if (!this.#stream && isResponse(message)) {
      replyJsonListed(this.#res, 200, message, this.#session.headerList);
      return;
    }
    this.#stream ??= this.#openStream();
    this.#stream.push(message);
    if (this.done) this.#stream.finish();
  }

  #openStream(): EventStream {
    const stream = this.#session.newStream();
    if (!this.#res.destroyed) {
      this.#session.writeStreamHead(this.#res);
      stream.attach(this.#res);
    }
    return stream;
  }
}

export interface SessionEvents {
  /** The session is over (DELETE, idle, child exit, shutdown); it must be forgotten. */
  ended(session: Session, reason: string): void;
}

export class Session implements SessionPort {
  readonly id: string;
  /** The headers of every answer in this session. */
  readonly headers: Readonly<Record<string, string>>;
  /** The same, as a list for writeHead (replies.ts). */
  readonly headerList: HeaderList;
  readonly upstream: Upstream;
  readonly account: Account;
  /**
   * With OAuth, the subject of the token that opened the session (identity.ts): requests with
   * another subject's token are answered as for an unknown session (MCP security best
   * practices, "Session Hijacking"). Set once, before the session id is given out.
   */
  owner: string | undefined;
  readonly #events: SessionEvents;
  readonly #exchanges = new Map<string, Exchange>();
  readonly #streams = new Map<number, EventStream>();
  #nextStream = GET_STREAM + 1;
  /** What the client declared in its initialize request. */
  clientCapabilities: Record<string, unknown> = {};
  #ended = false;
  lastActivity = Date.now();

  constructor(id: string, upstream: Upstream, account: Account, events: SessionEvents) {
    this.id = id;
    this.headers = { [HEADER.sessionId]: id };
    this.headerList = [HEADER.sessionId, id];
    this.upstream = upstream;
    this.account = account;
    this.#events = events;
    this.#streams.set(GET_STREAM, new EventStream(GET_STREAM));
    upstream.attach(this);
  }

  /**
   * The id as logs show it: a prefix. The full id lets anyone who holds it act in the session
   * (2025-11-25 basic/security_best_practices, "Session Hijacking"), so it is never logged.
   */
  get logId(): string {
    return `${this.id.slice(0, 8)}…`;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Idle: nothing in flight and no client connected to any stream. */
  get idle(): boolean {
    if (this.#exchanges.size > 0) return false;
    for (const stream of this.#streams.values()) if (stream.connected) return false;
    return true;
  }

  get inFlight(): number {
    return this.#exchanges.size;
  }

  touch(): void {
    this.lastActivity = Date.now();
  }

  /**
   * A client request (`bytes` long, from `caller` with OAuth) arrived on `res`; its answer will
   * be written there.
   */
  request(message: JsonRpcRequest, res: ServerResponse, bytes: number, caller?: Caller): void {
    const key = idKey(message.id);
    if (this.#exchanges.has(key)) {
      const error = `Request id ${String(message.id)} is already in use in this session`;
      replyJson(res, 400, errorResponse(message.id, WIRE.INVALID_REQUEST, error), this.headers);
      return;
    }
    this.#exchanges.set(key, new Exchange(message.id, this, res));
    if (message.method === 'initialize') {
      const declared = message.params?.capabilities;
      if (typeof declared === 'object' && declared !== null)
        this.clientCapabilities = declared as Record<string, unknown>;
    }
    this.upstream.fromClient(this, message, bytes, caller);
  }

  /** A client notification or response: no answer expected, unless it is refused. */
  post(message: JsonRpcMessage): JsonRpcError | undefined {
    return this.upstream.fromClient(this, message);
  }

  deliver(message: JsonRpcMessage, relatedTo?: RequestId): void {
    if (isResponse(message)) {
      const key = message.id === undefined || message.id === null ? undefined : idKey(message.id);
      const exchange = key === undefined ? undefined : this.#exchanges.get(key);
      if (!exchange) return;
      this.#exchanges.delete(key!);
      exchange.send(message);
      return;
    }
    const exchange = relatedTo === undefined ? undefined : this.#exchanges.get(idKey(relatedTo));
    if (exchange?.reachable && !exchange.done) exchange.send(message);
    else this.#streams.get(GET_STREAM)!.push(message);
  }

  /** Opens the standalone GET stream on `res`, or says why not. */
  openGetStream(res: ServerResponse): 'ok' | 'busy' {
    const stream = this.#streams.get(GET_STREAM)!;
    if (stream.connected) return 'busy';
    this.writeStreamHead(res);
    stream.attach(res);
    return 'ok';
  }

  /**
   * Resumes the stream an event id belongs to, replaying what followed it. A connection the
   * stream still has is replaced: the client reconnecting is the proof that it lost it.
   */
  resume(streamId: number, afterSeq: number, res: ServerResponse): 'ok' | 'unknown' {
    const stream = this.#streams.get(streamId);
    if (!stream) return 'unknown';
    this.writeStreamHead(res);
    stream.attach(res, afterSeq);
    return 'ok';
  }

  /** The head of an SSE stream of this session. */
  writeStreamHead(res: ServerResponse): void {
    res.writeHead(200, [...SSE_HEADER_LIST, ...this.headerList]);
  }

  newStream(): EventStream {
    const stream = new EventStream(this.#nextStream++);
    this.#streams.set(stream.id, stream);
    this.#forgetOldStreams();
    return stream;
  }

  keepAlive(): void {
    for (const stream of this.#streams.values()) stream.keepAlive();
  }

  upstreamClosed(reason: string): void {
    this.end(`the MCP server process ended (${reason})`);
  }

  /** Ends the session: requests still waiting get an error, streams end, the child is told. */
  end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const exchange of this.#exchanges.values()) {
      const message = `The session ended: ${reason}`;
      exchange.send(errorResponse(exchange.id, WIRE.SERVER_ERROR, message));
    }
    this.#exchanges.clear();
    for (const stream of this.#streams.values()) stream.detach();
    this.upstream.detach(this);
    this.#events.ended(this, reason);
  }

  #forgetOldStreams(): void {
    const complete = [...this.#streams.values()].filter((s) => s.complete && !s.connected);
    for (const stream of complete.slice(0, Math.max(0, complete.length - RETAINED_STREAMS))) {
      this.#streams.delete(stream.id);
    }
  }
}
