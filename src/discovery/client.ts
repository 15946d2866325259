/**
 * The discovery client: asks an MCP server over Streamable HTTP who it is and which tools it
 * has. It speaks revision 2026-07-28 first (`server/discover`, stateless, per-request `_meta`)
 * and falls back to the 2025-11-25 `initialize` handshake when the server answers like a
 * handshake-era one (2026-07-28 basic/transports/streamable-http §Backward Compatibility). It follows
 * `nextCursor` to the last page and bounds the whole run in time, bytes, pages and tools.
 *
 * Every failure is an OperatorError with a MCPOP_DISCOVERY_* code and a message that names
 * the server and what to check.
 */

import type { TSchema, Static } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import { MAX_TOOLS } from '../api/v1alpha1/tools.ts';
import { OperatorError, operatorError } from '../errors.ts';
import { WIRE, type JsonRpcErrorObject } from '../mcp/jsonrpc.ts';
import { type Finding, type ListedTool, keyedTools } from '../tools/findings.ts';
import { CATALOG, CATALOG_KINDS, type ListedItem, isKeyed } from '../tools/catalog-items.ts';
import type { Discovery } from '../tools/snapshot.ts';
import { HEADER, META, UNFILTERED_LIST_META } from '../mcp/metadata.ts';
import {
  HANDSHAKE_VERSIONS,
  LATEST_HANDSHAKE_VERSION,
  STATELESS_VERSION,
  SUPPORTED_VERSIONS,
} from '../mcp/versions.ts';
import {
  type Answer,
  type Channel,
  badResponse,
  deleteSession,
  displayUrl,
  openChannel,
  post,
} from './http.ts';
import {
  type Checker,
  type Implementation,
  DiscoverResultSchema,
  ErrorEnvelopeSchema,
  ImplementationSchema,
  InitializeResultSchema,
  ListResultSchema,
  ListToolsResultSchema,
  checker,
} from '../mcp/schemas.ts';
import { NAME_MAX, shown } from '../tools/text.ts';

/**
 * JSON-RPC codes by which a 2026-07-28 server identifies itself in a 4xx answer
 * (2026-07-28 basic/index §Error codes). Any other 4xx answer to the stateless probe means a
 * handshake-era server.
 */
const STATELESS_ERROR_CODES = new Set<number>([
  WIRE.HEADER_MISMATCH,
  WIRE.MISSING_REQUIRED_CLIENT_CAPABILITY,
  WIRE.UNSUPPORTED_PROTOCOL_VERSION,
]);

export const DISCOVERY_DEFAULTS = {
  timeoutMs: 30_000,
  /** Far above any real tool list, far below what would hurt the operator. */
  maxBytes: 8 * 1024 * 1024,
  maxPages: 100,
  /** As many as status and a baseline can hold. */
  maxTools: MAX_TOOLS,
  /** Closing the session is a courtesy; a server that hangs on DELETE gets this long. */
  closeTimeoutMs: 2000,
  clientInfo: { name: 'mcp-operator', version: '0.1.0' } as Implementation,
};

export interface DiscoveryOptions {
  /** The MCP endpoint, e.g. `http://name.ns.svc:8080/mcp`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /**
   * Sent in the DISCOVERY_TOKEN_HEADER header: proves to our bridge that this is discovery, so
   * that it lists every tool (UNFILTERED_LIST_META). Only for a stdio server under Enforce.
   */
  discoveryToken?: string | undefined;
  timeoutMs?: number | undefined;
  maxBytes?: number | undefined;
  maxPages?: number | undefined;
  maxTools?: number | undefined;
  closeTimeoutMs?: number | undefined;
  clientInfo?: Implementation | undefined;
  /** Aborting it ends discovery with MCPOP_DISCOVERY_CANCELLED. */
  signal?: AbortSignal | undefined;
  /** Opens the connections; the operator's checks every address it connects to (egress.ts). */
  dispatcher?: Dispatcher | undefined;
}

type Limits = typeof DISCOVERY_DEFAULTS;

/** Characters of a JSON-RPC error message that a status message shows. */
const RPC_MESSAGE_SHOWN = 200;

const DISCOVER_RESULT = checker(DiscoverResultSchema);
const INITIALIZE_RESULT = checker(InitializeResultSchema);
const LIST_TOOLS_RESULT = checker(ListToolsResultSchema);
const IMPLEMENTATION = checker(ImplementationSchema);
const ERROR_ENVELOPE = checker(ErrorEnvelopeSchema);

