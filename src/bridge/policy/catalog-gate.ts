/**
 * Enforcement for prompts, resources and resource templates (`driftPolicy: Enforce`): model-facing
 * text as much as tools (src/tools/catalog-items.ts), screened by the same policy file and the same
 * rules as tools (gate.ts). A kind is screened when the policy lists its approved items
 * (`prompts`, `resources`, `resourceTemplates`); a kind it leaves out passes, as drift does not
 * compare it either.
 *
 * - `prompts/list` shows only approved prompts whose digest is unchanged; `prompts/get` of any
 *   other is refused.
 * - `resources/list` and `resources/templates/list` show only approved, unchanged entries.
 * - `resources/read` of a URI the child lists as a resource is judged as that resource. Any other
 *   URI (a template's expansion, or one nobody lists) is read only when an approved, unchanged
 *   template matches it (RFC 6570, src/mcp/uri-template.ts), if templates are screened: a URI
 *   that matches only hidden templates, or none, is refused. `resources/subscribe` is judged as
 *   a read of its URI: updates of a resource carry what reading it would.
 * - `completion/complete` (2025-11-25 server/utilities/completion) completes the arguments of a
 *   prompt or of a resource template, and its suggestions reach the model as the prompt's text
 *   would: a `ref/prompt` is judged as `prompts/get` of that prompt, a `ref/resource` naming a
 *   listed template as that template, any other `ref/resource` URI as a read of it.
 *
 * As for tools, every check reads the child's current lists (the bridge lists them itself when
 * it has no fresh list, and again after `notifications/prompts/list_changed` or
 * `notifications/resources/list_changed`), and fails closed: a request it cannot check is refused.
 */

import { compileUriTemplate } from '../../mcp/uri-template.ts';
import { ownValue } from '../../mcp/untrusted.ts';
import { errorResponse, WIRE, type JsonRpcError, type JsonRpcRequest } from '../../mcp/jsonrpc.ts';
import { CATALOG, isKeyed, itemDigest, type CatalogKind } from '../../tools/catalog-items.ts';
import type { Digest } from '../../tools/digest.ts';
import type { BridgePolicy } from '../../tools/policy.ts';
import { judgeApproval, type Denial, type DenialReason } from './denial.ts';
import { filterList, Listing, type ListingKind } from './listing.ts';
import type { Upstream } from '../upstream.ts';

function listingKind(kind: CatalogKind): ListingKind {
  const { method, key } = CATALOG[kind];
  return {
    method,
    field: kind,
    keyOf: (entry) => (isKeyed(kind, entry) ? (entry[key] as string) : undefined),
    digestOf: (entry) => {
      try {
        return itemDigest(kind, entry as Record<string, unknown>);
      } catch {
        return undefined; // not canonicalizable: it can never match an approval
      }
    },
    // A server may declare resources without templates (as discovery reads it, too).
    optional: kind === 'resourceTemplates',
  };
}

const KIND_OF_LIST: Readonly<Record<string, CatalogKind>> = {
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
};

/** The digest the policy approves `key` of `kind` with; undefined: not approved. */
function policyDigest(policy: BridgePolicy, kind: CatalogKind, key: string): string | undefined {
  const field = CATALOG[kind].key;
  return policy[kind]?.find((item) => item[field] === key)?.digest;
}

/**
 * Whether an item of `kind` may be shown and used. `digest` is its current digest (undefined: not
 * listed, or not canonicalizable); `listed` whether the child lists it; `listError` why the list
 * could not be read; `policy` undefined means a policy is configured but not loaded.
 */
export function decideItem(
  policy: BridgePolicy | undefined,
  kind: CatalogKind,
  key: string,
  current: { listed: boolean; digest: Digest | undefined; listError?: string | undefined },
): Denial | undefined {
  if (!policy)
    return { reason: 'policy-unavailable', message: 'the bridge has no valid policy file loaded' };
  if (policy[kind] === undefined) return undefined;
  if (!current.listed && current.listError !== undefined)
    return unverifiable(kind, current.listError);
  if (!current.listed) return { reason: 'unlisted', message: 'the MCP server does not list it' };
  const approved = policyDigest(policy, kind, key);
  return judgeApproval(approved, current.digest, `spec.tools.approved.${kind}`);
}

