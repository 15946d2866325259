/**
 * Proxy mode: the MCP server serves Streamable HTTP itself, and the bridge is its client
 * (2025-11-25 basic/transports, "Streamable HTTP"). Each transport is one MCP session with the
 * server, so everything above the Transport seam (sessions, ids, policy, limits, metrics, the
 * 2026-07-28 translation) works as it does for a stdio child.
 *
 * - Every message is its own POST. A request's answer comes as one JSON body or as an SSE
 *   stream that ends with the response; everything on either is handed up in order.
 * - The session id and the negotiated protocol version are learned from the answer to
 *   `initialize` and sent on every later request ("Session Management", "Protocol Version
 *   Header"). A 404 for a known session means the server forgot it: the transport closes, so
 *   the bridge's session ends too and its client initializes again.
 * - After `notifications/initialized`, a GET stream carries what the server sends outside any
 *   request ("Listening for Messages from the Server"); a server without one answers 405.
 * - A stream that ends before its response, or a GET stream that ends, is resumed with
 *   `Last-Event-ID` ("Resumability and Redelivery"), after the server's `retry` if it set one.
 * - A server that cannot be reached, answers with an error status, garbage, or more than
 *   --max-message-bytes costs the request concerned a JSON-RPC error, nothing else.
 * - A request that carries its protocol version in `_meta` is one of revision 2026-07-28, which
 *   the bridge relays to a server that speaks it (no `initialize`, no session): it goes with
 *   the headers a client of that revision mirrors from the body (2026-07-28
 *   basic/transports/streamable-http, "Request Metadata"). The `x-mcp-header` annotations its
 *   `Mcp-Param-*` headers need are read from the `tools/list` answers relayed before; the
 *   bridge lists tools before it relays a call (front/era-2026.ts, CatalogWatcher).
 *
 * Only the headers the protocol needs are sent: a client's Authorization never reaches the
 * server (2025-11-25 basic/security_best_practices, "Token Passthrough").
 */

import { createParser } from 'eventsource-parser';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Agent, request, type Dispatcher } from 'undici';
import type { Account } from '../budget.ts';
import {
  classify,
  errorResponse,
  idKey,
  isErrorResponse,
  isNotification,
  isRequest,
  isResponse,
  WIRE,
  type JsonRpcMessage,
  type RequestId,
} from '../../mcp/jsonrpc.ts';
import { HEADER, META } from '../../mcp/metadata.ts';
import { nestsDeeperThan } from '../../mcp/untrusted.ts';
import {
  metadataHeaders,
  paramHeaders,
  requestMeta,
  type ParamHeader,
} from '../../mcp/request-metadata.ts';
import { Era2026ServerTransport } from './era-2026-server.ts';
import { BaseTransport, type Launcher, type Transport } from '../transport.ts';

export interface HttpUpstreamOptions {
  /** The server's MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** Largest JSON body or SSE event accepted from the server. */
  maxMessageBytes: number;
  /** Bound on a POST that expects no answer (a notification, a response) and on DELETE. */
  requestTimeoutMs: number;
  logger: Logger;
}

/** An error body is read only for the JSON-RPC error it may carry; no more than this. */
const ERROR_BODY_LIMIT = 16 * 1024;
/** Resumptions in a row that bring no event before a request is given up. */
export const MAX_IDLE_RESUMES = 5;
/** Wait before resuming when the server set no `retry`, and the longest we honour. */
const DEFAULT_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;
/** A session id is visible ASCII (2025-11-25 basic/transports, "Session Management"). */
const SESSION_ID = /^[\x21-\x7e]{1,1024}$/;

/** Something the server did that costs the request in question an error. */
class UpstreamFault extends Error {
  readonly code: number;
  constructor(message: string, code: number = WIRE.SERVER_ERROR) {
    super(message);
    this.code = code;
  }
}

/** The server no longer knows our session. */
class SessionGone extends Error {}

type ResponseData = Dispatcher.ResponseData;

