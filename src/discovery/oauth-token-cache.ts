/**
 * Discovery's client-credentials tokens, reused until shortly before they expire: one grant
 * per token lifetime instead of one per discovery run, so that frequent runs of many servers do
 * not load a tenant's authorization server (OAuth 2.1 section 4.2 issues the token for
 * `expires_in` seconds; the client may use it until then).
 *
 * A token is kept under everything it was granted for: issuer, resource, scopes, client id and
 * client secret (as a SHA-256 digest, so the cache holds no secret). A changed spec or a rotated
 * secret therefore asks the issuer again at the next run, and a secret the issuer no longer
 * accepts fails there instead of riding on a cached token. A token without `expires_in` is not
 * kept: its lifetime is unknown.
 */

import { createHash } from 'node:crypto';
import { clientCredentialsToken, type GrantedToken, type TokenRequest } from './oauth-token.ts';

/**
 * Left on a reused token beyond the run's own timeout, for the bridge's clock being ahead of
 * the issuer's (it tolerates spec.oauth.clockSkew, 30 s by default).
 */
export const REFRESH_MARGIN_MS = 30_000;

interface Entry {
  issuer: string;
  resource: string;
  accessToken: string;
  expiresAt: number;
}

export class OAuthTokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #grant: (request: TokenRequest) => Promise<GrantedToken>;
  readonly #now: () => number;

  constructor(
    grant: (request: TokenRequest) => Promise<GrantedToken> = clientCredentialsToken,
    now: () => number = Date.now,
  ) {
    this.#grant = grant;
    this.#now = now;
  }

  /** A token for `request` that outlives a run of `request.timeoutMs`: the cached one or a new grant. */
  async token(request: TokenRequest): Promise<string> {
    this.#dropStale(request.timeoutMs);
    const key = cacheKey(request);
    const cached = this.#entries.get(key);
    if (cached) return cached.accessToken;
    const granted = await this.#grant(request);
    if (granted.expiresInSeconds !== undefined) {
      this.#entries.set(key, {
        issuer: request.issuer,
        resource: request.resource,
        accessToken: granted.accessToken,
        expiresAt: this.#now() + granted.expiresInSeconds * 1000,
      });
    }
    return granted.accessToken;
  }

  /** Drops every token for the resource at the issuer: the server refused one (revoked, say). */
  forget(issuer: string, resource: string): void {
    for (const [key, entry] of this.#entries) {
      if (entry.issuer === issuer && entry.resource === resource) this.#entries.delete(key);
    }
  }

  /** Tokens too close to expiry for a run of `timeoutMs`; also bounds the cache to live tokens. */
  #dropStale(timeoutMs: number): void {
    const usableUntil = this.#now() + timeoutMs + REFRESH_MARGIN_MS;
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= usableUntil) this.#entries.delete(key);
    }
  }
}

function cacheKey(request: TokenRequest): string {
  const { issuer, resource, scopes, credentials } = request;
  const parts = [
    issuer,
    resource,
    [...scopes].sort(),
    credentials.clientId,
    credentials.clientSecret,
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
