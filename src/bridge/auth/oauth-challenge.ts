/**
 * What the bridge, as an OAuth 2.1 resource server, tells a client it refuses (2025-11-25
 * basic/authorization, "Protected Resource Metadata Discovery Requirements" and "Scope
 * Challenge Handling"): the `WWW-Authenticate` challenge of RFC 6750 section 3 with the
 * `resource_metadata` parameter of RFC 9728 section 5.1, and the metadata document itself
 * (RFC 9728 section 2). From these two a compliant client starts the whole flow.
 */

import { resourceMetadataUrl } from '../../mcp/oauth.ts';
import type { Caller } from '../identity.ts';

/** Why a token is refused (RFC 6750 section 3.1); undefined: no token was presented. */
export type BearerError = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

export interface Refusal {
  status: 400 | 401 | 403 | 503;
  error?: BearerError;
  /** For the client and its user: says what is wrong without echoing the token. */
  description: string;
  /** The scopes the request needs (insufficient_scope), space-separated. */
  scope?: string;
  /** Whom a valid token that lacks a scope speaks for: the audit event names them. */
  caller?: Caller;
}

/** Why a request was refused, as a metric label: a fixed set, nothing taken from the token. */
export type RefusalReason = BearerError | 'no_token' | 'issuer_unavailable';

export function refusalReason(refusal: Refusal): RefusalReason {
  if (refusal.error) return refusal.error;
  return refusal.status === 503 ? 'issuer_unavailable' : 'no_token';
}

/** What the bridge protects and who may grant access to it. */
export interface ProtectedResource {
  /** The canonical resource URI (RFC 8707 section 2; MCP: the server's URL). */
  resource: string;
  issuer: string;
  /** Scopes every request needs. */
  scopes: readonly string[];
}

/** RFC 6750 section 3: the value of an auth-param is a quoted-string without `"` or `\`. */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?')}"`;
}

/** The `WWW-Authenticate` value for a refused request. */
export function bearerChallenge(protectedResource: ProtectedResource, refusal: Refusal): string {
  const params: [string, string][] = [];
  if (refusal.error) {
    params.push(['error', refusal.error], ['error_description', refusal.description]);
  }
  // Without an error the client has not authorized yet: the scopes to ask for (section 3).
  const scope = refusal.scope ?? (refusal.error ? undefined : protectedResource.scopes.join(' '));
  if (scope) params.push(['scope', scope]);
  params.push(['resource_metadata', resourceMetadataUrl(protectedResource.resource)]);
  return `Bearer ${params.map(([name, value]) => `${name}=${quoted(value)}`).join(', ')}`;
}

/**
 * RFC 9728 section 2. `scopes_supported` lists the scopes every request needs and those of the
 * tools, so a client can ask for all it may use in one authorization.
 */
export function resourceMetadata(
  protectedResource: ProtectedResource,
  toolScopes: readonly string[],
): Record<string, unknown> {
  return {
    resource: protectedResource.resource,
    authorization_servers: [protectedResource.issuer],
    scopes_supported: [...new Set([...protectedResource.scopes, ...toolScopes])],
    bearer_methods_supported: ['header'],
  };
}

/** The scopes of `needed` that `granted` lacks. */
export function missingScopes(needed: readonly string[], granted: ReadonlySet<string>): string[] {
  return needed.filter((scope) => !granted.has(scope));
}

/** The scopes granted by a token: `scope` (RFC 9068, RFC 7662: space-separated) or `scp`. */
export function grantedScopes(claims: Record<string, unknown>): Set<string> {
  const { scope, scp } = claims;
  if (typeof scope === 'string') return new Set(scope.split(' ').filter((s) => s !== ''));
  if (Array.isArray(scp)) return new Set(scp.filter((s): s is string => typeof s === 'string'));
  return new Set();
}
