/**
 * The bridge's trace span of every client request (docs/telemetry.md), named and attributed by
 * the OpenTelemetry semantic conventions for MCP (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/),
 * plus what only the gate knows: its decision and the approved digest of the target.
 *
 * W3C trace context goes both ways. The parent is the client's `params._meta` trace context
 * (2026-07-28 basic, "OpenTelemetry trace context"), else its `traceparent` header; the
 * request then goes on to the server with the bridge's span in its `_meta`, so the server's
 * own spans join the trace. Nothing secret goes into a span: no arguments, no header but the
 * trace context, the session id only as the audit trail names it (opaque).
 *
 * Loaded only when an OTLP endpoint is configured (telemetry.ts): without one, no span exists.
 */

import type { IncomingMessage } from 'node:http';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_NETWORK_PROTOCOL_NAME,
  ATTR_NETWORK_TRANSPORT,
} from '@opentelemetry/semantic-conventions';
import { isErrorResponse, isRequest, type JsonRpcMessage } from '../../mcp/jsonrpc.ts';
import { HEADER, META } from '../../mcp/metadata.ts';
import { clip, visible } from '../../tools/text.ts';
import { SPAN, type Spanned } from '../identity.ts';
import type { EndedRequest } from '../upstream.ts';
import { opaqueSession, outcomeOf, targetOf } from './trail.ts';
import type { Refusal } from './trail.ts';

/**
 * Attribute names of the MCP and GenAI conventions. They are still "development" in
 * semantic-conventions (its `incubating` entry, which may change in any minor release), so they
 * are copied here, as that package advises, rather than imported.
 */
export const MCP_ATTR = {
  method: 'mcp.method.name',
  protocolVersion: 'mcp.protocol.version',
  sessionId: 'mcp.session.id',
  resourceUri: 'mcp.resource.uri',
  requestId: 'jsonrpc.request.id',
  rpcStatus: 'rpc.response.status_code',
  operation: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
} as const;

/** Ours: what the gate decided, and the definition the call ran against (docs/telemetry.md). */
export const GATE_ATTR = {
  decision: 'mcp_operator.decision',
  reason: 'mcp_operator.decision.reason',
  digest: 'mcp_operator.target.digest',
  approvedDigest: 'mcp_operator.target.approved_digest',
  digestMatch: 'mcp_operator.target.digest_match',
  outcome: 'mcp_operator.outcome',
} as const;

/** The W3C Trace Context fields, as headers and as `_meta` keys alike. */
const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';
/**
 * Longer values are ignored. A traceparent of version 00 is 55 characters; W3C Trace Context
 * caps tracestate at 32 members and lets a vendor cut it at 512 characters.
 */
const TRACEPARENT_MAX = 128;
const TRACESTATE_MAX = 512;
/** Tool and prompt names and URIs in span names and attributes. */
const TARGET_MAX = 256;
/** Reasons and request ids. */
const TEXT_MAX = 128;

/** Reads trace context from `_meta` or headers: strings only, bounded, never anything else. */
const boundedGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get(carrier, key) {
    const value = carrier[key];
    const max = key === TRACEPARENT ? TRACEPARENT_MAX : TRACESTATE_MAX;
    return typeof value === 'string' && value.length <= max ? value : undefined;
  },
};

const metaSetter: TextMapSetter<Record<string, unknown>> = {
  set(carrier, key, value) {
    carrier[key] = value;
  },
};

export class RequestSpans {
  readonly #tracer: Tracer;
  readonly #propagator: TextMapPropagator;

  constructor(tracer: Tracer, propagator: TextMapPropagator) {
    this.#tracer = tracer;
    this.#propagator = propagator;
  }

