/**
 * Runtime enforcement of the approved tool set (`driftPolicy: Enforce`). The controller writes
 * the policy file into a ConfigMap mounted into the bridge; the bridge re-reads it when it
 * changes. A tool is visible in `tools/list` and callable with `tools/call` only when:
 *
 * - `allow` is absent or lists its name, and
 * - `approved` is absent or holds its name with the digest of its current definition (SHA-256
 *   over RFC 8785 canonical JSON, src/tools/digest.ts — the digest discovery records), and
 * - with OAuth, the caller's access token grants every scope `toolScopes` names for it, so
 *   `tools/list` shows each caller exactly the tools it may call (oauth.ts).
 *
 * A tools/list request with `_meta["mcp-operator.dev/unfiltered"]: true` (UNFILTERED_LIST_META)
 * gets every tool: that is how discovery sees drifted tools to report them. The endpoint keeps
 * the key only on a request that carries the discovery token (endpoint.ts); from any other
 * client it is dropped before it gets here. It changes only what that requester reads; calls
 * are screened all the same.
 *
 * `tools/call` is checked against the child's current tool list, not against what a client
 * claims: the bridge lists the tools itself when it has no fresh list (at first, and after the
 * child announced `notifications/tools/list_changed`), so a changed description ("rug pull")
 * is refused even for a client that never listed tools.
 *
 * The gate fails closed: a call it cannot check is refused, never passed on for the child to
 * judge. That covers a `name` that is not a string (a child may coerce `["x"]` to `"x"`), a
 * `tools/call` sent as a notification (a careless child may run it all the same), and a child
 * whose tool list cannot be read (the last list may describe tools that have changed since).
 */

import { toolDigest, type Digest, type ToolLike } from '../tools/digest.ts';
import { UNFILTERED_LIST_META } from '../mcp/metadata.ts';
import {
  errorResponse,
  isErrorResponse,
  WIRE,
  type JsonRpcError,
  type JsonRpcRequest,
} from '../mcp/jsonrpc.ts';
import type { BridgePolicy } from '../tools/policy.ts';
import type { Upstream, UpstreamHooks } from './upstream.ts';

export type DenialReason =
  | 'policy-unavailable'
  | 'invalid-call'
  | 'not-allowed'
  | 'not-approved'
  | 'drifted'
  | 'unknown-tool'
  | 'unverifiable'
  | 'insufficient-scope';

/** Who sent a request, as its OAuth access token proves (oauth.ts): what it was granted. */
export interface Caller {
  scopes: ReadonlySet<string>;
}

/** The scopes `tool` needs that `caller` lacks; none without OAuth (no caller). */
export function lackingScopes(
  policy: BridgePolicy | undefined,
  name: string,
  caller: Caller | undefined,
): string[] {
  if (!caller) return [];
  return (policy?.toolScopes?.[name] ?? []).filter((scope) => !caller.scopes.has(scope));
}

export interface Denial {
  reason: DenialReason;
  message: string;
}

/**
 * Whether a tool may be shown and called. `digest` is its current digest, undefined when the
 * child does not list it; `policy` undefined means a policy is configured but not loaded;
 * `listError` says why the child's tool list could not be read, if it could not; `caller` is
 * who asks, undefined without OAuth.
 */
export function decide(
  policy: BridgePolicy | undefined,
  name: string,
  digest: Digest | undefined,
  listError?: string,
  caller?: Caller,
): Denial | undefined {
  if (!policy)
    return { reason: 'policy-unavailable', message: 'the bridge has no valid policy file loaded' };
  if (policy.allow && !policy.allow.includes(name)) {
    return { reason: 'not-allowed', message: 'it is not in the allowlist (spec.tools.allow)' };
  }
  const lacking = lackingScopes(policy, name, caller);
  if (lacking.length > 0) {
    const message = `the access token lacks the scope ${lacking.join(' ')}`;
    return { reason: 'insufficient-scope', message };
  }
  if (digest === undefined && listError !== undefined) {
    const message = `the MCP server's tool list could not be read (${listError})`;
    return { reason: 'unverifiable', message };
  }
  if (digest === undefined)
    return { reason: 'unknown-tool', message: 'the MCP server does not list it' };
  if (!policy.approved) return undefined;
  const approved = policy.approved.find((tool) => tool.name === name);
  if (!approved)
    return { reason: 'not-approved', message: 'it is not approved (spec.tools.approved)' };
  if (approved.digest !== digest) {
    return {
      reason: 'drifted',
      message: `its definition changed since it was approved (approved ${approved.digest}, now ${digest})`,
    };
  }
  return undefined;
}

/** Whether a tools/list request asked for every tool (discovery: see UNFILTERED_LIST_META). */
function unfilteredAsked(params: Record<string, unknown> | undefined): boolean {
  const meta = params?._meta as Record<string, unknown> | undefined;
  return meta?.[UNFILTERED_LIST_META] === true;
}

