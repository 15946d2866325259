/**
 * The audit trail of one bridge: an event for every request that uses what the server offers
 * (AUDITED_METHODS, both protocol eras) when it ends, and for every request the bridge
 * refuses. The upstream reports the first (its onRequestEnd), the HTTP front the second; this
 * is the one place that sees both, and turns them into lines for the sink.
 */

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  isErrorResponse,
  isRequest,
  type JsonRpcMessage,
  type JsonRpcResponse,
} from '../../mcp/jsonrpc.ts';
import { HEADER, META } from '../../mcp/metadata.ts';
import { jsonText } from '../message-text.ts';
import { ARRIVAL, type Arrival, type Arrived, type Caller } from '../identity.ts';
import type { EndedRequest } from '../upstream.ts';
import {
  auditLine,
  AUDITED_METHODS,
  oauthCaller,
  type ArgumentMode,
  type AuditFacts,
  type CallerRecord,
  type OutcomeRecord,
} from './event.ts';
import type { AuditSink } from './sink.ts';

export interface AuditConfig {
  /** The MCPServer this bridge serves; absent outside Kubernetes. */
  server?: { namespace: string; name: string };
  pod?: string;
  /**
   * What callers present: an OAuth access token (a caller the token does not prove is named as
   * an OAuth caller with nothing proven), the static bearer token, or nothing.
   */
  credential: 'oauth' | 'token' | 'none';
  arguments: ArgumentMode;
}

/** What the front knows of a request it refuses. */
export interface Refusal {
  status: number;
  /** Stable words: see docs/audit.md, "Reasons". */
  reason: string;
  /** The request, when it was read before it was refused. */
  message?: JsonRpcMessage;
  caller?: Caller | undefined;
}

export class AuditTrail {
  readonly #config: AuditConfig;
  readonly #sink: AuditSink;
  readonly #unproven: CallerRecord;

  constructor(config: AuditConfig, sink: AuditSink) {
    this.#config = config;
    this.#sink = sink;
    this.#unproven =
      config.credential === 'oauth'
        ? { kind: 'oauth', sub: null, clientId: null, scopes: [] }
        : config.credential === 'token'
          ? { kind: 'token' }
          : { kind: 'anonymous' };
  }

  /**
   * Marks a request the front passes on with where it came from, for its event when it ends.
   * Only requests that will have one: the others cost nothing.
   */
  arrived(req: IncomingMessage, message: JsonRpcMessage): void {
    if (!isRequest(message) || !AUDITED_METHODS.has(message.method)) return;
    (message as Arrived)[ARRIVAL] = arrivalOf(req, message);
  }

  /** The upstream's onRequestEnd. */
  readonly requestEnded = (ended: EndedRequest): void => {
    if (!AUDITED_METHODS.has(ended.method)) return;
    const { response, verdict, arrival } = ended;
    const refused = ended.outcome === 'refused';
    const current = verdict?.current ?? null;
    const approved = verdict?.approved ?? null;
    this.#write({
      ...this.#common(arrival, ended.caller),
      method: ended.method,
      target: targetOf(ended.method, ended.params),
      digest: {
        current,
        approved,
        match: current === null || approved === null ? null : current === approved,
      },
      decision: refused ? 'denied' : 'allowed',
      reason: refused ? denialReason(response) : undefined,
      outcome: outcomeOf(ended.outcome, response),
      errorCode: response && isErrorResponse(response) ? response.error.code : null,
      httpStatus: null,
      durationMs: Math.round(ended.seconds * 1e6) / 1e3,
      requestBytes: ended.bytes,
      responseBytes: response ? Buffer.byteLength(jsonText(response)) : null,
      rawArguments: argumentsOf(ended.method, ended.params),
    });
  };

  /** A request the front refused (Origin, token, budgets, sessions). */
  refused(req: IncomingMessage, refusal: Refusal): void {
    const request = refusal.message && isRequest(refusal.message) ? refusal.message : undefined;
    const length = Number(req.headers['content-length']);
    this.#write({
      ...this.#common(arrivalOf(req, request), refusal.caller),
      method: request?.method ?? null,
      target: request ? targetOf(request.method, request.params) : undefined,
      digest: { current: null, approved: null, match: null },
      decision: 'denied',
      reason: refusal.reason,
      outcome: 'refused',
      errorCode: null,
      httpStatus: refusal.status,
      durationMs: null,
      requestBytes: Number.isSafeInteger(length) && length >= 0 ? length : null,
      responseBytes: null,
      rawArguments: request ? argumentsOf(request.method, request.params) : undefined,
    });
  }

  close(): Promise<void> {
    return this.#sink.close();
  }

  #common(arrival: Arrival | undefined, caller: Caller | undefined) {
    return {
      time: new Date().toISOString(),
      server: this.#config.server ?? null,
      pod: this.#config.pod ?? null,
      protocolVersion: arrival?.protocolVersion ?? null,
      session: arrival?.sessionId === undefined ? null : opaqueSession(arrival.sessionId),
      caller: caller ? oauthCaller(caller.scopes, caller.subject, caller.clientId) : this.#unproven,
      source: arrival?.source ?? null,
    };
  }

  #write(facts: AuditFacts): void {
    this.#sink.write(auditLine(facts, this.#config.arguments));
  }
}

function arrivalOf(
  req: IncomingMessage,
  request: { params?: Record<string, unknown> } | undefined,
): Arrival {
  const meta = request?.params?._meta as Record<string, unknown> | undefined;
  const inMeta = meta?.[META.protocolVersion];
  const version = req.headers[HEADER.protocolVersion];
  const sessionId = req.headers[HEADER.sessionId];
  return {
    source: req.socket.remoteAddress,
    protocolVersion:
      typeof version === 'string' ? version : typeof inMeta === 'string' ? inMeta : undefined,
    sessionId: typeof sessionId === 'string' ? sessionId : undefined,
  };
}

/** The session id as events name it: enough to tell sessions apart, useless to take one over. */
export function opaqueSession(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex').slice(0, 32);
}

/** What a request uses: the tool or prompt by name, the resource by URI. */
export function targetOf(
  method: string,
  params: Record<string, unknown> | undefined,
): string | undefined {
  const field =
    method === 'completion/complete'
      ? (params?.ref as Record<string, unknown> | undefined)
      : params;
  const target = field?.name ?? field?.uri;
  return typeof target === 'string' ? target : undefined;
}

function argumentsOf(method: string, params: Record<string, unknown> | undefined): unknown {
  if (method === 'tools/call' || method === 'prompts/get') return params?.arguments;
  if (method === 'completion/complete') return params?.argument;
  return undefined;
}

/** The policy's reason (`data.reason` of its refusal, policy/denial.ts). */
function denialReason(response: JsonRpcResponse | undefined): string | undefined {
  if (!response || !isErrorResponse(response)) return undefined;
  const data = response.error.data as Record<string, unknown> | undefined;
  return typeof data?.reason === 'string' ? data.reason : 'refused';
}

export function outcomeOf(
  outcome: EndedRequest['outcome'],
  response: JsonRpcResponse | undefined,
): OutcomeRecord {
  if (
    outcome === 'ok' &&
    response &&
    !isErrorResponse(response) &&
    response.result.isError === true
  )
    return 'tool_error';
  return outcome;
}