function headerValue(response: ResponseData, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function mediaType(response: ResponseData): string {
  return (headerValue(response, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** What a failed connection or read was, for the client: a code, never the server's text. */
function networkReason(error: unknown): string {
  let cause: unknown = error;
  while (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && !code.startsWith('UND_ERR_ABORT')) return code;
    cause = cause.cause;
  }
  return error instanceof Error ? error.name : 'unknown error';
}

/**
 * The body as text, at most `limit` bytes; more is a fault, and the rest is not read. A body
 * whose Content-Length fits is read in one go; one that declares more is not read at all.
 */
async function readBounded(response: ResponseData, limit: number): Promise<string> {
  const { body } = response;
  const declared = Number(headerValue(response, 'content-length') ?? NaN);
  const tooLarge = () =>
    new UpstreamFault(
      `The MCP server's response is larger than ${limit} bytes`,
      WIRE.INTERNAL_ERROR,
    );
  if (declared <= limit) return body.text();
  if (declared > limit) {
    body.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString();
}

/** A message of the server, unless it is not JSON-RPC or nests too deep (untrusted.ts). */
function parseMessage(text: string): JsonRpcMessage | undefined {
  if (nestsDeeperThan(Buffer.from(text))) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return classify(value) === undefined ? undefined : (value as JsonRpcMessage);
  } catch {
    return undefined;
  }
}

interface StreamOutcome {
  answered: boolean;
  /** Events (with data) the stream brought. */
  events: number;
  lastEventId: string | undefined;
  retryMs: number | undefined;
}

class HttpSessionTransport extends BaseTransport {
  readonly label: string;
  readonly #options: HttpUpstreamOptions;
  readonly #dispatcher: Dispatcher;
  /** Aborts every exchange when the transport closes. */
  readonly #stopping = new AbortController();
  /** Requests waiting for their answer on an exchange of ours, by id: to stop waiting. */
  readonly #exchanges = new Map<string, AbortController>();
  /** Ids of `initialize` requests in flight: their answer names the session and version. */
  readonly #initializing = new Set<string>();
  /** Ids of `tools/list` requests in flight: their answer names the tools' header annotations. */
  readonly #listingTools = new Set<string>();
  /** The `x-mcp-header` annotations of each tool, from the last listing that named it. */
  readonly #annotations = new Map<string, ParamHeader[]>();
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #listening = false;
  #closing: Promise<void> | undefined;
  /**
   * Settles when every notification and response sent so far has been taken by the server,
   * and what follows waits for it. Each message is its own POST, and a server handles two
   * POSTs in any order: a request could overtake the client's `notifications/initialized`,
   * and reach a server that registers tools for the client's capabilities once initialized.
   * Requests do not hold what follows: their POSTs last until they are answered.
   */
  #delivered: Promise<void> = Promise.resolve();
  #undelivered = 0;

  constructor(options: HttpUpstreamOptions, dispatcher: Dispatcher, label: string) {
    super();
    this.#options = options;
    this.#dispatcher = dispatcher;
    this.label = label;
  }

  /** `account` (budget.ts) holds the body until the server has taken it; none: held elsewhere. */
  send(message: JsonRpcMessage, account?: Account): void {
    if (this.isClosed) return;
    const body = JSON.stringify(message);
    account?.take(body.length);
    if (isRequest(message) && message.method === 'initialize') {
      this.#initializing.add(idKey(message.id));
    } else if (isRequest(message) && message.method === 'tools/list') {
      this.#listingTools.add(idKey(message.id));
    }
    const post = () => this.#post(message, body, () => account?.give(body.length));
    if (isRequest(message)) {
      void (this.#undelivered === 0 ? post() : this.#delivered.then(post));
      return;
    }
    this.#undelivered += 1;
    this.#delivered = this.#delivered.then(post).finally(() => {
      this.#undelivered -= 1;
    });
  }

  /** The same promise to every caller: the bridge closes a session's upstream and then all. */
  close(): Promise<void> {
    this.#closing ??= this.#end();
    return this.#closing;
  }

  async #end(): Promise<void> {
    if (this.isClosed) return;
    this.#stop('the bridge ended the session');
    if (this.#sessionId === undefined) return;
    // A courtesy to the server (2025-11-25 "Session Management" 5); failures change nothing.
    await request(this.#options.url, {
      method: 'DELETE',
      headers: this.#headers(),
      signal: AbortSignal.timeout(this.#options.requestTimeoutMs),
      dispatcher: this.#dispatcher,
    })
      .then((response) => response.body.dump())
      .catch(() => undefined);
  }

  #stop(reason: string): void {
    this.#stopping.abort();
    for (const waiting of this.#exchanges.values()) waiting.abort();
    this.closed(reason);
  }

  #headers(extra: Record<string, string> = {}): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    if (this.#sessionId !== undefined) headers[HEADER.sessionId] = this.#sessionId;
    if (this.#protocolVersion !== undefined)
      headers[HEADER.protocolVersion] = this.#protocolVersion;
    return headers;
  }

  /** The mirrored headers of a 2026-07-28 request; none for anything else. */
  #era2026Headers(message: JsonRpcMessage): Record<string, string> {
    if (!isRequest(message) || typeof requestMeta(message)[META.protocolVersion] !== 'string')
      return {};
    const tool = message.method === 'tools/call' ? message.params?.name : undefined;
    const annotations = typeof tool === 'string' ? this.#annotations.get(tool) : undefined;
    return metadataHeaders(message, annotations ?? []);
  }

  #learnAnnotations(result: Record<string, unknown>): void {
    const tools = Array.isArray(result.tools) ? (result.tools as unknown[]) : [];
    for (const tool of tools) {
      const { name, inputSchema } = (tool ?? {}) as { name?: unknown; inputSchema?: unknown };
      if (typeof name === 'string') this.#annotations.set(name, paramHeaders(inputSchema));
    }
  }

  // --- POST ------------------------------------------------------------------------------

  async #post(message: JsonRpcMessage, body: string, sent: () => void): Promise<void> {
    const id = isRequest(message) ? message.id : undefined;
    // A request is waited for until the bridge gives up on it (its timeout cancels it here, and
    // closing aborts every exchange); anything else until --request-timeout.
    const waiting = new AbortController();
    if (id !== undefined) this.#exchanges.set(idKey(id), waiting);
    const signal = id === undefined ? this.#stopping.signal : waiting.signal;
    const bound = id === undefined ? this.#options.requestTimeoutMs : 0;
    try {
      let response: ResponseData;
      try {
        response = await request(this.#options.url, {
          method: 'POST',
          // A request's own version, in `_meta`, outranks the session's (era-2026-server.ts).
          headers: {
            ...this.#headers({
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            }),
            ...this.#era2026Headers(message),
          },
          body,
          signal,
          headersTimeout: bound,
          bodyTimeout: bound,
          dispatcher: this.#dispatcher,
        });
      } finally {
        sent();
      }
      if (id === undefined) await this.#accepted(message, response);
      else await this.#answered(id, response, signal);
    } catch (error) {
      this.#failed(message, error, signal);
    } finally {
      if (id !== undefined) {
        this.#exchanges.delete(idKey(id));
        this.#listingTools.delete(idKey(id));
      } else if (isNotification(message) && message.method === 'notifications/cancelled') {
        // The bridge has given up on the request, whatever the server made of the
        // cancellation (an error, no answer): its stream would stream on for no one.
        const requestId = message.params?.requestId as RequestId | undefined;
        if (requestId !== undefined) this.#exchanges.get(idKey(requestId))?.abort();
      }
    }
  }

  /** The answer to a notification or a response: 202 and no body, if all is well. */
  async #accepted(message: JsonRpcMessage, response: ResponseData): Promise<void> {
    await response.body.dump();
    if (response.statusCode === 404 && this.#sessionId !== undefined) throw new SessionGone();
    if (response.statusCode >= 300) {
      this.#options.logger.warn(
        { upstream: this.label, status: response.statusCode },
        'the MCP server refused a message that needs no answer',
      );
      return;
    }
    if (!isNotification(message)) return;
    if (message.method === 'notifications/initialized' && !this.#listening) {
      this.#listening = true;
      void this.#listen();
    }
  }

  /** The answer to request `id`: JSON, an SSE stream (resumed if it breaks), or an error. */
  async #answered(id: RequestId, response: ResponseData, signal: AbortSignal): Promise<void> {
    const key = idKey(id);
    const status = response.statusCode;
    if (status === 404 && this.#sessionId !== undefined) {
      await response.body.dump();
      throw new SessionGone();
    }
    if (status < 200 || status >= 300) return this.#errorStatus(id, response);
    if (this.#initializing.has(key)) this.#learnSession(response);
    const type = mediaType(response);
    if (type === 'application/json') {
      const text = await readBounded(response, this.#options.maxMessageBytes);
      const message = parseMessage(text);
      if (!message || !isResponse(message) || message.id !== id) {
        throw new UpstreamFault(
          `The MCP server's response could not be read (not a JSON-RPC response to this request, ${Buffer.byteLength(text)} bytes)`,
          WIRE.INTERNAL_ERROR,
        );
      }
      return this.#deliver(message);
    }
    if (type !== 'text/event-stream') {
      await response.body.dump().catch(() => undefined);
      throw new UpstreamFault(
        `The MCP server answered with Content-Type ${JSON.stringify(type.slice(0, 64))}`,
        WIRE.INTERNAL_ERROR,
      );
    }
    let outcome = await this.#readEvents(response.body, id);
    let idle = 0;
    while (!outcome.answered) {
      if (outcome.lastEventId === undefined) {
        throw new UpstreamFault('The MCP server ended its stream before it answered');
      }
      idle = outcome.events === 0 ? idle + 1 : 0;
      if (idle > MAX_IDLE_RESUMES) {
        throw new UpstreamFault(
          `The MCP server's stream ended ${MAX_IDLE_RESUMES} times in a row without an event before it answered`,
        );
      }
      outcome = await this.#resume(id, outcome, signal);
    }
  }

  /** The session id and protocol version of a session, from the answer to `initialize`. */
  #learnSession(response: ResponseData): void {
    const sessionId = headerValue(response, HEADER.sessionId);
    if (sessionId === undefined) return; // a server without sessions
    if (!SESSION_ID.test(sessionId)) {
      throw new UpstreamFault('The MCP server sent an invalid Mcp-Session-Id', WIRE.INTERNAL_ERROR);
    }
    this.#sessionId = sessionId;
  }

  /** Resumes a request's broken stream with GET and Last-Event-ID. */
  async #resume(id: RequestId, last: StreamOutcome, signal: AbortSignal): Promise<StreamOutcome> {
    const wait = Math.min(last.retryMs ?? DEFAULT_RETRY_MS, MAX_RETRY_MS);
    await sleep(wait, undefined, { signal });
    const response = await request(this.#options.url, {
      method: 'GET',
      headers: this.#headers({
        accept: 'text/event-stream',
        [HEADER.lastEventId]: last.lastEventId!,
      }),
      signal,
      dispatcher: this.#dispatcher,
    });
    if (response.statusCode === 404 && this.#sessionId !== undefined) {
      await response.body.dump();
      throw new SessionGone();
    }
    if (response.statusCode !== 200 || mediaType(response) !== 'text/event-stream') {
      await response.body.dump().catch(() => undefined);
      throw new UpstreamFault(
        `The MCP server's stream broke before it answered, and resuming it failed (HTTP ${response.statusCode})`,
      );
    }
    const next = await this.#readEvents(response.body, id);
    return {
      ...next,
      lastEventId: next.lastEventId ?? last.lastEventId,
      retryMs: next.retryMs ?? last.retryMs,
    };
  }

  /** An error status: the JSON-RPC error it carries, or one naming the status. */
  async #errorStatus(id: RequestId, response: ResponseData): Promise<void> {
    const body = await readBounded(response, ERROR_BODY_LIMIT).catch(() => undefined);
    const message = body === undefined ? undefined : parseMessage(body);
    if (message && isErrorResponse(message)) {
      return this.#deliver({ ...message, id });
    }
    throw new UpstreamFault(`The MCP server answered HTTP ${response.statusCode}`);
  }

  /**
   * What went wrong with an exchange. Aborting on purpose (a cancelled request, the end of
   * the transport) is nothing to report; anything else costs a request an error.
   */
  #failed(message: JsonRpcMessage, error: unknown, signal: AbortSignal): void {
    if (error instanceof SessionGone) {
      if (isRequest(message)) {
        this.#deliver(
          errorResponse(message.id, WIRE.SERVER_ERROR, 'The MCP server ended the session'),
        );
      }
      this.#stop('the MCP server ended the session (HTTP 404)');
      return;
    }
    if (this.#stopping.signal.aborted) return;
    if (!isRequest(message)) {
      this.#options.logger.warn(
        { upstream: this.label, reason: networkReason(error) },
        'a message that needs no answer did not reach the MCP server',
      );
      return;
    }
    if (signal.aborted) return; // the bridge stopped waiting for this request
    const fault =
      error instanceof UpstreamFault
        ? error
        : new UpstreamFault(`The MCP server did not answer: ${networkReason(error)}`);
    this.#options.logger.warn(
      { upstream: this.label, method: message.method, reason: fault.message },
      'request to the MCP server failed',
    );
    this.#deliver(errorResponse(message.id, fault.code, fault.message));
    // Without a session there is nothing to go on with: the bridge's session ends too.
    if (message.method === 'initialize' && this.#sessionId === undefined) {
      this.#stop(`initialize failed: ${fault.message}`);
    }
  }

  // --- SSE -------------------------------------------------------------------------------

  /**
   * Hands up every message of an SSE stream until it ends. `awaited`: the key of the request
   * whose response ends the stream; a message that cannot be read fails that request. On the
   * GET stream (no request) such a message is skipped.
   */
  async #readEvents(
    body: ResponseData['body'],
    awaited: RequestId | undefined,
  ): Promise<StreamOutcome> {
    const awaitedKey = awaited === undefined ? undefined : idKey(awaited);
    const outcome: StreamOutcome = {
      answered: false,
      events: 0,
      lastEventId: undefined,
      retryMs: undefined,
    };
    const limit = this.#options.maxMessageBytes;
    let unreadable: number | undefined;
    let sinceLastEvent = 0;
    const parser = createParser({
      onEvent: (event) => {
        sinceLastEvent = 0;
        if (event.id !== undefined) outcome.lastEventId = event.id;
        if (event.data === '') return; // a priming event (2025-11-25 "Sending Messages" 6)
        outcome.events++;
        const message = parseMessage(event.data);
        if (!message) {
          unreadable = Buffer.byteLength(event.data);
          return;
        }
        if (awaitedKey !== undefined && isResponse(message) && message.id !== null) {
          if (message.id !== undefined && idKey(message.id) === awaitedKey) outcome.answered = true;
        }
        // What comes on a request's stream belongs to that request (2025-11-25 "Sending
        // Messages to the Server" 6: related to the originating request).
        this.#deliver(message, awaited);
      },
      onRetry: (ms) => {
        outcome.retryMs = ms;
      },
    });
    const decoder = new TextDecoder();
    for await (const chunk of body as AsyncIterable<Buffer>) {
      sinceLastEvent += chunk.length;
      if (sinceLastEvent > limit) {
        body.destroy();
        throw new UpstreamFault(
          `The MCP server sent an event larger than ${limit} bytes`,
          WIRE.INTERNAL_ERROR,
        );
      }
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (unreadable !== undefined) {
        const bytes = unreadable;
        unreadable = undefined;
        if (awaited !== undefined) {
          body.destroy();
          throw new UpstreamFault(
            `The MCP server's response could not be read (an event that is not JSON-RPC, ${bytes} bytes)`,
            WIRE.INTERNAL_ERROR,
          );
        }
        this.#options.logger.warn(
          { upstream: this.label, bytes },
          'skipped an event from the MCP server that is not a JSON-RPC message',
        );
      }
    }
    return outcome;
  }

  /**
   * The GET stream, reopened (with Last-Event-ID) whenever it ends, until the transport
   * closes; backs off while the server does not serve it.
   */
  async #listen(): Promise<void> {
    const signal = this.#stopping.signal;
    let lastEventId: string | undefined;
    let retryMs: number | undefined;
    let backoff = DEFAULT_RETRY_MS;
    while (!signal.aborted) {
      try {
        const response = await request(this.#options.url, {
          method: 'GET',
          headers: this.#headers({
            accept: 'text/event-stream',
            ...(lastEventId === undefined ? {} : { [HEADER.lastEventId]: lastEventId }),
          }),
          signal,
          dispatcher: this.#dispatcher,
        });
        const status = response.statusCode;
        if (status === 404 && this.#sessionId !== undefined) {
          await response.body.dump();
          return this.#stop('the MCP server ended the session (HTTP 404)');
        }
        // 405: the server offers no such stream (2025-11-25 "Listening for Messages" 3).
        if (status === 405) return void (await response.body.dump());
        if (status === 200 && mediaType(response) === 'text/event-stream') {
          const outcome = await this.#readEvents(response.body, undefined);
          lastEventId = outcome.lastEventId ?? lastEventId;
          retryMs = outcome.retryMs ?? retryMs;
          if (outcome.events > 0) backoff = DEFAULT_RETRY_MS;
        } else {
          await response.body.dump();
        }
      } catch (error) {
        if (signal.aborted) return;
        this.#options.logger.debug(
          { upstream: this.label, reason: networkReason(error) },
          'the GET stream of the MCP server broke',
        );
      }
      await sleep(Math.min(retryMs ?? backoff, MAX_RETRY_MS), undefined, { signal }).catch(
        () => undefined,
      );
      backoff = Math.min(backoff * 2, MAX_RETRY_MS);
    }
  }

  #deliver(message: JsonRpcMessage, relatedTo?: RequestId): void {
    if (this.isClosed) return;
    if (isResponse(message) && typeof message.id !== 'object' && message.id !== undefined) {
      const key = idKey(message.id);
      if (this.#initializing.delete(key) && !isErrorResponse(message)) {
        const version = message.result.protocolVersion;
        if (typeof version === 'string') this.#protocolVersion = version;
      }
      if (this.#listingTools.delete(key) && !isErrorResponse(message))
        this.#learnAnnotations(message.result);
    }
    this.received(message, relatedTo);
  }
}

/** Hands out one upstream session per bridge session, over one connection pool. */
export class HttpLauncher implements Launcher {
  readonly #options: HttpUpstreamOptions;
  /** No body timeout: SSE streams stay open; the bridge bounds each request itself. */
  readonly #agent = new Agent({ bodyTimeout: 0, headersTimeout: 0 });
  #count = 0;

  constructor(options: HttpUpstreamOptions) {
    this.#options = options;
  }

  /**
   * Nothing to start: the session begins with the client's `initialize`. A handshake-era
   * client may meet a server of 2026-07-28 here: era-2026-server.ts translates between them.
   */
  launch(): Promise<Transport> {
    const session = new HttpSessionTransport(
      this.#options,
      this.#agent,
      `upstream session ${++this.#count}`,
    );
    return Promise.resolve(new Era2026ServerTransport(session));
  }

  async close(): Promise<void> {
    await this.#agent.destroy();
  }
}
