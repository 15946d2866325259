/**
 * The MCP endpoint: Streamable HTTP, revision 2025-11-25 (basic/transports). One path for
 * POST, GET and DELETE. Requests pass the guards in order (Origin, token or OAuth access token,
 * method, media types, body, JSON-RPC shape, the tool's scopes), then go to their session;
 * 2026-07-28 requests branch off to era-2026.ts.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Bound } from '../budget.ts';
import type { Logger } from 'pino';
import type { Auth, DiscoveryToken } from '../auth/bearer.ts';
import { BridgeClosingError, SessionLimitError, type SessionTable } from './session-table.ts';
import {
  accepts,
  BodyTooLarge,
  header,
  isJsonContent,
  originAllowed,
  OverBudget,
  readBody,
} from './guards.ts';
import { DISCOVERY_TOKEN_HEADER, HEADER, UNFILTERED_LIST_META } from '../../mcp/metadata.ts';
import { HANDSHAKE_VERSIONS } from '../../mcp/versions.ts';
import { MAX_NESTING_DEPTH, nestsDeeperThan, ownValue } from '../../mcp/untrusted.ts';
import {
  classify,
  isRequest,
  WIRE,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type RequestId,
} from '../../mcp/jsonrpc.ts';
import { replyEmpty, replyError } from '../replies.ts';
import type { ResourceServer } from '../auth/oauth.ts';
import {
  bearerChallenge,
  refusalReason,
  type Refusal,
  type RefusalReason,
} from '../auth/oauth-challenge.ts';
import type { Caller } from '../identity.ts';
import { lackingScopes } from '../policy/gate.ts';
import type { BridgePolicy } from '../../tools/policy.ts';
import { parseEventId } from './sse.ts';
import type { RequestObserver } from '../audit/observer.ts';

export interface EndpointContext {
  bridge: SessionTable;
  maxBodyBytes: number;
  allowedOrigins: readonly string[];
  auth: Auth | undefined;
  /** OAuth 2.1 access tokens, instead of `auth`; undefined: no OAuth. */
  oauth?: ResourceServer | undefined;
  /** Counts a request refused for its access token or the scopes of its tool. */
  oauthRefused?: (reason: RefusalReason) => void;
  /** The policy in force, for the scopes each tool needs; undefined: no policy file. */
  policy?: () => BridgePolicy | undefined;
  /** Who may list tools unfiltered (UNFILTERED_LIST_META); undefined: nobody. */
  discoveryToken?: DiscoveryToken | undefined;
  logger: Logger;
  /** False while shutting down: no new sessions. */
  accepting: () => boolean;
  /** Handles a request of a 2026-07-28 client; undefined: such requests are refused. */
  era2026?: Era2026Handler;
  /** Hears of gated requests and refusals (audit events, spans); undefined: nothing records them. */
  audit?: RequestObserver | undefined;
}

export interface Era2026Handler {
  /** Whether this POST speaks 2026-07-28 (no session, version in header or `_meta`). */
  claims(req: IncomingMessage, message: JsonRpcMessage): boolean;
  /** `bytes`: the size of the body, held by the bridge's budget until this returns. */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    message: JsonRpcMessage,
    bytes: number,
    caller: Caller | undefined,
  ): Promise<void>;
}

type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller | undefined,
) => Promise<void> | void;

/**
 * The endpoint's handler. Synchronous up to the first wait (an access token to check, a body to
 * read): it runs for every request, and each async step costs a promise and a suspended frame.
 */