/** Sends one request and returns its result object, or throws the coded error. */
type Call = (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>;

export async function discover(options: DiscoveryOptions): Promise<Discovery> {
  const limits = withDefaults(options);
  const channel = openChannel({
    ...limits,
    url: checkedUrl(options.url),
    token: options.token,
    discoveryToken: options.discoveryToken,
    dispatcher: options.dispatcher,
  });
  try {
    if (channel.cancel?.aborted === true) {
      throw operatorError('MCPOP_DISCOVERY_CANCELLED', channel.displayUrl);
    }
    return (
      (await discoverStateless(channel, limits)) ?? (await discoverWithHandshake(channel, limits))
    );
  } finally {
    channel.close();
  }
}

function withDefaults(options: DiscoveryOptions): Limits & { signal: AbortSignal | undefined } {
  const limits: Limits = { ...DISCOVERY_DEFAULTS };
  for (const key of Object.keys(limits) as (keyof Limits)[]) {
    if (options[key] !== undefined) Object.assign(limits, { [key]: options[key] });
  }
  return { ...limits, signal: options.signal };
}

function checkedUrl(url: string): string {
  const parsed = URL.parse(url);
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw operatorError(
      'MCPOP_DISCOVERY_UNREACHABLE',
      '(the configured URL)',
      'not an http(s) URL',
    );
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw operatorError(
      'MCPOP_DISCOVERY_UNREACHABLE',
      `${parsed.origin}${parsed.pathname}`,
      'the URL carries credentials; give the token through spec.auth.secretRef instead',
    );
  }
  return url;
}

// --- 2026-07-28 -------------------------------------------------------------------------------

/**
 * The capabilities discovery declares, in the handshake and to a 2026-07-28 server: those agents
 * commonly declare. A server may list the tools that use them only to clients that declare them
 * (server-everything 2026.8.31 lists four more after `initialize`, 17 against 13: one for each
 * of roots and sampling, two for elicitation; bench/discovery-capabilities.ts), and discovery
 * must see every tool an agent can, or such tools could never be approved, and their drift
 * would go unseen.
 * Declaring them costs nothing: servers ask for input only within a tool call, and discovery
 * calls none; a `roots/list` a server sends on its own goes unanswered until discovery ends
 * the session moments later.
 */
export const DISCOVERY_CLIENT_CAPABILITIES = {
  roots: {},
  sampling: {},
  elicitation: { form: {}, url: {} },
};

/** Returns undefined when the server turns out to speak a handshake revision only. */
async function discoverStateless(channel: Channel, limits: Limits): Promise<Discovery | undefined> {
  const meta = {
    [META.protocolVersion]: STATELESS_VERSION,
    [META.clientInfo]: limits.clientInfo,
    [META.clientCapabilities]: DISCOVERY_CLIENT_CAPABILITIES,
  };
  const exchange = exchanger(channel, (method) => ({
    [HEADER.protocolVersion]: STATELESS_VERSION,
    // Standard request header, REQUIRED on every POST (streamable-http §Standard Request Headers).
    [HEADER.method]: method,
  }));
  const probe = await exchange('server/discover', { _meta: meta });
  if (isHandshakeServer(channel, probe.answer)) return undefined;
  const discovered = validated(
    channel,
    'server/discover',
    DISCOVER_RESULT,
    resultOf(channel, 'server/discover', probe.id, probe.answer),
  );
  if (!discovered.supportedVersions.includes(STATELESS_VERSION)) {
    if (discovered.supportedVersions.some((v) => HANDSHAKE_VERSIONS.includes(v))) return undefined;
    throw unsupportedVersion(channel, discovered.supportedVersions);
  }
  const call: Call = async (method, params) => {
    const own = params._meta as Record<string, unknown> | undefined;
    const { id, answer } = await exchange(method, { ...params, _meta: { ...own, ...meta } });
    return resultOf(channel, method, id, answer);
  };
  return {
    protocolVersion: STATELESS_VERSION,
    serverInfo: serverInfoFrom(discovered._meta),
    capabilities: discovered.capabilities,
    instructions: discovered.instructions,
    ...(hasTools(discovered.capabilities) ? await listTools(channel, limits, call) : NO_TOOLS),
    ...(await listCatalog(channel, limits, call, discovered.capabilities)),
  };
}

