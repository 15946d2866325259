/**
 * One request of a 2026-07-28 client, carried to a child that speaks the handshake era. It is
 * a session of its own for the upstream (ids, progress and cancellation are mapped as for any
 * session) and lives as long as the request:
 *
 * - the answer gets `resultType` and the server's identity in `_meta` (2026-07-28 changelog,
 *   items 2 and 8), and list results the cache hints `ttlMs`/`cacheScope` (minor change 5);
 * - progress goes on the request's SSE stream; log messages only when the request asked for
 *   them with `_meta` `io.modelcontextprotocol/logLevel`;
 * - a request from the child to the client (elicitation, sampling, roots) becomes an
 *   `InputRequiredResult` (basic/patterns/mrtr): the child's call stays open, parked under a
 *   `requestState`, until the client retries with `inputResponses`. Requests the child sends
 *   together (one within GATHER_MS of the last) go out in one result; its keys are the
 *   bridge's, since a request of the handshake era carries none;
 * - a result in which the child itself asks for input (`inputRequests`, `requestState`: what
 *   a server with MRTR answers a handshake-era client for a round it does not turn into
 *   requests, as the Go SDK does) goes out as an `InputRequiredResult` with the child's keys;
 *   its `requestState` is marked (SERVER_STATE) so that the retry goes to the child as a new
 *   call with the state it made;
 * - the client closing the stream cancels the request (basic/patterns/cancellation).
 *
 * To a child that speaks 2026-07-28 itself (`native`), the request goes as the client sent it
 * and the answer comes back as the child wrote it: its own `resultType`, `inputRequests` keys
 * and `requestState`, which only the server can know.
 */

import type { ServerResponse } from 'node:http';
import {
  errorResponse,
  isErrorResponse,
  isRequest,
  isResponse,
  WIRE,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../mcp/jsonrpc.ts';
import { META } from '../../mcp/metadata.ts';
import { ownValue } from '../../mcp/untrusted.ts';
import { replyJson } from '../replies.ts';
import { SSE_HEADERS } from './sse.ts';
import { CLIENT_CAPABILITY, type SessionPort, type Upstream } from '../upstream.ts';
import type { Caller } from '../identity.ts';

/** Results that carry cache hints in 2026-07-28 (CacheableResult). */
const CACHEABLE = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
]);

/**
 * Errors of 2026-07-28 that are answered with HTTP 400 (basic "Per-request protocol fields",
 * basic/transports/streamable-http "Server Validation" and "Backward Compatibility").
 */
const BAD_REQUEST_CODES: ReadonlySet<number> = new Set([
  WIRE.HEADER_MISMATCH,
  WIRE.MISSING_REQUIRED_CLIENT_CAPABILITY,
  WIRE.UNSUPPORTED_PROTOCOL_VERSION,
]);

/**
 * The port declares every capability the child may ask for, so that each such request reaches
 * it; whether the client declared it is checked here, where a missing one is the client's error.
 */
const EVERY_INPUT_CAPABILITY = Object.fromEntries(
  Object.values(CLIENT_CAPABILITY).map((capability) => [capability, {}]),
);

/** Results that may ask for input (basic/patterns/mrtr, "Supported Requests"). */
const MAY_ASK_FOR_INPUT = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** How long after a child's request to the client the bridge waits for more to send along. */
const GATHER_MS = 30;

/**
 * The most questions of one call the bridge holds for the client (asked by the child, not yet
 * answered). Each is kept until the client's retry, so a child asking without end would
 * otherwise grow the bridge's memory; it gets an error for each one past the bound, and decides.
 */
export const MAX_INPUT_REQUESTS = 16;

/** Marks a `requestState` the child made, as the client gets it back from the bridge. */
export const SERVER_STATE = 'server.';

const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