export function mcpEndpoint(
  ctx: EndpointContext,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> | void {
  const methods: Record<string, Handler> = {
    POST: (req, res, caller) => post(ctx, req, res, caller),
    GET: (req, res, caller) => get(ctx, req, res, caller),
    DELETE: (req, res, caller) => remove(ctx, req, res, caller),
  };
  const dispatch = (req: IncomingMessage, res: ServerResponse, caller: Caller | undefined) => {
    const verdict = ctx.auth?.check(header(req, 'authorization')) ?? 'ok';
    if (verdict === 'denied') {
      ctx.audit?.refused(req, { status: 401, reason: 'unauthorized' });
      return replyError(
        res,
        401,
        WIRE.SERVER_ERROR,
        'Unauthorized: a valid bearer token is required',
        {
          headers: { 'www-authenticate': 'Bearer' },
        },
      );
    }
    if (verdict === 'unavailable') {
      ctx.audit?.refused(req, { status: 503, reason: 'token_unavailable' });
      return replyError(res, 503, WIRE.SERVER_ERROR, 'The bridge cannot read its token file');
    }
    const handler = methods[req.method ?? ''];
    if (!handler) {
      return replyError(res, 405, WIRE.SERVER_ERROR, 'Method not allowed', {
        headers: { allow: 'GET, POST, DELETE' },
      });
    }
    return handler(req, res, caller);
  };
  const authenticated = async (
    oauth: ResourceServer,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const outcome = await oauth.authenticate(header(req, 'authorization'));
    if ('refusal' in outcome) return refuseAccess(ctx, oauth, req, res, outcome.refusal);
    await dispatch(req, res, outcome.caller);
  };
  return (req, res) => {
    if (!originAllowed(header(req, 'origin'), ctx.allowedOrigins)) {
      ctx.audit?.refused(req, { status: 403, reason: 'foreign_origin' });
      return replyError(res, 403, WIRE.SERVER_ERROR, 'Forbidden: this Origin is not allowed');
    }
    if (ctx.oauth) return authenticated(ctx.oauth, req, res);
    return dispatch(req, res, undefined);
  };
}

/** An OAuth refusal: its status with the challenge (RFC 6750 section 3, RFC 9728 section 5.1). */
function refuseAccess(
  ctx: EndpointContext,
  oauth: ResourceServer,
  req: IncomingMessage,
  res: ServerResponse,
  refusal: Refusal,
  id: RequestId | null = null,
  audited: { message: JsonRpcMessage; caller: Caller | undefined } | undefined = undefined,
): void {
  const reason = refusalReason(refusal);
  ctx.oauthRefused?.(reason);
  ctx.audit?.refused(req, { status: refusal.status, reason, caller: refusal.caller, ...audited });
  const headers: Record<string, string | number> = {
    'www-authenticate': bearerChallenge(oauth.options, refusal),
  };
  if (refusal.status === 503) headers['retry-after'] = 5;
  const prefix = refusal.status === 403 ? 'Forbidden' : 'Unauthorized';
  replyError(res, refusal.status, WIRE.SERVER_ERROR, `${prefix}: ${refusal.description}`, {
    id,
    headers,
  });
}

async function post(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller | undefined,
): Promise<void> {
  if (!isJsonContent(req)) {
    return replyError(
      res,
      415,
      WIRE.SERVER_ERROR,
      'Unsupported Media Type: Content-Type must be application/json',
    );
  }
  if (!accepts(req, 'application/json', 'text/event-stream')) {
    return replyError(
      res,
      406,
      WIRE.SERVER_ERROR,
      'Not Acceptable: Accept must list application/json and text/event-stream',
    );
  }
  // The body counts against the budget from its first byte until it is handed on.
  const sessionId = header(req, HEADER.sessionId);
  const account =
    (sessionId === undefined ? undefined : ctx.bridge.session(sessionId)?.account) ??
    ctx.bridge.budget.account();
  let body: Buffer;
  try {
    body = await readBody(req, ctx.maxBodyBytes, account);
  } catch (error) {
    refuseBody(ctx, req, res, error);
    return;
  }
  // Given back in the same synchronous step in which a session's message is handed on, so no
  // other body is admitted while it counts twice (budget.ts); later when routing has to wait.
  let routing: Promise<void> | undefined;
  try {
    const message = parseMessage(body, res);
    routing = message && route(ctx, req, res, message, body.length, caller);
  } finally {
    if (!routing) account.give(body.length);
  }
  if (routing) await routing.finally(() => account.give(body.length));
}

/** Hands the message on; a promise when that has to wait (a new session, 2026-07-28). */
function route(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  message: JsonRpcMessage,
  bytes: number,
  caller: Caller | undefined,
): Promise<void> | undefined {
  dropUnprovenUnfiltered(ctx, req, message);
  ctx.audit?.arrived(req, message);
  if (ctx.oauth && lacksToolScope(ctx, ctx.oauth, req, res, message, caller)) return undefined;
  if (ctx.era2026?.claims(req, message))
    return ctx.era2026.handle(req, res, message, bytes, caller);

  if (isRequest(message) && message.method === 'initialize')
    return initialize(ctx, req, res, message, bytes, caller);
  const session = findSession(ctx, req, res, caller, message);
  if (!session) return undefined;
  if (isRequest(message)) {
    session.request(message, res, bytes, caller);
    return undefined;
  }
  const refusal = session.post(message);
  if (!refusal) {
    replyEmpty(res, 202, session.headers);
    return undefined;
  }
  const { code, message: text, data } = refusal.error;
  replyError(res, 400, code, text, { data, headers: session.headers });
  return undefined;
}

/**
 * A tools/call for a tool whose scopes (policy `toolScopes`) the caller's token lacks gets 403
 * `insufficient_scope` naming what the call needs (2025-11-25 basic/authorization, "Scope
 * Challenge Handling": the scopes in force and the new ones, so a step-up keeps both). True
 * when refused. The policy gate refuses such calls too; this answer lets a client step up.
 */
function lacksToolScope(
  ctx: EndpointContext,
  oauth: ResourceServer,
  req: IncomingMessage,
  res: ServerResponse,
  message: JsonRpcMessage,
  caller: Caller | undefined,
): boolean {
  if (!isRequest(message) || message.method !== 'tools/call') return false;
  const name = message.params?.name;
  if (typeof name !== 'string') return false;
  const policy = ctx.policy?.();
  const lacking = lackingScopes(policy, name, caller);
  if (lacking.length === 0) return false;
  const scope = [
    ...new Set([...oauth.options.scopes, ...(ownValue(policy?.toolScopes, name) ?? [])]),
  ];
  const refusal: Refusal = {
    status: 403,
    error: 'insufficient_scope',
    description: `the tool ${name} needs the scope ${lacking.join(' ')}`,
    scope: scope.join(' '),
  };
  refuseAccess(ctx, oauth, req, res, refusal, message.id, { message, caller });
  return true;
}

/**
 * Removes UNFILTERED_LIST_META from a request that does not prove, with the discovery token, to
 * come from discovery: without it the policy filters the list as for any agent. Silently, so a
 * client learns nothing about the token from the answer.
 */
function dropUnprovenUnfiltered(
  ctx: EndpointContext,
  req: IncomingMessage,
  message: JsonRpcMessage,
): void {
  if (!isRequest(message)) return;
  const meta = message.params?._meta;
  if (typeof meta !== 'object' || meta === null || !Object.hasOwn(meta, UNFILTERED_LIST_META))
    return;
  const presented = header(req, DISCOVERY_TOKEN_HEADER.toLowerCase());
  if (ctx.discoveryToken?.matches(presented) === true) return;
  delete (meta as Record<string, unknown>)[UNFILTERED_LIST_META];
}

/** The error answer to a body readBody refused; anything else is thrown on. */
function refuseBody(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  error: unknown,
): void {
  if (error instanceof OverBudget) {
    ctx.audit?.refused(req, OVER_BUDGET[error.bound]);
    return replyOverBudget(ctx.bridge, res, error.bound);
  }
  if (!(error instanceof BodyTooLarge)) throw error;
  res.setHeader('connection', 'close');
  replyError(res, 413, WIRE.INVALID_REQUEST, `Request body larger than ${ctx.maxBodyBytes} bytes`);
}

/** The status and the audit reason of a refusal by each bound of the byte budget. */
export const OVER_BUDGET = {
  session: { status: 429, reason: 'session_bytes' },
  bridge: { status: 503, reason: 'bridge_bytes' },
} as const satisfies Record<Bound, { status: number; reason: string }>;

/**
 * 429 when the session has too much waiting for its child: that client should slow down. 503
 * when all sessions together have: the bridge is overloaded (RFC 9110 15.6.4, RFC 6585 4).
 */
export function replyOverBudget(bridge: SessionTable, res: ServerResponse, bound: Bound): void {
  const { limits } = bridge.budget;
  bridge.countRefusal(bound === 'session' ? 'session_bytes' : 'bridge_bytes');
  const [where, limit] =
    bound === 'session'
      ? ['the MCP server in this session', limits.session]
      : ['the MCP servers of this bridge', limits.bridge];
  replyError(
    res,
    OVER_BUDGET[bound].status,
    WIRE.SERVER_ERROR,
    `Too much is waiting for ${where} (limit ${limit} bytes); retry later`,
    { headers: { 'retry-after': 1 } },
  );
}

/** The body as one JSON-RPC message, or an error answer and undefined. */
function parseMessage(body: Buffer, res: ServerResponse): JsonRpcMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    replyError(res, 400, WIRE.PARSE_ERROR, 'Parse error: the body is not valid JSON');
    return undefined;
  }
  if (nestsDeeperThan(body)) {
    // Serializing it again, for the child or a digest, would throw (untrusted.ts).
    const id = (value as { id?: unknown }).id;
    replyError(
      res,
      400,
      WIRE.INVALID_REQUEST,
      `Invalid Request: the body is nested deeper than ${MAX_NESTING_DEPTH} levels`,
      typeof id === 'string' || typeof id === 'number' ? { id } : {},
    );
    return undefined;
  }
  if (Array.isArray(value)) {
    // JSON-RPC batching was removed from MCP in revision 2025-06-18.
    replyError(
      res,
      400,
      WIRE.INVALID_REQUEST,
      'Invalid Request: batches are not supported; send one message per POST',
    );
    return undefined;
  }
  if (classify(value) === undefined) {
    replyError(
      res,
      400,
      WIRE.INVALID_REQUEST,
      'Invalid Request: the body is not a JSON-RPC 2.0 message',
    );
    return undefined;
  }
  return value as JsonRpcMessage;
}