/** A listed tool the policy can name: an object with a string name. Others are never shown. */
function isNamedTool(tool: unknown): tool is ToolLike {
  return typeof tool === 'object' && tool !== null && typeof (tool as ToolLike).name === 'string';
}

function digestOrUndefined(tool: ToolLike): Digest | undefined {
  try {
    return toolDigest(tool);
  } catch {
    return undefined; // not canonicalizable: it can never match an approval
  }
}

/** Most pages the bridge reads when it lists tools itself. */
const MAX_PAGES = 100;

/** The policy filter for one upstream: the hooks it installs and the tool list it keeps. */
export class PolicyGate {
  readonly #policy: () => BridgePolicy | undefined;
  readonly #upstream: Upstream;
  readonly #onDenied: (reason: DenialReason) => void;
  /** Name → current digest, as last listed by the child. */
  readonly #digests = new Map<string, Digest | undefined>();
  #fresh = false;
  /** Why the bridge's own last listing failed (code and message of the child's error). */
  #listError: string | undefined;
  #refreshing: Promise<void> | undefined;

  constructor(
    policy: () => BridgePolicy | undefined,
    upstream: Upstream,
    onDenied: (reason: DenialReason) => void,
  ) {
    this.#policy = policy;
    this.#upstream = upstream;
    this.#onDenied = onDenied;
  }

  hooks(): UpstreamHooks {
    return {
      screen: (request, caller) =>
        request.method === 'tools/call' ? this.#screenCall(request, caller) : undefined,
      screenNotification: (notification) =>
        notification.method === 'tools/call' ? this.#refuseUnscreenable() : undefined,
      transformResult: (method, result, params, caller) =>
        method === 'tools/list'
          ? this.#filterList(result, !unfilteredAsked(params), caller)
          : result,
      observeNotification: (notification) => {
        if (notification.method === 'notifications/tools/list_changed') this.#fresh = false;
      },
    };
  }

  /**
   * Records every listed tool's digest; drops the refused ones (and entries that are not tools
   * at all) unless `filter` is false.
   */
  #filterList(
    result: Record<string, unknown>,
    filter: boolean,
    caller: Caller | undefined,
  ): Record<string, unknown> {
    if (!Array.isArray(result.tools)) return filter ? { ...result, tools: [] } : result;
    const tools = (result.tools as unknown[]).filter((tool) => {
      if (!isNamedTool(tool)) return !filter;
      const digest = digestOrUndefined(tool);
      this.#digests.set(tool.name, digest);
      return !filter || decide(this.#policy(), tool.name, digest, undefined, caller) === undefined;
    });
    return { ...result, tools };
  }

  async #screenCall(
    request: JsonRpcRequest,
    caller: Caller | undefined,
  ): Promise<JsonRpcError | undefined> {
    const name = request.params?.name;
    if (typeof name !== 'string') {
      this.#onDenied('invalid-call');
      return errorResponse(
        request.id,
        WIRE.INVALID_PARAMS,
        'Tool call refused by the bridge policy: params.name must be a string',
        { reason: 'invalid-call' },
      );
    }
    if (!this.#fresh || !this.#digests.has(name)) await this.#refresh();
    const denial = decide(this.#policy(), name, this.#digests.get(name), this.#listError, caller);
    if (!denial) return undefined;
    this.#onDenied(denial.reason);
    return errorResponse(
      request.id,
      WIRE.INVALID_PARAMS,
      `Tool ${JSON.stringify(name)} is refused by the bridge policy: ${denial.message}`,
      { reason: denial.reason, tool: name },
    );
  }

  #refuseUnscreenable(): JsonRpcError {
    this.#onDenied('invalid-call');
    return errorResponse(
      null,
      WIRE.INVALID_REQUEST,
      'Invalid Request: tools/call must be a request (with an id), so the bridge policy can screen it',
      { reason: 'invalid-call' },
    );
  }

  /**
   * Lists every tool of the child (all pages) and records their digests. When the child answers
   * with an error, the old digests are dropped: they may describe tools that changed since.
   */
  #refresh(): Promise<void> {
    this.#refreshing ??= this.#listAll().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  async #listAll(): Promise<void> {
    const digests = new Map<string, Digest | undefined>();
    let cursor: unknown;
    for (let page = 0; page < MAX_PAGES; page++) {
      const response = await this.#upstream.request(
        'tools/list',
        cursor === undefined ? {} : { cursor },
      );
      if (isErrorResponse(response)) {
        this.#digests.clear();
        this.#listError = `${response.error.code} ${response.error.message}`;
        return;
      }
      const tools: unknown[] = Array.isArray(response.result.tools) ? response.result.tools : [];
      for (const tool of tools.filter(isNamedTool)) digests.set(tool.name, digestOrUndefined(tool));
      cursor = response.result.nextCursor;
      if (typeof cursor !== 'string') break;
    }
    this.#digests.clear();
    for (const [name, digest] of digests) this.#digests.set(name, digest);
    this.#listError = undefined;
    this.#fresh = true;
  }
}