/**
 * Whether the answer to the stateless probe says "handshake server, use initialize": a 4xx or
 * a JSON-RPC error that is not one of the stateless revision's codes (an SDK 1.x server answers
 * 400 "Server not initialized"; a stateless one -32601). An UnsupportedProtocolVersion error
 * that offers a handshake revision also means fall back.
 */
function isHandshakeServer(channel: Channel, answer: Answer): boolean {
  if (answer.status === 401 || answer.status === 403) return false;
  const error = errorIn(answer.body);
  if (error?.code === WIRE.UNSUPPORTED_PROTOCOL_VERSION) {
    const supported = supportedVersionsIn(error.data);
    if (supported.some((v) => HANDSHAKE_VERSIONS.includes(v))) return true;
    throw unsupportedVersion(channel, supported);
  }
  if (error !== undefined && STATELESS_ERROR_CODES.has(error.code)) return false;
  if (answer.status >= 400 && answer.status < 500) return true;
  return answer.status < 300 && error !== undefined;
}

function supportedVersionsIn(data: unknown): string[] {
  const supported = (data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) ? supported.filter((v) => typeof v === 'string') : [];
}

function serverInfoFrom(meta: Record<string, unknown> | undefined): Implementation | undefined {
  const info = meta?.[META.serverInfo];
  return IMPLEMENTATION.check(info) ? info : undefined;
}

// --- 2025-11-25 and earlier -------------------------------------------------------------------

/** The initialize handshake (2025-11-25 basic/lifecycle), then tools/list in that session. */
async function discoverWithHandshake(channel: Channel, limits: Limits): Promise<Discovery> {
  const sessionHeaders: Record<string, string> = {};
  const exchange = exchanger(channel, () => sessionHeaders);
  const init = await exchange('initialize', {
    protocolVersion: LATEST_HANDSHAKE_VERSION,
    capabilities: DISCOVERY_CLIENT_CAPABILITIES,
    clientInfo: limits.clientInfo,
  });
  // 2025-11-25 §Session Management 1-2: a session id comes with the InitializeResult.
  const sessionId = init.answer.headers.get(HEADER.sessionId);
  if (sessionId !== null) sessionHeaders[HEADER.sessionId] = sessionId;
  try {
    const initialized = validated(
      channel,
      'initialize',
      INITIALIZE_RESULT,
      resultOf(channel, 'initialize', init.id, init.answer),
    );
    if (!HANDSHAKE_VERSIONS.includes(initialized.protocolVersion)) {
      throw unsupportedVersion(channel, [initialized.protocolVersion]);
    }
    // 2025-11-25 §Protocol Version Header: sent on every request after initialization.
    sessionHeaders[HEADER.protocolVersion] = initialized.protocolVersion;
    await notify(channel, 'notifications/initialized', sessionHeaders);
    const call: Call = async (method, params) => {
      const { id, answer } = await exchange(method, params);
      return resultOf(channel, method, id, answer);
    };
    return {
      protocolVersion: initialized.protocolVersion,
      serverInfo: initialized.serverInfo,
      capabilities: initialized.capabilities,
      instructions: initialized.instructions,
      ...(hasTools(initialized.capabilities) ? await listTools(channel, limits, call) : NO_TOOLS),
      ...(await listCatalog(channel, limits, call, initialized.capabilities)),
    };
  } finally {
    if (sessionId !== null) await deleteSession(channel, sessionHeaders, limits.closeTimeoutMs);
  }
}

async function notify(channel: Channel, method: string, headers: Record<string, string>) {
  const answer = await post(channel, method, { jsonrpc: '2.0', method }, headers);
  if (answer.status >= 300) throw statusError(channel, method, answer);
}

// --- tools/list -------------------------------------------------------------------------------

/**
 * Asks our bridge for every tool (prompt, resource, resource template), past its enforcement
 * policy: drift must see the drifted and unapproved entries the bridge hides from agents. The bridge honours it only with the discovery
 * token (DiscoveryOptions.discoveryToken). Other servers ignore a `_meta` key they do not know
 * (2025-11-25 basic §_meta).
 */
const UNFILTERED = { [UNFILTERED_LIST_META]: true };

/**
 * All pages of tools/list (2025-11-25 / 2026-07-28 server/utilities/pagination). A cursor the
 * server already gave is a loop; more than maxPages pages or maxTools tools ends the run.
 * Entries that cannot be recorded (no string name) become findings (src/tools/findings.ts).
 */
