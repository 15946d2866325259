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
 * accepted: `none` and an HMAC "signed" with the public key never verify. A JWT must say it is
 * an access token (`typ: at+jwt`, RFC 9068 section 4): an ID token or any other JWT the issuer
 * signed is not one, whatever its claims. Opaque tokens are checked by RFC 7662 introspection
 * when the bridge has credentials for it (introspection.ts: cached and rate limited).
 *
 * The caller's subject is the token's `sub`, or its `client_id` when it has none (a
 * client-credentials token introspected): a session belongs to the subject that opened it.
 */

import { errors, createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { fetchIssuerMetadata, type IssuerMetadata } from '../../mcp/oauth.ts';
import { Introspector, type IntrospectionRate } from './introspection.ts';
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
  /** Bound on new introspections; INTROSPECTION_RATE unless a test needs another. */
  introspectionRate?: IntrospectionRate | undefined;
  logger: Logger;
}

export type Authentication = { caller: Caller } | { refusal: Refusal };

const refuse = (description: string): { refusal: Refusal } => ({
  refusal: { status: 401, error: 'invalid_token', description },
});

const unavailable = (description: string): { refusal: Refusal } => ({
  refusal: { status: 503, description },
});

/**
 * RFC 7662 `token_type` values that name an access token (RFC 6749 section 7.1 types and RFC
 * 8693's URI), compared in lower case. Absent is accepted; anything else, `refresh_token` in
 * particular, is not an access token.
 */
const ACCESS_TOKEN_TYPES = new Set([
  'bearer',
  'access_token',
  'urn:ietf:params:oauth:token-type:access_token',
]);

/** A compact JWS: three base64url parts. Anything else is taken for an opaque token. */
const JWS = /^[\w-]+\.[\w-]+\.[\w-]*$/;

export class ResourceServer {
  readonly options: ResourceServerOptions;
  #issuer: Promise<{ metadata: IssuerMetadata; keys: JWTVerifyGetKey | undefined }> | undefined;
  readonly #introspector: Introspector | undefined;

  constructor(options: ResourceServerOptions) {
    this.options = options;
    const credentials = options.introspection;
    this.#introspector =
      credentials &&
      new Introspector({
        endpoint: async () => (await this.#discover()).metadata.introspection_endpoint,
        credentials,
        timeoutMs: options.timeoutMs,
        rate: options.introspectionRate,
      });
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
        caller: checked.caller,
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
        typ: 'at+jwt',
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
        typ: 'the token is not an access token (RFC 9068 asks for typ at+jwt)',
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
    if (!this.#introspector) return refuse('the token is not a JWT');
    let answer;
    try {
      answer = await this.#introspector.introspect(token);
    } catch (error) {
      this.options.logger.error({ err: error }, 'token introspection failed');
      return unavailable('the authorization server cannot introspect tokens now; retry later');
    }
    if ('noEndpoint' in answer) return refuse('the authorization server offers no introspection');
    if ('unavailable' in answer) return unavailable(answer.unavailable);
    return this.#checkIntrospected(answer.claims);
  }

  #checkIntrospected(claims: Record<string, unknown>): Authentication {
    if (claims.active !== true) return refuse('the token is not active');
    const type = claims.token_type;
    if (
      type !== undefined &&
      !(typeof type === 'string' && ACCESS_TOKEN_TYPES.has(type.toLowerCase()))
    )
      return refuse('the token is not an access token');
    for (const claim of ['exp', 'nbf', 'iat'] as const) {
      // RFC 7662 section 2.2: NumericDate, a number of seconds. A string is not one.
      if (claims[claim] !== undefined && !Number.isFinite(claims[claim]))
        return refuse(`the token's ${claim} is not a number of seconds`);
    }
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
  const { sub, client_id: clientId } = claims;
  const subject =
    typeof sub === 'string' ? sub : typeof clientId === 'string' ? clientId : undefined;
  return {
    scopes: grantedScopes(claims),
    ...(subject === undefined ? {} : { subject }),
    ...(typeof clientId === 'string' ? { clientId } : {}),
  };
}
