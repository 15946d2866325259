/**
 * A handshake-era client (2025-11-25) in front of a server of revision 2026-07-28, in proxy
 * mode. Such a server asks for input by answering with an InputRequiredResult (basic/patterns/
 * mrtr) rather than by sending requests to the client, which a handshake-era client would not
 * understand. This transport sits on an upstream transport and, once the server has answered
 * `server/discover` with 2026-07-28, translates:
 *
 * - each request of the client goes as a 2026-07-28 request: version, the capabilities and
 *   client info the client declared in `initialize`, in `_meta` (basic, "Per-request protocol
 *   fields"), and the log level the client set with `logging/setLevel`, if any (2026-07-28
 *   sends log messages only on requests that ask); methods that revision removed go as they
 *   are (the server took them before);
 * - each `inputRequests` entry of an InputRequiredResult becomes a request to the client
 *   (elicitation, sampling, roots), related to the original request so that it goes on that
 *   request's stream; when all are answered, the original request is sent again, with a new
 *   id (mrtr "Client behavior": the retry is an independent request), with `inputResponses`
 *   under the server's keys and the server's `requestState` echoed as it came;
 * - a server that is still asking after MAX_INPUT_ROUNDS rounds costs the request one JSON-RPC
 *   error (mrtr: a server MAY ask again, and nothing bounds how often).
 *
 * Until then, and for a server that does not speak 2026-07-28, every message passes as is.
 */

