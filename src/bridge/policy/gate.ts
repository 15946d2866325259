/**
 * Runtime enforcement of the approved tool set (`driftPolicy: Enforce`). The controller writes
 * the policy file into a ConfigMap mounted into the bridge; the bridge re-reads it when it
 * changes. A tool is visible in `tools/list` and callable with `tools/call` only when:
 *
 * - `allow` is absent or lists its name, and
 * - `approved` is absent or holds its name with the digest of its current definition (SHA-256
 *   over RFC 8785 canonical JSON, src/tools/digest.ts — the digest discovery records), and
 * - with OAuth, the caller's access token grants every scope `toolScopes` names for it, so
 *   `tools/list` shows each caller exactly the tools it may call (auth/oauth.ts).
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
 *
 * Prompts, resources and resource templates are screened by the same file and the same rules
 * (catalog-gate.ts); the hooks look at the method first, so any other message passes at the
 * cost of a comparison or two.
 */

import { toolDigest, type Digest, type ToolLike } from '../../tools/digest.ts';
import { UNFILTERED_LIST_META } from '../../mcp/metadata.ts';
import { ownValue } from '../../mcp/untrusted.ts';
import { errorResponse, WIRE, type JsonRpcError, type JsonRpcRequest } from '../../mcp/jsonrpc.ts';
import type { BridgePolicy } from '../../tools/policy.ts';
import type { Caller, Verdict } from '../identity.ts';
import type { Upstream, UpstreamHooks } from '../upstream.ts';
import { CatalogGate } from './catalog-gate.ts';
import { filterList, Listing, type ListingKind } from './listing.ts';
import { judgeApproval, type Denial, type DenialReason } from './denial.ts';

/** The scopes `tool` needs that `caller` lacks; none without OAuth (no caller). */
export function lackingScopes(
  policy: BridgePolicy | undefined,
  name: string,
  caller: Caller | undefined,
): string[] {
  if (!caller) return [];
  return (ownValue(policy?.toolScopes, name) ?? []).filter((scope) => !caller.scopes.has(scope));
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
  return judgeApproval(approved?.digest, digest, 'spec.tools.approved');
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

const TOOLS: ListingKind = {
  method: 'tools/list',
  field: 'tools',
  keyOf: (entry) => (isNamedTool(entry) ? entry.name : undefined),
  digestOf: (entry) => digestOrUndefined(entry as ToolLike),
};

/** Requests the policy screens; sent as notifications, they cannot be (see refuseUnscreenable). */
const SCREENED = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
  'resources/subscribe',
  'completion/complete',
]);

/** The policy filter for one upstream: the hooks it installs and the lists it keeps. */
export class PolicyGate {
  readonly #policy: () => BridgePolicy | undefined;
  readonly #onDenied: (reason: DenialReason) => void;
  readonly #tools: Listing;
  readonly #catalog: CatalogGate;

  constructor(
    policy: () => BridgePolicy | undefined,
    upstream: Upstream,
    onDenied: (reason: DenialReason) => void,
  ) {
    this.#policy = policy;
    this.#onDenied = onDenied;
    this.#tools = new Listing(upstream, TOOLS);
    this.#catalog = new CatalogGate({ policy, upstream, onDenied });
  }

  /** Each hook looks at the method first: other methods pass at the cost of one comparison. */
  hooks(): UpstreamHooks {
    return {
      screen: (request, caller, verdict) =>
        request.method === 'tools/call'
          ? this.#screenCall(request, caller, verdict)
          : this.#catalog.screen(request),
      screenNotification: (notification) =>
        SCREENED.has(notification.method)
          ? this.#refuseUnscreenable(notification.method)
          : undefined,
      transformResult: (method, result, params, caller) =>
        method === 'tools/list'
          ? filterList(
              this.#tools,
              result,
              !unfilteredAsked(params),
              (name, digest) =>
                decide(this.#policy(), name, digest, undefined, caller) === undefined,
            )
          : this.#catalog.filter(method, result, !unfilteredAsked(params)),
      observeNotification: (notification) => {
        if (notification.method === 'notifications/tools/list_changed') this.#tools.stale();
        else this.#catalog.observe(notification.method);
      },
    };
  }

  async #screenCall(
    request: JsonRpcRequest,
    caller: Caller | undefined,
    verdict: Verdict | undefined,
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
    await this.#tools.current(name);
    const policy = this.#policy();
    const digest = this.#tools.digest(name);
    if (verdict) {
      verdict.current = digest;
      verdict.approved = policy?.approved?.find((tool) => tool.name === name)?.digest;
    }
    const denial = decide(policy, name, digest, this.#tools.error, caller);
    if (!denial) return undefined;
    this.#onDenied(denial.reason);
    return errorResponse(
      request.id,
      WIRE.INVALID_PARAMS,
      `Tool ${JSON.stringify(name)} is refused by the bridge policy: ${denial.message}`,
      { reason: denial.reason, tool: name },
    );
  }

  #refuseUnscreenable(method: string): JsonRpcError {
    this.#onDenied('invalid-call');
    return errorResponse(
      null,
      WIRE.INVALID_REQUEST,
      `Invalid Request: ${method} must be a request (with an id), so the bridge policy can screen it`,
      { reason: 'invalid-call' },
    );
  }
}
