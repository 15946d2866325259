/**
 * RFC 7662 token introspection for the resource server (oauth.ts), bounded: every opaque token a
 * client sends would otherwise be one request to the issuer with the bridge's credentials, and
 * a client can send any number of made-up ones.
 *
 * - Answers are cached by the token's SHA-256, never the token itself: an active one until its
 *   `exp`, at most INTROSPECTION_CACHE.activeMs (so a revocation shows within that), an
 *   inactive one for INTROSPECTION_CACHE.inactiveMs; each cache holds a bounded number.
 * - Concurrent requests with the same token share one introspection.
 * - New introspections are rate limited (a token bucket); past it, a token the cache does not
 *   know gets 503 with Retry-After, and tokens already known are served as before.
 */

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { boundedText } from '../../mcp/oauth.ts';

/** Bounds of the two caches. */
export const INTROSPECTION_CACHE = {
  activeMs: 5 * 60_000,
  inactiveMs: 5 * 60_000,
  maxEntries: 10_000,
};

/** New introspections per second, and the burst allowed above that rate. */
export interface IntrospectionRate {
  perSecond: number;
  burst: number;
}

export const INTROSPECTION_RATE: IntrospectionRate = { perSecond: 10, burst: 20 };

export interface IntrospectorOptions {
  /** The issuer's introspection endpoint; undefined when it offers none. */
  endpoint(): Promise<string | undefined>;
  credentials(): { clientId: string; clientSecret: string } | undefined;
  timeoutMs: number;
  rate?: IntrospectionRate | undefined;
}

/** What introspection said, or why it could not be asked. */
export type Introspected =
  { claims: Record<string, unknown> } | { unavailable: string } | { noEndpoint: true };

const tokenKey = (token: string): string =>
  createHash('sha256').update(token, 'utf8').digest('base64url');

export class Introspector {
  readonly #options: IntrospectorOptions;
  readonly #active = new LRUCache<string, Record<string, unknown>>({
    max: INTROSPECTION_CACHE.maxEntries,
  });
  readonly #inactive = new LRUCache<string, Record<string, unknown>>({
    max: INTROSPECTION_CACHE.maxEntries,
    ttl: INTROSPECTION_CACHE.inactiveMs,
  });
  readonly #asking = new Map<string, Promise<Introspected>>();
  readonly #rate: IntrospectionRate;
  #tokens: number;
  #filledAt = Date.now();

  constructor(options: IntrospectorOptions) {
    this.#options = options;
    this.#rate = options.rate ?? INTROSPECTION_RATE;
    this.#tokens = this.#rate.burst;
  }

  /** The issuer's answer for `token`, from the cache when it has one. */
  introspect(token: string): Promise<Introspected> | Introspected {
    const key = tokenKey(token);
    const known = this.#active.get(key) ?? this.#inactive.get(key);
    if (known) return { claims: known };
    const asking = this.#asking.get(key);
    if (asking) return asking;
    if (!this.#take()) return { unavailable: 'too many new tokens to introspect; retry later' };
    const answer = this.#ask(key, token).finally(() => this.#asking.delete(key));
    this.#asking.set(key, answer);
    return answer;
  }

  async #ask(key: string, token: string): Promise<Introspected> {
    const credentials = this.#options.credentials();
    if (!credentials)
      return { unavailable: 'the bridge cannot read its introspection credentials' };
    const endpoint = await this.#options.endpoint();
    if (endpoint === undefined) return { noEndpoint: true };
    const claims = await postIntrospection(endpoint, token, credentials, this.#options.timeoutMs);
    this.#remember(key, claims);
    return { claims };
  }

  #remember(key: string, claims: Record<string, unknown>): void {
    if (claims.active !== true) {
      this.#inactive.set(key, claims);
      return;
    }
    const untilExpiry =
      typeof claims.exp === 'number' ? claims.exp * 1000 - Date.now() : Number.POSITIVE_INFINITY;
    const ttl = Math.min(untilExpiry, INTROSPECTION_CACHE.activeMs);
    if (ttl >= 1) this.#active.set(key, claims, { ttl: Math.floor(ttl) });
  }

  /** One introspection from the bucket, refilled at the rate up to the burst. */
  #take(): boolean {
    const now = Date.now();
    const refill = ((now - this.#filledAt) / 1000) * this.#rate.perSecond;
    this.#tokens = Math.min(this.#rate.burst, this.#tokens + refill);
    this.#filledAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** RFC 7662 section 2, client authentication per RFC 6749 section 2.3.1 (form-encoded, Basic). */
async function postIntrospection(
  endpoint: string,
  token: string,
  credentials: { clientId: string; clientSecret: string },
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const basic = Buffer.from(
    `${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.clientSecret)}`,
  ).toString('base64');
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
    redirect: 'error',
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`the introspection endpoint answered HTTP ${response.status}`);
  }
  const value: unknown = JSON.parse(await boundedText(response, 64 * 1024));
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('the introspection answer is not a JSON object');
  return value as Record<string, unknown>;
}