import type { Account } from '../budget.ts';
import {
  errorResponse,
  idKey,
  isErrorResponse,
  isNotification,
  isRequest,
  isResponse,
  WIRE,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../mcp/jsonrpc.ts';
import { META } from '../../mcp/metadata.ts';
import { STATELESS_VERSION } from '../../mcp/versions.ts';
import { BaseTransport, type Transport, type TransportHandlers } from '../transport.ts';
import { BRIDGE_REQUEST_META } from '../identity.ts';
import { HANDSHAKE_ONLY_METHODS } from '../../mcp/methods.ts';

/** Rounds of input one request may take before the bridge gives up on it. */
export const MAX_INPUT_ROUNDS = 10;

/** The requests an InputRequiredResult may carry (schema `InputRequest`). */
const INPUT_METHODS = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list']);

/** Ids of the bridge's own messages to the server and the client; a client's ids are numbers. */
const DISCOVER_ID = 'mcp-operator/discover';
const RETRY_PREFIX = 'mcp-operator/retry/';
const INPUT_PREFIX = 'mcp-operator/input/';

/** One request of the client on its way through rounds of input. */
interface Rounds {
  /** The request as the client sent it (translated), whose id the final answer carries. */
  readonly request: JsonRpcRequest;
  /** The id the request has on the wire now: its own, then each retry's. */
  wireId: RequestId;
  round: number;
  requestState: string | undefined;
  /** The server's keys still waiting for the client's answer. */
  readonly waiting: Set<string>;
  readonly responses: Record<string, unknown>;
}

export class Era2026ServerTransport extends BaseTransport {
  readonly #inner: Transport;
  /** Set once the server has named 2026-07-28 in `server/discover`. */
  #meta: Record<string, unknown> | undefined;
  /** The client's `initialize`, held while the server is asked `server/discover`. */
  #initialize: JsonRpcRequest | undefined;
  /** Requests of the client that may come back asking for input, by their wire id. */
  readonly #calls = new Map<string, Rounds>();
  /** The bridge's requests to the client: the request they serve and the server's key. */
  readonly #inputs = new Map<string, { rounds: Rounds; key: string }>();
  /**
   * The level of log messages the client wants: a server of 2026-07-28 sends them only when a
   * request asks (`_meta` logLevel); one of the handshake era sends all until `logging/setLevel`.
   */
  #logLevel = 'debug';
  #nextId = 0;

  constructor(inner: Transport) {
    super();
    this.#inner = inner;
    inner.attach({
      onMessage: (message, relatedTo) => this.#fromServer(message, relatedTo),
      onBadLine: (line) => this.receivedBadLine(line),
      onClose: (reason) => this.closed(reason),
    } satisfies TransportHandlers);
  }

  get label(): string {
    return this.#inner.label;
  }

  send(message: JsonRpcMessage, account?: Account): void {
    if (isRequest(message) && message.method === 'initialize' && this.#meta === undefined) {
      this.#initialize = message;
      this.#inner.send({
        jsonrpc: '2.0',
        id: DISCOVER_ID,
        method: 'server/discover',
        params: { _meta: BRIDGE_REQUEST_META },
      });
      return;
    }
    if (this.#meta === undefined) return this.#inner.send(message, account);
    if (isRequest(message)) return this.#request(message, account);
    if (isResponse(message) && this.#answered(message)) return;
    if (isNotification(message) && message.method === 'notifications/cancelled') {
      return this.#inner.send(this.#cancelled(message), account);
    }
    this.#inner.send(message, account);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** The server's answer to `server/discover` decides; then the client's `initialize` goes. */
  #discovered(message: JsonRpcMessage): void {
    const initialize = this.#initialize;
    this.#initialize = undefined;
    if (!initialize) return;
    const versions =
      isResponse(message) && !isErrorResponse(message)
        ? message.result.supportedVersions
        : undefined;
    if (Array.isArray(versions) && versions.includes(STATELESS_VERSION)) {
      this.#meta = {
        [META.protocolVersion]: STATELESS_VERSION,
        [META.clientCapabilities]: initialize.params?.capabilities ?? {},
        ...(initialize.params?.clientInfo === undefined
          ? {}
          : { [META.clientInfo]: initialize.params.clientInfo }),
      };
    }
    this.#inner.send(initialize);
  }

  #request(request: JsonRpcRequest, account: Account | undefined): void {
    if (request.method === 'logging/setLevel' && typeof request.params?.level === 'string') {
      this.#logLevel = request.params.level;
    }
    if (HANDSHAKE_ONLY_METHODS.has(request.method)) return this.#inner.send(request, account);
    const params = request.params ?? {};
    const meta = {
      ...(params._meta as Record<string, unknown> | undefined),
      ...this.#meta,
      [META.logLevel]: this.#logLevel,
    };
    const translated: JsonRpcRequest = { ...request, params: { ...params, _meta: meta } };
    this.#calls.set(idKey(request.id), {
      request: translated,
      wireId: request.id,
      round: 0,
      requestState: undefined,
      waiting: new Set(),
      // Keyed by the server's names: `__proto__` must be a key like any other.
      responses: Object.create(null) as Record<string, unknown>,
    });
    this.#inner.send(translated, account);
  }

  #fromServer(message: JsonRpcMessage, relatedTo: RequestId | undefined): void {
    if (this.#meta === undefined) {
      // Not translating: one comparison per message, and it goes on as it came.
      if (this.#initialize && isResponse(message) && message.id === DISCOVER_ID) {
        return this.#discovered(message);
      }
      return this.received(message, relatedTo);
    }
    if (!isResponse(message) || message.id === null || message.id === undefined) {
      return this.received(
        message,
        relatedTo === undefined ? undefined : this.#clientId(relatedTo),
      );
    }
    const rounds = this.#calls.get(idKey(message.id));
    if (!rounds) return this.received(message, relatedTo);
    this.#calls.delete(idKey(message.id));
    const id = rounds.request.id;
    if (isErrorResponse(message)) return this.received({ ...message, id });
    if (message.result.resultType !== 'input_required') return this.received({ ...message, id });
    this.#inputRequired(rounds, message.result);
  }

  /** The id the bridge knows a retry by: that of the client's request. */
  #clientId(wireId: RequestId): RequestId {
    return this.#calls.get(idKey(wireId))?.request.id ?? wireId;
  }

  #inputRequired(rounds: Rounds, result: Record<string, unknown>): void {
    const id = rounds.request.id;
    rounds.round++;
    if (rounds.round > MAX_INPUT_ROUNDS) {
      return this.received(
        errorResponse(
          id,
          WIRE.INTERNAL_ERROR,
          `The MCP server asked for input ${MAX_INPUT_ROUNDS} times and still did not answer`,
        ),
      );
    }
    const requests = (result.inputRequests ?? {}) as Record<string, unknown>;
    const state = result.requestState;
    const malformed = Object.values(requests).some(
      (asked) => !INPUT_METHODS.has((asked as { method?: unknown } | null)?.method as string),
    );
    if (
      typeof requests !== 'object' ||
      malformed ||
      (state !== undefined && typeof state !== 'string')
    ) {
      return this.received(
        errorResponse(id, WIRE.INTERNAL_ERROR, 'The MCP server asked for input it may not ask for'),
      );
    }
    rounds.requestState = state;
    rounds.waiting.clear();
    for (const key of Object.keys(rounds.responses)) delete rounds.responses[key];
    for (const [key, asked] of Object.entries(requests)) {
      const { method, params } = asked as { method: string; params?: Record<string, unknown> };
      const inputId = `${INPUT_PREFIX}${this.#nextId++}`;
      rounds.waiting.add(key);
      this.#inputs.set(inputId, { rounds, key });
      this.received({ jsonrpc: '2.0', id: inputId, method, ...(params ? { params } : {}) }, id);
    }
    if (rounds.waiting.size === 0) this.#retry(rounds);
  }

  /** The client's answer to one of the bridge's requests; false: not one of them. */
  #answered(response: JsonRpcResponse): boolean {
    const input = typeof response.id === 'string' ? this.#inputs.get(response.id) : undefined;
    if (!input) return false;
    this.#inputs.delete(response.id as string);
    const { rounds, key } = input;
    if (!rounds.waiting.delete(key)) return true;
    if (isErrorResponse(response)) {
      this.#forget(rounds, 'another input request of the same call failed');
      this.received({ ...response, id: rounds.request.id });
      return true;
    }
    rounds.responses[key] = response.result;
    if (rounds.waiting.size === 0) this.#retry(rounds);
    return true;
  }

  /** The original request again, under a new id, with the answers and the server's state. */
  #retry(rounds: Rounds): void {
    rounds.wireId = `${RETRY_PREFIX}${this.#nextId++}`;
    const params: Record<string, unknown> = {
      ...rounds.request.params,
      inputResponses: { ...rounds.responses },
    };
    if (rounds.requestState !== undefined) params.requestState = rounds.requestState;
    this.#calls.set(idKey(rounds.wireId), rounds);
    this.#inner.send({ ...rounds.request, id: rounds.wireId, params });
  }

  /** A cancelled request's rounds end; the server hears of the request it is working on. */
  #cancelled(notification: JsonRpcMessage & { params?: Record<string, unknown> }): JsonRpcMessage {
    const requestId = notification.params?.requestId as RequestId | undefined;
    if (requestId === undefined) return notification;
    const rounds = [
      ...this.#calls.values(),
      ...[...this.#inputs.values()].map((i) => i.rounds),
    ].find((candidate) => idKey(candidate.request.id) === idKey(requestId));
    if (!rounds) return notification;
    this.#forget(rounds, 'the client cancelled the request this input was for');
    return { ...notification, params: { ...notification.params, requestId: rounds.wireId } };
  }

  /**
   * The rounds end. Input requests still open at the client are cancelled there (2025-11-25
   * basic/utilities/cancellation), so that it can dismiss what it is showing its user.
   */
  #forget(rounds: Rounds, reason: string): void {
    this.#calls.delete(idKey(rounds.wireId));
    for (const [inputId, input] of this.#inputs) {
      if (input.rounds !== rounds) continue;
      this.#inputs.delete(inputId);
      this.received(
        {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: inputId, reason },
        },
        rounds.request.id,
      );
    }
  }
}
