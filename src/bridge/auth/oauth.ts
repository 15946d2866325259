/**
 * The bridge as an OAuth 2.1 resource server (2025-11-25 basic/authorization, "Access Token
 * Usage" and "Token Handling"). Every request carries an access token issued by the configured
 * authorization server for this server's canonical resource URI (RFC 8707); anything else is
 * refused. The token is only read here: it is never passed on to the MCP server (the spec
 * forbids token passthrough), which never sees the Authorization header at all.
 *
 * JWT access tokens (RFC 9068) are verified with `jose` against the issuer's JWKS, found by
 * RFC 8414 / OpenID Connect discovery. The key set is cached; a token signed with a key the
 * cache lacks (rotation) triggers one refetch, then no other for a cooldown, so tokens with
 * made-up `kid`s cannot make the bridge hammer the issuer. Only asymmetric algorithms are
 * accepted: `none` and an HMAC "signed" with the public key never verify. Opaque tokens are
 * checked by RFC 7662 introspection when the bridge has credentials for it.
 */

import { errors, createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { fetchIssuerMetadata, boundedText, type IssuerMetadata } from '../../mcp/oauth.ts';
import {
  grantedScopes,
  missingScopes,
  type ProtectedResource,
  type Refusal,
} from './oauth-challenge.ts';
import type { Caller } from '../identity.ts';

/** RFC 7518 / RFC 8037 asymmetric signature algorithms; never `none` or HS*. */
const ASYMMETRIC = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/**
 * Longest token read. Real access tokens are a few KiB; anything longer is refused before it
 * is parsed (node's own header limit, 16 KiB by default, stops far larger ones with a 431).
 */
export const MAX_TOKEN_CHARS = 8192;

export interface ResourceServerOptions extends ProtectedResource {
  /** Accepted difference between the issuer's clock and ours, for `exp` and `nbf`. */
  clockSkewSeconds: number;
  /** Bound on each request to the issuer: metadata, keys, introspection. */
  timeoutMs: number;
  /** Least time between two key set fetches prompted by an unknown key. */
  jwksCooldownMs: number;
  /** Credentials for RFC 7662 introspection of opaque tokens; absent: only JWTs are accepted. */
  introspection?: () => { clientId: string; clientSecret: string } | undefined;
  logger: Logger;
}

export type Authentication = { caller: Caller } | { refusal: Refusal };

const refuse = (description: string): { refusal: Refusal } => ({
  refusal: { status: 401, error: 'invalid_token', description },
});

const unavailable = (description: string): { refusal: Refusal } => ({
  refusal: { status: 503, description },
});

/** A compact JWS: three base64url parts. Anything else is taken for an opaque token. */
const JWS = /^[\w-]+\.[\w-]+\.[\w-]*$/;

export class ResourceServer {
  readonly options: ResourceServerOptions;
  #issuer: Promise<{ metadata: IssuerMetadata; keys: JWTVerifyGetKey | undefined }> | undefined;

  constructor(options: ResourceServerOptions) {
    this.options = options;
  }

  /** The caller a request's Authorization header proves, or why it is refused. */
  async authenticate(authorization: string | undefined): Promise<Authentication> {
    if (authorization === undefined || authorization === '') {
      return { refusal: { status: 401, description: 'an access token is required' } };
    }
    const match = /^Bearer +(\S+) *$/i.exec(authorization);
    if (!match) {
      return {
        refusal: {
          status: 400,
          error: 'invalid_request',
          description: 'the Authorization header must be "Bearer <access token>"',
        },
      };
    }
    const token = match[1]!;
    if (token.length > MAX_TOKEN_CHARS)
      return refuse(`the token is longer than ${MAX_TOKEN_CHARS} characters`);
    const checked = JWS.test(token) ? await this.#verifyJwt(token) : await this.#introspect(token);
    if ('refusal' in checked) return checked;
    const missing = missingScopes(this.options.scopes, checked.caller.scopes);
    if (missing.length === 0) return checked;
    return {
      refusal: {
        status: 403,
        error: 'insufficient_scope',
        description: `the token lacks the scope ${missing.join(' ')}`,
        scope: this.options.scopes.join(' '),
      },
    };
  }

  /** The issuer's metadata and key set, fetched once; a failed fetch is retried next time. */
  #discover(): Promise<{ metadata: IssuerMetadata; keys: JWTVerifyGetKey | undefined }> {
    this.#issuer ??= fetchIssuerMetadata(this.options.issuer, this.options.timeoutMs).then(
      (metadata) => ({
        metadata,
        keys:
          metadata.jwks_uri === undefined
            ? undefined
            : createRemoteJWKSet(new URL(metadata.jwks_uri), {
                timeoutDuration: this.options.timeoutMs,
                cooldownDuration: this.options.jwksCooldownMs,
              }),
      }),
    );
    this.#issuer.catch(() => {
      this.#issuer = undefined;
    });
    return this.#issuer;
  }

  async #verifyJwt(token: string): Promise<Authentication> {
    let keys: JWTVerifyGetKey | undefined;
    try {
      keys = (await this.#discover()).keys;
    } catch (error) {
      this.options.logger.error({ err: error }, 'cannot read the authorization server metadata');
      return unavailable('the authorization server cannot be reached; retry later');
    }
    if (!keys) return refuse('the authorization server publishes no keys (jwks_uri)');
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: this.options.issuer,
        audience: this.options.resource,
        algorithms: ASYMMETRIC,
        clockTolerance: this.options.clockSkewSeconds,
        requiredClaims: ['exp'],
      });
      return { caller: callerOf(payload) };
    } catch (error) {
      return this.#jwtRefusal(error);
    }
  }

  #jwtRefusal(error: unknown): Authentication {
    if (error instanceof errors.JWTExpired) return refuse('the token has expired');
    if (error instanceof errors.JWTClaimValidationFailed) {
      const why: Record<string, string> = {
        iss: `the token was not issued by ${this.options.issuer}`,
        aud: `the token is not meant for this resource (${this.options.resource})`,
        nbf: 'the token is not valid yet',
        exp: 'the token has no valid expiry',
      };
      return refuse(why[error.claim] ?? `the token's ${error.claim} claim is invalid`);
    }
    if (error instanceof errors.JOSEAlgNotAllowed)
      return refuse('the token is not signed with an asymmetric algorithm');
    if (error instanceof errors.JWKSNoMatchingKey)
      return refuse('no key of the authorization server matches the token');
    if (error instanceof errors.JWSSignatureVerificationFailed)
      return refuse('the token signature does not verify');
    if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError)) {
      this.options.logger.error({ err: error }, 'cannot fetch the authorization server keys');
      return unavailable('the authorization server keys cannot be fetched; retry later');
    }
    return refuse('the token is not a valid JWT');
  }

  /** RFC 7662: asks the issuer whether an opaque token is active, and for whom. */
  async #introspect(token: string): Promise<Authentication> {
    if (!this.options.introspection) return refuse('the token is not a JWT');
    const credentials = this.options.introspection();
    if (!credentials) return unavailable('the bridge cannot read its introspection credentials');
    let claims: Record<string, unknown>;
    try {
      const endpoint = (await this.#discover()).metadata.introspection_endpoint;
      if (endpoint === undefined) return refuse('the authorization server offers no introspection');
      claims = await postIntrospection(endpoint, token, credentials, this.options.timeoutMs);
    } catch (error) {
      this.options.logger.error({ err: error }, 'token introspection failed');
      return unavailable('the authorization server cannot introspect tokens now; retry later');
    }
    return this.#checkIntrospected(claims);
  }

  #checkIntrospected(claims: Record<string, unknown>): Authentication {
    if (claims.active !== true) return refuse('the token is not active');
    if (claims.iss !== undefined && claims.iss !== this.options.issuer)
      return refuse(`the token was not issued by ${this.options.issuer}`);
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes(this.options.resource))
      return refuse(`the token is not meant for this resource (${this.options.resource})`);
    const now = Date.now() / 1000;
    const skew = this.options.clockSkewSeconds;
    if (typeof claims.exp === 'number' && claims.exp + skew <= now)
      return refuse('the token has expired');
    if (typeof claims.nbf === 'number' && claims.nbf - skew > now)
      return refuse('the token is not valid yet');
    return { caller: callerOf(claims) };
  }
}

function callerOf(claims: Record<string, unknown>): Caller {
  const caller: Caller = { scopes: grantedScopes(claims) };
  if (typeof claims.sub === 'string') caller.subject = claims.sub;
  if (typeof claims.client_id === 'string') caller.clientId = claims.client_id;
  return caller;
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