function unverifiable(kind: CatalogKind, listError: string): Denial {
  const message = `the MCP server's ${CATALOG[kind].noun} list could not be read (${listError})`;
  return { reason: 'unverifiable', message };
}

export interface CatalogGateParts {
  policy: () => BridgePolicy | undefined;
  upstream: Upstream;
  onDenied: (reason: DenialReason) => void;
}

export class CatalogGate {
  readonly #policy: () => BridgePolicy | undefined;
  readonly #onDenied: (reason: DenialReason) => void;
  readonly #listings: Record<CatalogKind, Listing>;

  /** The policy gate's parts (gate.ts): the policy in force, the child, the denial counter. */
  constructor({ policy, upstream, onDenied }: CatalogGateParts) {
    this.#policy = policy;
    this.#onDenied = onDenied;
    this.#listings = {
      prompts: new Listing(upstream, listingKind('prompts')),
      resources: new Listing(upstream, listingKind('resources')),
      resourceTemplates: new Listing(upstream, listingKind('resourceTemplates')),
    };
  }

  /** A client request: a refusal for a use of a prompt or resource the policy does not allow. */
  screen(request: JsonRpcRequest): Promise<JsonRpcError | undefined> | undefined {
    switch (request.method) {
      case 'prompts/get':
        return this.#screenPrompt(request, request.params?.name, 'Prompt', 'params.name');
      case 'resources/read':
        return this.#screenRead(request, request.params?.uri, 'Resource read', 'params.uri');
      case 'resources/subscribe':
        return this.#screenRead(
          request,
          request.params?.uri,
          'Resource subscription',
          'params.uri',
        );
      case 'completion/complete':
        return this.#screenCompletion(request);
      default:
        return undefined;
    }
  }

  /** A list result of one of the kinds, its refused entries left out unless `filter` is false. */
  filter(
    method: string,
    result: Record<string, unknown>,
    filter: boolean,
  ): Record<string, unknown> {
    const kind = ownValue(KIND_OF_LIST, method);
    if (kind === undefined) return result;
    const policy = this.#policy();
    if (policy !== undefined && policy[kind] === undefined) return result;
    return filterList(this.#listings[kind], result, filter, (key, digest) => {
      const current = { listed: true, digest };
      return decideItem(policy, kind, key, current) === undefined;
    });
  }

  /** A notification from the child: a changed list is read again before the next check. */
  observe(method: string): void {
    if (method === 'notifications/prompts/list_changed') this.#listings.prompts.stale();
    if (method === 'notifications/resources/list_changed') {
      this.#listings.resources.stale();
      this.#listings.resourceTemplates.stale();
    }
  }

  async #screenPrompt(
    request: JsonRpcRequest,
    name: unknown,
    what: string,
    param: string,
  ): Promise<JsonRpcError | undefined> {
    if (typeof name !== 'string') return this.#invalid(request, what, `${param} must be a string`);
    const policy = this.#policy();
    if (policy !== undefined && policy.prompts === undefined) return undefined;
    const denial = await this.#decide(policy, 'prompts', name);
    return (
      denial && this.#refuse(request, `Prompt ${JSON.stringify(name)}`, denial, { prompt: name })
    );
  }

  async #screenRead(
    request: JsonRpcRequest,
    uri: unknown,
    what: string,
    param: string,
  ): Promise<JsonRpcError | undefined> {
    if (typeof uri !== 'string') return this.#invalid(request, what, `${param} must be a string`);
    const policy = this.#policy();
    if (policy && policy.resources === undefined && policy.resourceTemplates === undefined)
      return undefined;
    const denial = await this.#decideRead(policy, uri);
    return denial && this.#refuse(request, `Resource ${JSON.stringify(uri)}`, denial, { uri });
  }

  async #screenCompletion(request: JsonRpcRequest): Promise<JsonRpcError | undefined> {
    const ref = request.params?.ref;
    const { type, name, uri } = (typeof ref === 'object' && ref !== null ? ref : {}) as Record<
      string,
      unknown
    >;
    if (type === 'ref/prompt')
      return this.#screenPrompt(request, name, 'Completion', 'params.ref.name');
    if (type !== 'ref/resource') {
      const requirement = 'params.ref.type must be ref/prompt or ref/resource';
      return this.#invalid(request, 'Completion', requirement);
    }
    if (typeof uri !== 'string')
      return this.#invalid(request, 'Completion', 'params.ref.uri must be a string');
    const policy = this.#policy();
    if (policy !== undefined && policy.resourceTemplates === undefined)
      return this.#screenRead(request, uri, 'Completion', 'params.ref.uri');
    const templates = this.#listings.resourceTemplates;
    if (policy !== undefined) await templates.current(uri);
    if (!templates.has(uri) && templates.error === undefined)
      return this.#screenRead(request, uri, 'Completion', 'params.ref.uri');
    const denial = this.#judge(policy, 'resourceTemplates', uri);
    return (
      denial && this.#refuse(request, `Resource template ${JSON.stringify(uri)}`, denial, { uri })
    );
  }

  /** `key` of `kind` against the child's current list. */
  async #decide(
    policy: BridgePolicy | undefined,
    kind: CatalogKind,
    key: string,
  ): Promise<Denial | undefined> {
    if (policy !== undefined) await this.#listings[kind].current(key);
    return this.#judge(policy, kind, key);
  }

  /** `key` of `kind` against the list as the bridge last read it. */
  #judge(policy: BridgePolicy | undefined, kind: CatalogKind, key: string): Denial | undefined {
    const listing = this.#listings[kind];
    const current = {
      listed: listing.has(key),
      digest: listing.digest(key),
      listError: listing.error,
    };
    return decideItem(policy, kind, key, current);
  }

  async #decideRead(policy: BridgePolicy | undefined, uri: string): Promise<Denial | undefined> {
    if (!policy) return decideItem(policy, 'resources', uri, { listed: false, digest: undefined });
    // Whether the URI is a listed resource decides how it is judged, so that list must be read
    // even when only templates are screened.
    const resources = this.#listings.resources;
    await resources.current(uri);
    if (resources.error !== undefined) return unverifiable('resources', resources.error);
    if (resources.has(uri)) {
      const current = { listed: true, digest: resources.digest(uri) };
      return decideItem(policy, 'resources', uri, current);
    }
    if (policy.resourceTemplates === undefined) return undefined;
    const templates = this.#listings.resourceTemplates;
    await templates.current();
    if (templates.error !== undefined) return unverifiable('resourceTemplates', templates.error);
    for (const [template, digest] of templates.entries()) {
      const approved = policyDigest(policy, 'resourceTemplates', template);
      if (approved === undefined || approved !== digest) continue;
      if (compileUriTemplate(template)?.(uri) === true) return undefined;
    }
    const message =
      'the MCP server does not list it as a resource, and no approved, unchanged resource template (spec.tools.approved.resourceTemplates) matches it';
    return { reason: 'no-approved-template', message };
  }

  #invalid(request: JsonRpcRequest, what: string, requirement: string): JsonRpcError {
    this.#onDenied('invalid-call');
    return errorResponse(
      request.id,
      WIRE.INVALID_PARAMS,
      `${what} refused by the bridge policy: ${requirement}`,
      { reason: 'invalid-call' },
    );
  }

  #refuse(
    request: JsonRpcRequest,
    what: string,
    denial: Denial,
    data: Record<string, string>,
  ): JsonRpcError {
    this.#onDenied(denial.reason);
    return errorResponse(
      request.id,
      WIRE.INVALID_PARAMS,
      `${what} is refused by the bridge policy: ${denial.message}`,
      { reason: denial.reason, ...data },
    );
  }
}