export function era2026Result(
  method: string,
  result: Record<string, unknown>,
  serverInfo: unknown,
): Record<string, unknown> {
  const meta = {
    ...(result._meta as Record<string, unknown> | undefined),
    [META.serverInfo]: serverInfo,
  };
  const translated: Record<string, unknown> = { resultType: 'complete', ...result, _meta: meta };
  if (CACHEABLE.has(method)) {
    // Nothing is known about the child's caching: immediately stale, not shareable.
    translated.ttlMs ??= 0;
    translated.cacheScope ??= 'private';
  }
  return translated;
}

export interface CallContext {
  upstream: Upstream;
  serverInfo: unknown;
  /** Parks the call under a fresh requestState until the client retries; returns the state. */
  park(call: Era2026Call): string;
  /** The call is over: forget it. */
  done(call: Era2026Call): void;
}

let nextPort = 0;

export class Era2026Call implements SessionPort {
  readonly id = `stateless-${nextPort++}`;
  readonly #context: CallContext;
  readonly #method: string;
  /** What a retry must repeat to resume this call (retryTarget). */
  readonly #target: string;
  readonly #native: boolean;
  readonly clientCapabilities = EVERY_INPUT_CAPABILITY;
  /** What the client declared in `_meta`. */
  readonly #declared: Record<string, unknown>;
  readonly #logLevel: number;
  /** The HTTP exchange the next answer goes to, and the client id it must carry. */
  #res: ServerResponse | undefined;
  #clientId: RequestId;
  #sse = false;
  #finished = false;
  #stashed: JsonRpcResponse | undefined;
  /** The child's requests to the client not yet answered, by the key the client sees. */
  readonly #asked = new Map<string, JsonRpcRequest>();
  /** The keys of the last InputRequiredResult: what the client's retry answers. */
  #shown: string[] = [];
  #nextKey = 1;
  #gathering: NodeJS.Timeout | undefined;
  /**
   * With OAuth, the subject of the token that made the call: only a retry with that subject's
   * token may resume it, as only its owner may use a session (endpoint.ts).
   */
  #owner: string | undefined;

  constructor(
    context: CallContext,
    request: JsonRpcRequest,
    res: ServerResponse,
    { native = false }: { native?: boolean } = {},
  ) {
    this.#context = context;
    this.#method = request.method;
    this.#target = retryTarget(request);
    this.#native = native;
    const meta = (request.params?._meta ?? {}) as Record<string, unknown>;
    this.#declared = (meta[META.clientCapabilities] ?? {}) as Record<string, unknown>;
    const level = meta[META.logLevel];
    this.#logLevel = typeof level === 'string' ? LOG_LEVELS.indexOf(level) : -1;
    this.#clientId = request.id;
    this.#bind(res);
  }

  /** Sends the request to the child. Its _meta keeps only what a handshake-era child knows. */
  start(request: JsonRpcRequest, bytes: number, caller: Caller | undefined): void {
    const { upstream } = this.#context;
    this.#owner = caller?.subject;
    upstream.attach(this);
    if (this.#native) {
      // The caller still counts: the policy filters the child's answer by its scopes.
      upstream.fromClient(this, request, bytes, caller);
      return;
    }
    const meta = { ...(request.params?._meta as Record<string, unknown> | undefined) };
    for (const key of Object.values(META)) delete meta[key];
    const params = { ...request.params };
    if (Object.keys(meta).length > 0) params._meta = meta;
    else delete params._meta;
    upstream.fromClient(this, { ...request, params }, bytes, caller);
  }

  /** Whether `caller` made this call: a parked call is answered only by whoever made it. */
  ownedBy(caller: Caller | undefined): boolean {
    return caller?.subject === this.#owner;
  }

  /** Whether `retry` is a retry of this call, and may resume it. */
  resumableBy(retry: JsonRpcRequest): boolean {
    return retryTarget(retry) === this.#target;
  }