async function initialize(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  message: JsonRpcRequest,
  bytes: number,
  caller: Caller | undefined,
): Promise<void> {
  if (header(req, HEADER.sessionId) !== undefined) {
    return replyError(
      res,
      400,
      WIRE.INVALID_REQUEST,
      'Bad Request: initialize starts a session and must not carry Mcp-Session-Id',
      { id: message.id },
    );
  }
  const shuttingDown = () =>
    replyError(res, 503, WIRE.SERVER_ERROR, 'The bridge is shutting down', { id: message.id });
  if (!ctx.accepting()) return shuttingDown();
  let session;
  try {
    session = await ctx.bridge.openSession();
  } catch (error) {
    if (error instanceof BridgeClosingError) return shuttingDown();
    if (error instanceof SessionLimitError) {
      const limit = ctx.bridge.config.maxSessions;
      ctx.audit?.refused(req, { status: 503, reason: 'max_sessions', message, caller });
      return replyError(
        res,
        503,
        WIRE.SERVER_ERROR,
        `Too many sessions: the limit of ${limit} is reached; end idle sessions or retry later`,
        {
          id: message.id,
          headers: { 'retry-after': 5 },
        },
      );
    }
    ctx.logger.error({ err: error }, 'cannot start an MCP server for a new session');
    return replyError(res, 503, WIRE.SERVER_ERROR, 'The MCP server could not be started', {
      id: message.id,
    });
  }
  ctx.logger.info({ session: session.logId }, 'session started');
  if (ctx.oauth) session.owner = caller?.subject;
  session.request(message, res, bytes, caller);
}