async function listTools(
  channel: Channel,
  limits: Limits,
  call: Call,
): Promise<{ tools: ListedTool[]; findings: Finding[] }> {
  const tools: ListedTool[] = [];
  const findings: Finding[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let listed = 0;
  for (let pages = 1; ; pages++) {
    if (pages > limits.maxPages) {
      throw endless(channel, `more than ${limits.maxPages} pages`);
    }
    const result = validated(
      channel,
      'tools/list',
      LIST_TOOLS_RESULT,
      await call('tools/list', { ...(cursor === undefined ? {} : { cursor }), _meta: UNFILTERED }),
    );
    if (result.resultType !== undefined && result.resultType !== 'complete') {
      throw badResponse(
        channel,
        'tools/list',
        `resultType '${shown(result.resultType, NAME_MAX)}' (discovery cannot supply input)`,
      );
    }
    const page = keyedTools(result.tools, listed);
    listed += result.tools.length;
    tools.push(...page.tools);
    findings.push(...page.findings);
    if (listed > limits.maxTools) {
      throw operatorError('MCPOP_DISCOVERY_TOO_MANY_TOOLS', channel.displayUrl, limits.maxTools);
    }
    cursor = result.nextCursor ?? undefined;
    if (cursor === undefined) return { tools, findings };
    if (seen.has(cursor)) {
      throw endless(channel, `the cursor "${shown(cursor, 80)}" came back on page ${pages}`);
    }
    seen.add(cursor);
  }
}

function endless(channel: Channel, reason: string) {
  return operatorError('MCPOP_DISCOVERY_ENDLESS_PAGES', channel.displayUrl, reason);
}

const NO_TOOLS = { tools: [], findings: [] };

// --- prompts/list, resources/list, resources/templates/list ------------------------------------

const LIST_RESULT = checker(ListResultSchema);

/**
 * Every item of each list whose capability the server declares (src/tools/catalog-items.ts), all
 * pages, with the bounds of tools/list. An entry without its key (a prompt's name, a
 * resource's uri) cannot be recorded and is dropped; a server that declares resources but
 * does not implement resources/templates/list (method not found) has no templates.
 */
async function listCatalog(
  channel: Channel,
  limits: Limits,
  call: Call,
  capabilities: Record<string, unknown>,
): Promise<Pick<Discovery, 'catalog' | 'catalogFindings'>> {
  const catalog: NonNullable<Discovery['catalog']> = {};
  const findings: Finding[] = [];
  for (const kind of CATALOG_KINDS) {
    const { method, capability, key, noun } = CATALOG[kind];
    if (capabilities[capability] === undefined || capabilities[capability] === null) continue;
    const items: ListedItem[] = [];
    let listed = 0;
    for await (const entries of pages(channel, limits, call, method, kind)) {
      entries.forEach((entry, i) => {
        if (isKeyed(kind, entry)) items.push(entry);
        else findings.push({ item: `${noun} #${listed + i}`, problem: `no string ${key}` });
      });
      listed += entries.length;
      if (listed > limits.maxTools) {
        throw operatorError('MCPOP_DISCOVERY_TOO_MANY_TOOLS', channel.displayUrl, limits.maxTools);
      }
    }
    catalog[kind] = items;
  }
  return { catalog, catalogFindings: findings };
}

async function* pages(
  channel: Channel,
  limits: Limits,
  call: Call,
  method: string,
  key: string,
): AsyncGenerator<unknown[]> {
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    if (page > limits.maxPages) throw endless(channel, `more than ${limits.maxPages} pages`);
    let answer: Record<string, unknown>;
    try {
      answer = await call(method, {
        ...(cursor === undefined ? {} : { cursor }),
        _meta: UNFILTERED,
      });
    } catch (error) {
      if (method === 'resources/templates/list' && isMethodNotFound(error)) return;
      throw error;
    }
    const result = validated(channel, method, LIST_RESULT, answer);
    const entries = (result as Record<string, unknown>)[key];
    if (!Array.isArray(entries)) {
      throw operatorError(
        'MCPOP_DISCOVERY_INVALID_RESULT',
        channel.displayUrl,
        method,
        `/${key}`,
        'Expected array',
      );
    }
    yield entries;
    cursor = result.nextCursor ?? undefined;
    if (cursor === undefined) return;
    if (seen.has(cursor)) {
      throw endless(channel, `the cursor "${shown(cursor, 80)}" came back on page ${page}`);
    }
    seen.add(cursor);
  }
}