  /** The client retried with the answers to our input requests: pass them to the child. */
  resume(request: JsonRpcRequest, res: ServerResponse): void {
    this.#clientId = request.id;
    this.#bind(res);
    const responses = (request.params?.inputResponses ?? {}) as Record<string, unknown>;
    for (const key of this.#shown) {
      const childId = this.#asked.get(key)!.id;
      this.#asked.delete(key);
      const result = responses[key];
      const answer: JsonRpcResponse =
        result === undefined
          ? errorResponse(
              childId,
              WIRE.INVALID_PARAMS,
              `The client gave no response for input request ${key}`,
            )
          : { jsonrpc: '2.0', id: childId, result: result as Record<string, unknown> };
      this.#context.upstream.fromClient(this, answer);
    }
    this.#shown = [];
    const stashed = this.#stashed;
    this.#stashed = undefined;
    if (stashed) this.#answer(stashed);
    // Requests that came after the last InputRequiredResult went out: the next one.
    else if (this.#asked.size > 0) this.#gather();
  }

  deliver(message: JsonRpcMessage, relatedTo?: RequestId): void {
    if (isResponse(message)) return this.#answer(message);
    if (relatedTo === undefined) return; // broadcasts belong to subscriptions/listen streams
    if (isRequest(message)) return this.#inputRequest(message);
    if (message.method === 'notifications/message' && !this.#wantsLog(message.params?.level))
      return;
    this.#event(message);
  }

  upstreamClosed(reason: string): void {
    this.#answer(
      errorResponse(this.#clientId, WIRE.SERVER_ERROR, `The MCP server process ended (${reason})`),
    );
  }

  /** Ends the call from our side (parked too long, or the bridge stops). */
  abandon(): void {
    this.#finish();
  }

  #bind(res: ServerResponse): void {
    this.#res = res;
    this.#sse = false;
    // Closing the response before its answer is the client cancelling the request.
    res.once('close', () => {
      if (this.#res === res && !res.writableFinished) this.#finish();
    });
  }

  #answer(response: JsonRpcResponse): void {
    if (this.#finished) return;
    if (!this.#res) {
      // Parked, and the child answered before the client came back: keep it for the retry.
      this.#stashed = response;
      return;
    }
    let answer = { ...response, id: this.#clientId } as JsonRpcResponse;
    if (!isErrorResponse(answer) && !this.#native) {
      const result = asksForInput(this.#method, answer.result)
        ? inputRequired(answer.result, this.#context.serverInfo)
        : era2026Result(this.#method, answer.result, this.#context.serverInfo);
      answer = { ...answer, result };
    }
    this.#write(answer, true);
    this.#finish();
  }

  #inputRequest(request: JsonRpcRequest): void {
    // Only requests for a client capability become input requests. Others (a ping) get a
    // refusal, and the child decides.
    const capability = ownValue(CLIENT_CAPABILITY, request.method);
    if (capability === undefined || this.#declared[capability] === undefined) {
      const refusal = errorResponse(
        request.id,
        WIRE.METHOD_NOT_FOUND,
        `The client does not support ${request.method}`,
      );
      this.#context.upstream.fromClient(this, refusal);
    }
    if (capability === undefined) return;
    if (this.#declared[capability] === undefined) {
      // The server MUST NOT rely on a capability the client did not declare, and says which
      // one is missing (2026-07-28 basic, "Per-request protocol fields"); ending the call
      // cancels it in the child.
      const missing = errorResponse(
        this.#clientId,
        WIRE.MISSING_REQUIRED_CLIENT_CAPABILITY,
        `The server requires the ${capability} capability for this request`,
        { requiredCapabilities: { [capability]: {} } },
      );
      this.#write(missing, true);
      this.#finish();
      return;
    }
    if (this.#asked.size >= MAX_INPUT_REQUESTS) {
      const refusal = errorResponse(
        request.id,
        WIRE.INTERNAL_ERROR,
        `The bridge holds at most ${MAX_INPUT_REQUESTS} requests to the client of one call`,
      );
      this.#context.upstream.fromClient(this, refusal);
      return;
    }
    this.#asked.set(`input-${this.#nextKey++}`, request);
    this.#gather();
  }

  /** Sends what the child asked once it has asked all it asks at once (GATHER_MS). */
  #gather(): void {
    clearTimeout(this.#gathering);
    this.#gathering = setTimeout(() => this.#askClient(), GATHER_MS);
  }

  #askClient(): void {
    this.#gathering = undefined;
    // Parked already: what came since goes out with the next InputRequiredResult.
    if (this.#finished || !this.#res || this.#asked.size === 0) return;
    const inputRequests = Object.fromEntries(
      [...this.#asked].map(([key, { method, params }]) => [key, { method, params: params ?? {} }]),
    );
    this.#shown = Object.keys(inputRequests);
    const requestState = this.#context.park(this);
    const result = {
      resultType: 'input_required',
      inputRequests,
      requestState,
      _meta: { [META.serverInfo]: this.#context.serverInfo },
    };
    this.#write({ jsonrpc: '2.0', id: this.#clientId, result }, true);
    this.#res = undefined;
  }

  #wantsLog(level: unknown): boolean {
    return (
      this.#logLevel >= 0 &&
      typeof level === 'string' &&
      LOG_LEVELS.indexOf(level) >= this.#logLevel
    );
  }

  #event(message: JsonRpcMessage): void {
    this.#write(message, false);
  }

  /** JSON when the answer is the first thing to go out, else an SSE stream. */
  #write(message: JsonRpcMessage, last: boolean): void {
    const res = this.#res;
    if (!res || res.destroyed) return;
    if (!this.#sse && last) {
      replyJson(res, httpStatus(message), message);
      return;
    }
    if (!this.#sse) {
      res.writeHead(200, SSE_HEADERS);
      this.#sse = true;
    }
    res.write(`data: ${JSON.stringify(message)}\n\n`);
    if (last) res.end();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#gathering);
    this.#context.upstream.detach(this);
    this.#context.done(this);
  }
}

/**
 * What identifies the request a `requestState` was made for: its method and the name or URI it
 * is for. A state presented on any other request is refused (2026-07-28 basic/patterns/mrtr,
 * "Server Requirements": an identifier for the originating request, "rejecting state
 * presented on a request that does not match"): else a retry named for one tool would get the
 * answer of another, screened and scoped for the name it gives.
 */
function retryTarget(request: JsonRpcRequest): string {
  const { name, uri } = request.params ?? {};
  return JSON.stringify([
    request.method,
    typeof name === 'string' ? name : null,
    typeof uri === 'string' ? uri : null,
  ]);
}

/** A result in which a handshake-era child asks for input the MRTR way, with no resultType. */
function asksForInput(method: string, result: Record<string, unknown>): boolean {
  if (!MAY_ASK_FOR_INPUT.has(method) || result.resultType !== undefined) return false;
  const requests = result.inputRequests;
  return (
    (typeof requests === 'object' && requests !== null) || typeof result.requestState === 'string'
  );
}

/** The child's own InputRequiredResult, its requestState marked as the child's. */
function inputRequired(
  result: Record<string, unknown>,
  serverInfo: unknown,
): Record<string, unknown> {
  const translated: Record<string, unknown> = {
    resultType: 'input_required',
    _meta: {
      ...(result._meta as Record<string, unknown> | undefined),
      [META.serverInfo]: serverInfo,
    },
  };
  if (result.inputRequests !== undefined) translated.inputRequests = result.inputRequests;
  if (typeof result.requestState === 'string')
    translated.requestState = `${SERVER_STATE}${result.requestState}`;
  return translated;
}

function httpStatus(message: JsonRpcMessage): number {
  if (!isErrorResponse(message)) return 200;
  if (message.error.code === WIRE.METHOD_NOT_FOUND) return 404;
  return BAD_REQUEST_CODES.has(message.error.code) ? 400 : 200;
}