  /**
   * Starts the span of a request the front has read, and puts the bridge's trace context into
   * the request's `_meta` for the server. Notifications and responses get none.
   */
  arrived(req: IncomingMessage, message: JsonRpcMessage): void {
    if (!isRequest(message)) return;
    const params = message.params;
    const meta = isRecord(params?._meta) ? params._meta : undefined;
    const span = this.#start(req, message.method, params, this.#parent(req, meta), {
      [MCP_ATTR.requestId]: clip(String(message.id), TEXT_MAX),
    });
    (message as Spanned)[SPAN] = span;
    // The request is the bridge's own copy, parsed from the body: changed in place. A client's
    // baggage in `_meta` goes on as it came.
    const forwarded: Record<string, unknown> = { ...meta };
    delete forwarded[TRACESTATE];
    this.#propagator.inject(trace.setSpan(ROOT_CONTEXT, span), forwarded, metaSetter);
    message.params = { ...params, _meta: forwarded };
  }

  /** The upstream's onRequestEnd: what the gate decided and how the request ended. */
  readonly requestEnded = (ended: EndedRequest): void => {
    const { span, response, verdict } = ended;
    if (!span) return;
    const refused = ended.outcome === 'refused';
    const outcome = outcomeOf(ended.outcome, response);
    const attributes: Attributes = {
      [GATE_ATTR.decision]: refused ? 'denied' : 'allowed',
      [GATE_ATTR.outcome]: outcome,
    };
    if (verdict?.current !== undefined) attributes[GATE_ATTR.digest] = verdict.current;
    if (verdict?.approved !== undefined) attributes[GATE_ATTR.approvedDigest] = verdict.approved;
    if (verdict?.current !== undefined && verdict.approved !== undefined)
      attributes[GATE_ATTR.digestMatch] = verdict.current === verdict.approved;
    const error = response && isErrorResponse(response) ? response.error : undefined;
    if (error) {
      attributes[MCP_ATTR.rpcStatus] = String(error.code);
      attributes[ATTR_ERROR_TYPE] = String(error.code);
      const reason = (error.data as Record<string, unknown> | undefined)?.reason;
      if (refused && typeof reason === 'string') attributes[GATE_ATTR.reason] = bounded(reason);
      span.setStatus({ code: SpanStatusCode.ERROR, message: bounded(error.message) });
    } else if (outcome !== 'ok') {
      // Timed out, cancelled, the server went away, or a tool's own failure (`isError`,
      // 2025-11-25 server/tools, "Error Handling"): no JSON-RPC error to name it by.
      attributes[ATTR_ERROR_TYPE] = outcome;
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.setAttributes(attributes);
    span.end();
  };

  /** A request the front refused (Origin, token, budgets, sessions): a span that says why. */
  refused(req: IncomingMessage, refusal: Refusal): void {
    const message = refusal.message;
    const request = message && isRequest(message) ? message : undefined;
    const span =
      (message as Spanned | undefined)?.[SPAN] ??
      this.#start(req, request?.method, request?.params, this.#parent(req, undefined), {});
    span.setAttributes({
      [GATE_ATTR.decision]: 'denied',
      [GATE_ATTR.reason]: bounded(refusal.reason),
      [GATE_ATTR.outcome]: 'refused',
      [ATTR_HTTP_RESPONSE_STATUS_CODE]: refusal.status,
      [ATTR_ERROR_TYPE]: String(refusal.status),
    });
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }

  /** The client's trace context: `_meta` first (it travels with the request), else headers. */
  #parent(req: IncomingMessage, meta: Record<string, unknown> | undefined): Context {
    if (meta && typeof meta[TRACEPARENT] === 'string') {
      const parent = this.#propagator.extract(ROOT_CONTEXT, meta, boundedGetter);
      if (trace.getSpanContext(parent)) return parent;
    }
    return this.#propagator.extract(ROOT_CONTEXT, req.headers, boundedGetter);
  }

  #start(
    req: IncomingMessage,
    method: string | undefined,
    params: Record<string, unknown> | undefined,
    parent: Context,
    more: Attributes,
  ): Span {
    const target = method ? targetOf(method, params) : undefined;
    const shownTarget = target === undefined ? undefined : clip(visible(target), TARGET_MAX);
    const attributes: Attributes = {
      ...more,
      [ATTR_NETWORK_TRANSPORT]: 'tcp',
      [ATTR_NETWORK_PROTOCOL_NAME]: 'http',
    };
    if (method !== undefined) attributes[MCP_ATTR.method] = clip(visible(method), TEXT_MAX);
    if (req.socket.remoteAddress) attributes[ATTR_CLIENT_ADDRESS] = req.socket.remoteAddress;
    const version = protocolVersionOf(req, params);
    if (version !== undefined) attributes[MCP_ATTR.protocolVersion] = bounded(version);
    const sessionId = req.headers[HEADER.sessionId];
    if (typeof sessionId === 'string') attributes[MCP_ATTR.sessionId] = opaqueSession(sessionId);
    if (shownTarget !== undefined) {
      if (method === 'tools/call') {
        attributes[MCP_ATTR.operation] = 'execute_tool';
        attributes[MCP_ATTR.toolName] = shownTarget;
      } else if (method === 'prompts/get') attributes[MCP_ATTR.promptName] = shownTarget;
      else if (method?.startsWith('resources/')) attributes[MCP_ATTR.resourceUri] = shownTarget;
    }
    // "{mcp.method.name} {target}", the target being a tool or prompt name; a URI would make
    // span names unbounded (semantic conventions for MCP, "Spans").
    const name = method === undefined ? 'mcp' : (attributes[MCP_ATTR.method] as string);
    const named = method === 'tools/call' || method === 'prompts/get';
    return this.#tracer.startSpan(
      named && shownTarget !== undefined ? `${name} ${shownTarget}` : name,
      { kind: SpanKind.SERVER, attributes },
      parent,
    );
  }
}

function protocolVersionOf(
  req: IncomingMessage,
  params: Record<string, unknown> | undefined,
): string | undefined {
  const header = req.headers[HEADER.protocolVersion];
  if (typeof header === 'string') return header;
  const meta = isRecord(params?._meta) ? params._meta : undefined;
  const inMeta = meta?.[META.protocolVersion];
  return typeof inMeta === 'string' ? inMeta : undefined;
}

function bounded(text: string): string {
  return clip(visible(text), TEXT_MAX);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