/**
 * The session a request names: 400 without a session id, 404 for an unknown one, and with
 * OAuth for one another subject opened (the id alone proves nothing: it may have leaked).
 * `message`: the POSTed message, for the audit event of a refusal.
 */
function findSession(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller | undefined,
  message?: JsonRpcMessage,
) {
  const version = header(req, HEADER.protocolVersion);
  // Without the header the server SHOULD assume 2025-03-26; an unknown one is a 400.
  if (version !== undefined && !HANDSHAKE_VERSIONS.includes(version)) {
    replyError(
      res,
      400,
      WIRE.SERVER_ERROR,
      `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(version)}`,
      {
        data: { supported: HANDSHAKE_VERSIONS },
      },
    );
    return undefined;
  }
  const id = header(req, HEADER.sessionId);
  if (id === undefined) {
    replyError(res, 400, WIRE.SERVER_ERROR, 'Bad Request: Mcp-Session-Id header is required');
    return undefined;
  }
  const session = ctx.bridge.session(id);
  if (!session || (ctx.oauth && session.owner !== caller?.subject)) {
    ctx.audit?.refused(req, {
      status: 404,
      reason: 'unknown_session',
      caller,
      ...(message && { message }),
    });
    replyError(
      res,
      404,
      WIRE.SERVER_ERROR,
      'Session not found: it ended or never existed; initialize a new one',
    );
    return undefined;
  }
  session.touch();
  return session;
}

function get(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller | undefined,
): void {
  if (!accepts(req, 'text/event-stream')) {
    return replyError(
      res,
      406,
      WIRE.SERVER_ERROR,
      'Not Acceptable: Accept must list text/event-stream',
    );
  }
  const session = findSession(ctx, req, res, caller);
  if (!session) return;
  const lastEventId = header(req, HEADER.lastEventId);
  if (lastEventId === undefined) {
    if (session.openGetStream(res) === 'busy') {
      replyError(
        res,
        409,
        WIRE.SERVER_ERROR,
        'Conflict: this session already has a GET stream open',
      );
    }
    return;
  }
  const position = parseEventId(lastEventId);
  const outcome = position ? session.resume(position.stream, position.seq, res) : 'unknown';
  if (outcome === 'unknown') {
    replyError(
      res,
      400,
      WIRE.SERVER_ERROR,
      'Bad Request: Last-Event-ID names no stream of this session',
    );
  }
}

function remove(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller | undefined,
): void {
  const session = findSession(ctx, req, res, caller);
  if (!session) return;
  session.end('the client ended the session');
  replyEmpty(res, 204);
}