/** The server's own JSON-RPC error -32601 (MCPOP_DISCOVERY_RPC_ERROR names the code it got). */
function isMethodNotFound(error: unknown): boolean {
  return (
    error instanceof OperatorError &&
    error.code === 'MCPOP_DISCOVERY_RPC_ERROR' &&
    error.message.includes(`error ${WIRE.METHOD_NOT_FOUND}:`)
  );
}

function hasTools(capabilities: Record<string, unknown>): boolean {
  // Only a server that declares the tools capability offers tools/list (server/tools §Capabilities).
  return capabilities.tools !== undefined && capabilities.tools !== null;
}

// --- JSON-RPC plumbing ------------------------------------------------------------------------

type Exchange = (
  method: string,
  params: Record<string, unknown>,
) => Promise<{ id: number; answer: Answer }>;

/** Numbers requests of one run and sends them with the headers `headersFor` gives. */
function exchanger(
  channel: Channel,
  headersFor: (method: string) => Record<string, string>,
): Exchange {
  let nextId = 1;
  return async (method, params) => {
    const id = nextId++;
    const answer = await post(
      channel,
      method,
      { jsonrpc: '2.0', id, method, params },
      headersFor(method),
    );
    return { id, answer };
  };
}

/** The result object of a response, or the coded error the answer amounts to. */
function resultOf(
  channel: Channel,
  method: string,
  id: number,
  answer: Answer,
): Record<string, unknown> {
  if (answer.status >= 300) throw statusError(channel, method, answer);
  const error = errorIn(answer.body);
  if (error !== undefined) {
    // The server's own answer to our request: worth showing, but only the start of it.
    throw operatorError(
      'MCPOP_DISCOVERY_RPC_ERROR',
      channel.displayUrl,
      method,
      error.code,
      shown(error.message, RPC_MESSAGE_SHOWN),
    );
  }
  const body = answer.body;
  if (!isRecord(body) || body.jsonrpc !== '2.0' || !('result' in body)) {
    throw badResponse(channel, method, 'not a JSON-RPC 2.0 response');
  }
  if (body.id !== id) {
    throw badResponse(
      channel,
      method,
      `response id ${shown(JSON.stringify(body.id) ?? 'undefined', 80)} is not the request id ${id}`,
    );
  }
  if (!isRecord(body.result)) {
    throw operatorError(
      'MCPOP_DISCOVERY_INVALID_RESULT',
      channel.displayUrl,
      method,
      '',
      'expected an object',
    );
  }
  return body.result;
}

/**
 * The error an HTTP status amounts to. The body of a failed request is never shown, only its
 * type and size: `spec.url` may point anywhere a tenant likes, and status would read the
 * answer back to them (docs/tenancy.md).
 */
function statusError(channel: Channel, method: string, answer: Answer) {
  const { status } = answer;
  if (status === 401 || status === 403) {
    return operatorError('MCPOP_DISCOVERY_UNAUTHORIZED', channel.displayUrl, status);
  }
  const location = answer.headers.get('location');
  if (status < 400 && location !== null) {
    const target = shown(displayUrl(URL.parse(location, channel.url) ?? location), 200);
    return operatorError('MCPOP_DISCOVERY_REDIRECT', channel.displayUrl, method, status, target);
  }
  const body = answer.bodyNote ?? 'no body';
  return operatorError('MCPOP_DISCOVERY_HTTP_STATUS', channel.displayUrl, method, status, body);
}

function errorIn(body: unknown): JsonRpcErrorObject | undefined {
  return ERROR_ENVELOPE.check(body) ? body.error : undefined;
}

function validated<T extends TSchema>(
  channel: Channel,
  method: string,
  schema: Checker<T>,
  value: unknown,
): Static<T> {
  if (schema.check(value)) return value;
  const { path, message } = schema.firstError(value);
  throw operatorError(
    'MCPOP_DISCOVERY_INVALID_RESULT',
    channel.displayUrl,
    method,
    shown(path, 200),
    message,
  );
}

function unsupportedVersion(channel: Channel, offered: readonly string[]) {
  return operatorError(
    'MCPOP_DISCOVERY_UNSUPPORTED_VERSION',
    channel.displayUrl,
    shown(offered.join(', '), 200) || 'none',
    SUPPORTED_VERSIONS.join(', '),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
