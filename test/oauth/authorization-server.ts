/**
 * A real OAuth 2.1 authorization server for the tests: `oidc-provider` (a certified OpenID
 * provider) with the client-credentials grant, RFC 8707 resource indicators, JWT (RFC 9068)
 * and opaque access tokens, and RFC 7662 introspection. Started in-process on `host` (loopback
 * for in-process tests; the host's bridge address for pods on the real node).
 *
 * Two test levers act on the real server's HTTP endpoint and keys, for failures no
 * configuration of it can produce: `rotateKeys()` restarts the provider with a new signing
 * key published before the old one (a real rotation), and `hangJwks` makes the JWKS endpoint
 * accept requests and never answer. A third, `rewriteIntrospection`, edits the provider's own
 * introspection answer, for answers a certified provider never gives (a refresh token's
 * `token_type`, an `exp` written as a string) and a hostile or broken issuer could.
 */

import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { errors, type ClientMetadata, type JWK } from 'oidc-provider';
import { createMemoryAdapter } from 'oidc-provider/lib/adapters/memory_adapter.js';

export interface TestClient {
  id: string;
  secret: string;
  /** Scopes this client may be granted. */
  scopes: string[];
  /** Lifetime of its access tokens; 600 s unless a test needs tokens that expire. */
  ttlSeconds?: number;
}

export interface TestResource {
  /** The resource indicator (the MCP server's canonical URI), the audience of its tokens. */
  uri: string;
  scopes: string[];
  /** JWT unless a test wants opaque tokens, checked by introspection. */
  format?: 'jwt' | 'opaque';
}

export interface AuthorizationServerOptions {
  host: string;
  clients: TestClient[];
  resources: TestResource[];
  /** Sign with these keys instead of a new one (an impostor that stole the real keys). */
  keys?: JWK[];
}

function newSigningKey(): JWK {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' }) as JWK;
  return { ...jwk, kid: `key-${Date.now().toString(36)}`, alg: 'ES256', use: 'sig' };
}

function clientMetadata(client: TestClient): ClientMetadata {
  return {
    client_id: client.id,
    client_secret: client.secret,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: 'ES256',
    ...(client.scopes.length === 0 ? {} : { scope: client.scopes.join(' ') }),
  };
}

function createProvider(issuer: string, options: AuthorizationServerOptions, keys: JWK[]) {
  const allScopes = [...new Set(options.resources.flatMap((resource) => resource.scopes))];
  const provider = new Provider(issuer, {
    clients: options.clients.map(clientMetadata),
    jwks: { keys },
    // The provider's own in-memory store, chosen explicitly: passing none uses the same store
    // and prints a warning for production into every test's output.
    adapter: createMemoryAdapter(0),
    // The provider's default, set explicitly for the same reason: the resource's TTL.
    ttl: { ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 600 },
    scopes: allScopes,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // Resource servers (the bridge) introspect with their own client credentials.
      introspection: {
        enabled: true,
        allowedPolicy: (_ctx, client) => client.clientAuthMethod !== 'none',
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator, client) => {
          const resource = options.resources.find((known) => known.uri === indicator);
          if (!resource) throw new errors.InvalidTarget();
          const ttl = options.clients.find((known) => known.id === client.clientId)?.ttlSeconds;
          return {
            scope: resource.scopes.join(' '),
            audience: resource.uri,
            accessTokenTTL: ttl ?? 600,
            accessTokenFormat: resource.format ?? 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
  });
  return provider;
}

export class AuthorizationServer {
  readonly issuer: string;
  /** Requests to the JWKS endpoint are held and never answered while this is true. */
  hangJwks = false;
  jwksRequests = 0;
  /** Requests to the introspection endpoint (RFC 7662). */
  introspectionRequests = 0;
  /** Edits each introspection answer of the provider before it is sent; undefined: none. */
  rewriteIntrospection: ((answer: Record<string, unknown>) => Record<string, unknown>) | undefined;
  /** Requests to the token endpoint, by the client id of their Basic credentials. */
  readonly tokenRequests = new Map<string, number>();
  readonly #server: Server;
  readonly #options: AuthorizationServerOptions;
  #keys: JWK[];
  #handler: ReturnType<Provider['callback']>;
  readonly #held = new Set<ServerResponse>();

  private constructor(server: Server, issuer: string, options: AuthorizationServerOptions) {
    this.#server = server;
    this.issuer = issuer;
    this.#options = options;
    this.#keys = options.keys ?? [newSigningKey()];
    this.#handler = createProvider(issuer, options, this.#keys).callback();
  }

  static async start(options: AuthorizationServerOptions): Promise<AuthorizationServer> {
    const started: { instance?: AuthorizationServer } = {};
    const server = createServer((req, res) => started.instance?.serve(req, res));
    await new Promise<void>((resolve) => server.listen(0, options.host, resolve));
    const { port } = server.address() as AddressInfo;
    started.instance = new AuthorizationServer(server, `http://${options.host}:${port}`, options);
    return started.instance;
  }

  /** The signing keys, private parts included: for an impostor provider. */
  get keys(): JWK[] {
    return this.#keys;
  }

  /** Every request, through the test levers to the provider. */
  serve(req: IncomingMessage, res: ServerResponse): void {
    if (req.url?.startsWith('/jwks')) {
      this.jwksRequests++;
      if (this.hangJwks) {
        this.#held.add(res);
        return;
      }
    }
    if (req.url?.startsWith('/token/introspection')) {
      this.introspectionRequests++;
      const rewrite = this.rewriteIntrospection;
      if (rewrite) {
        // The provider writes its JSON answer with one end(); headers are not sent before it.
        const end = res.end.bind(res) as (chunk: string) => ServerResponse;
        res.end = ((chunk: unknown) => {
          const text = JSON.stringify(
            rewrite(JSON.parse(String(chunk)) as Record<string, unknown>),
          );
          res.setHeader('content-length', Buffer.byteLength(text));
          return end(text);
        }) as typeof res.end;
      }
    } else if (req.url?.startsWith('/token')) {
      const client = basicClientId(req.headers.authorization);
      this.tokenRequests.set(client, (this.tokenRequests.get(client) ?? 0) + 1);
    }
    void this.#handler(req, res);
  }

  /** A new signing key, published first; the old one stays published, as in a real rotation. */
  rotateKeys(): void {
    this.#keys = [newSigningKey(), ...this.#keys];
    this.#handler = createProvider(this.issuer, this.#options, this.#keys).callback();
  }

  /** An access token by the client-credentials grant, as a client would ask for it. */
  async token(client: TestClient, resource: string, scopes: string[]): Promise<string> {
    const response = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        resource,
        scope: scopes.join(' '),
      }),
    });
    const body = (await response.json()) as Record<string, unknown>;
    if (!response.ok || typeof body.access_token !== 'string')
      throw new Error(`token request failed: HTTP ${response.status} ${JSON.stringify(body)}`);
    return body.access_token;
  }

  async close(): Promise<void> {
    for (const res of this.#held) res.destroy();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

/** RFC 6749 section 2.3.1: the client id, form-encoded, before the colon of Basic credentials. */
function basicClientId(authorization: string | undefined): string {
  const encoded = /^Basic (\S+)$/i.exec(authorization ?? '')?.[1] ?? '';
  const [id = ''] = Buffer.from(encoded, 'base64').toString('utf8').split(':');
  return decodeURIComponent(id.replaceAll('+', ' '));
}
