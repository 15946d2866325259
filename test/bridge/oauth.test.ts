/**
 * The bridge as an OAuth 2.1 resource server (2025-11-25 basic/authorization), in front of the
 * real memory server, with tokens from a real authorization server (oidc-provider,
 * test/oauth/authorization-server.ts) and the official SDK's client-credentials support.
 */

import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHmac, createPublicKey } from 'node:crypto';
import { importJWK, SignJWT, type JWK } from 'jose';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthOptions } from '../../src/bridge/auth/oauth-setup.ts';
import type { BridgeOptions, RunningBridge } from '../../src/bridge/server.ts';
import { AuthorizationServer, type TestClient } from '../oauth/authorization-server.ts';
import { freePort } from '../support/ports.ts';
import { waitFor } from '../support/wait.ts';
import {
  INITIALIZE,
  jsonAnswer,
  modern,
  post,
  SERVERS,
  sseEvents,
  startTestBridge,
  tempDir,
  textOf,
  toolCall,
} from './harness.ts';
import { HEADER } from '../../src/mcp/metadata.ts';

const REQUIRED = 'mcp:tools';
const TOOL_SCOPES = { create_entities: ['memory:write'], read_graph: ['memory:read'] };
const OTHER_SERVER = 'http://other-server.example/mcp';

const CLIENTS = {
  writer: {
    id: 'writer',
    secret: 'writer-secret',
    scopes: [REQUIRED, 'memory:read', 'memory:write'],
  },
  reader: { id: 'reader', secret: 'reader-secret', scopes: [REQUIRED, 'memory:read'] },
  /** Holds the tool scopes, not the one every request needs. */
  partial: { id: 'partial', secret: 'partial-secret', scopes: ['memory:read'] },
  shortLived: { id: 'short', secret: 'short-secret', scopes: [REQUIRED], ttlSeconds: 5 },
  bridge: { id: 'bridge', secret: 'bridge-secret', scopes: [] },
} satisfies Record<string, TestClient>;

const ports = { jwt: 0, opaque: 0 };
const resourceOf = (port: number) => `http://127.0.0.1:${port}/mcp`;
let as: AuthorizationServer;
let impostor: AuthorizationServer;

beforeAll(async () => {
  ports.jwt = await freePort();
  ports.opaque = await freePort();
  const resources = [
    { uri: resourceOf(ports.jwt), scopes: [REQUIRED, 'memory:read', 'memory:write'] },
    { uri: resourceOf(ports.opaque), scopes: [REQUIRED], format: 'opaque' as const },
    { uri: OTHER_SERVER, scopes: [REQUIRED, 'memory:read', 'memory:write'] },
  ];
  as = await AuthorizationServer.start({
    host: '127.0.0.1',
    clients: Object.values(CLIENTS),
    resources,
  });
  // Another issuer holding the real issuer's keys: only the `iss` check stops its tokens.
  impostor = await AuthorizationServer.start({
    host: '127.0.0.1',
    clients: Object.values(CLIENTS),
    resources,
    keys: as.keys,
  });
});

afterAll(async () => {
  await Promise.all([as?.close(), impostor?.close()]);
});

async function startOAuthBridge(
  oauth: Partial<OAuthOptions> = {},
  {
    command = SERVERS.memory,
    toolScopes = TOOL_SCOPES,
    ...more
  }: { command?: string[]; toolScopes?: Record<string, string[]> } & Partial<BridgeOptions> = {},
): Promise<RunningBridge> {
  const dir = await tempDir('oauth-policy');
  const policyFile = join(dir, 'policy.json');
  await writeFile(policyFile, JSON.stringify({ toolScopes }));
  return startTestBridge({
    port: ports.jwt,
    command,
    policyFile,
    oauth: {
      issuer: as.issuer,
      resource: resourceOf(ports.jwt),
      scopes: [REQUIRED],
      clockSkewSeconds: 0,
      jwksCooldownMs: 200,
      timeoutMs: 1_000,
      ...oauth,
    },
    ...more,
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The parameters of a `WWW-Authenticate: Bearer …` challenge. */
function challenge(response: Response): Record<string, string> {
  const value = response.headers.get('www-authenticate') ?? '';
  expect(value).toMatch(/^Bearer /);
  return Object.fromEntries(
    [...value.matchAll(/(\w+)="([^"]*)"/g)].map((m): [string, string] => [m[1]!, m[2]!]),
  );
}

async function sdkClient(url: string, client: TestClient): Promise<Client> {
  const mcp = new Client({ name: 'oauth-test', version: '1.0.0' });
  const authProvider = new ClientCredentialsProvider({
    clientId: client.id,
    clientSecret: client.secret,
    scope: client.scopes.join(' '),
    expectedIssuer: as.issuer,
  });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider }));
  return mcp;
}

const toolNames = async (client: Client) =>
  (await client.listTools()).tools.map((tool) => tool.name).sort();

describe('an unauthenticated client', () => {
  it('gets 401 naming the metadata, and the metadata names the issuer and scopes', async () => {
    const bridge = await startOAuthBridge();
    const response = await post(bridge.url, INITIALIZE);
    expect(response.status).toBe(401);
    const params = challenge(response);
    expect(params.resource_metadata).toBe(
      `http://127.0.0.1:${ports.jwt}/.well-known/oauth-protected-resource/mcp`,
    );
    expect(params.scope).toBe(REQUIRED);
    expect(params.error).toBeUndefined();

    const metadata = await fetch(params.resource_metadata!);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toEqual({
      resource: resourceOf(ports.jwt),
      authorization_servers: [as.issuer],
      scopes_supported: [REQUIRED, 'memory:write', 'memory:read'],
      bearer_methods_supported: ['header'],
    });
    const root = await fetch(`http://127.0.0.1:${ports.jwt}/.well-known/oauth-protected-resource`);
    expect(root.status).toBe(200);
  });
});

describe('a browser client on another origin', () => {
  it('reads the metadata cross-origin (CORS), while the MCP endpoint keeps its Origin check', async () => {
    const bridge = await startOAuthBridge();
    const origin = 'https://agent.example';
    const metadataUrl = `http://127.0.0.1:${ports.jwt}/.well-known/oauth-protected-resource/mcp`;
    // The SDK sends MCP-Protocol-Version with the request: a browser asks first (preflight).
    const preflight = await fetch(metadataUrl, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('mcp-protocol-version');
    const metadata = await fetch(metadataUrl, {
      headers: { origin, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('access-control-allow-origin')).toBe('*');
    expect(((await metadata.json()) as { resource: string }).resource).toBe(resourceOf(ports.jwt));

    const token = await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]);
    const fromPage = await post(bridge.url, INITIALIZE, { ...bearer(token), origin });
    expect(fromPage.status).toBe(403);
    expect(fromPage.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('a client that logs in with the SDK (client credentials)', () => {
  it('sees and calls exactly the tools its scopes allow', async () => {
    const bridge = await startOAuthBridge();
    const writer = await sdkClient(bridge.url, CLIENTS.writer);
    const reader = await sdkClient(bridge.url, CLIENTS.reader);
    const writerTools = await toolNames(writer);
    const readerTools = await toolNames(reader);
    expect(writerTools).toContain('create_entities');
    expect(writerTools).toContain('read_graph');
    expect(readerTools).toContain('read_graph');
    expect(readerTools).not.toContain('create_entities');
    // Tools without scopes of their own are shown to both.
    expect(writerTools.filter((name) => name !== 'create_entities')).toEqual(readerTools);

    const created = await writer.callTool({
      name: 'create_entities',
      arguments: { entities: [{ name: 'ada', entityType: 'person', observations: [] }] },
    });
    expect(created.isError).toBeFalsy();
    const graph = await reader.callTool({ name: 'read_graph', arguments: {} });
    expect(JSON.stringify(graph)).toContain('ada');
    await Promise.all([writer.close(), reader.close()]);
  });

  it('refuses a call outside the scopes with 403 insufficient_scope naming the scope', async () => {
    const bridge = await startOAuthBridge();
    const token = await as.token(CLIENTS.reader, resourceOf(ports.jwt), CLIENTS.reader.scopes);
    const response = await post(
      bridge.url,
      toolCall(1, 'create_entities', { entities: [] }),
      bearer(token),
    );
    expect(response.status).toBe(403);
    const params = challenge(response);
    expect(params.error).toBe('insufficient_scope');
    expect(params.scope).toBe(`${REQUIRED} memory:write`);
    expect(params.error_description).toContain('memory:write');
    expect(params.resource_metadata).toContain('/.well-known/oauth-protected-resource');
  });

  it('refuses a token without the scope every request needs with 403', async () => {
    const bridge = await startOAuthBridge();
    const token = await as.token(CLIENTS.partial, resourceOf(ports.jwt), CLIENTS.partial.scopes);
    const response = await post(bridge.url, INITIALIZE, bearer(token));
    expect(response.status).toBe(403);
    const params = challenge(response);
    expect(params.error).toBe('insufficient_scope');
    expect(params.scope).toBe(REQUIRED);
  });
});

describe('refusals in the metrics', () => {
  it('are counted by reason, with nothing of the token in the labels', async () => {
    const bridge = await startOAuthBridge();
    const reader = await as.token(CLIENTS.reader, resourceOf(ports.jwt), CLIENTS.reader.scopes);
    const partial = await as.token(CLIENTS.partial, resourceOf(ports.jwt), CLIENTS.partial.scopes);
    const forged = `${reader.slice(0, -8)}AAAAAAAA`;
    const statuses = [
      await post(bridge.url, INITIALIZE),
      await post(bridge.url, INITIALIZE, bearer(forged)),
      await post(bridge.url, INITIALIZE, bearer(partial)),
      await post(bridge.url, toolCall(1, 'create_entities', { entities: [] }), bearer(reader)),
      await post(bridge.url, INITIALIZE, bearer(reader)),
    ].map((response) => response.status);
    expect(statuses).toEqual([401, 401, 403, 403, 200]);

    const text = await (await fetch(bridge.url.replace('/mcp', '/metrics'))).text();
    const counts = Object.fromEntries(
      [...text.matchAll(/^mcp_bridge_oauth_refusals_total\{reason="(\w+)"\} (\d+)$/gm)].map(
        (m): [string, number] => [m[1]!, Number(m[2])],
      ),
    );
    expect(counts).toEqual({ no_token: 1, invalid_token: 1, insufficient_scope: 2 });
    for (const token of [reader, partial, forged]) {
      expect(text).not.toContain(token.split('.')[1]!);
    }
  });
});

/** The parts of a real token, to forge variants of it. */
function parts(token: string) {
  const [header, payload] = token.split('.') as [string, string, string];
  const decode = (part: string) =>
    JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: decode(header), payload: decode(payload), rawPayload: payload };
}
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('hostile tokens are refused with 401 invalid_token', () => {
  async function expectRefused(bridge: RunningBridge, token: string, reason: RegExp) {
    const response = await post(bridge.url, INITIALIZE, bearer(token));
    expect(response.status).toBe(401);
    const params = challenge(response);
    expect(params.error).toBe('invalid_token');
    expect(params.error_description).toMatch(reason);
  }

  it('an expired token', async () => {
    const bridge = await startOAuthBridge();
    const token = await as.token(CLIENTS.shortLived, resourceOf(ports.jwt), [REQUIRED]);
    expect((await post(bridge.url, INITIALIZE, bearer(token))).status).toBe(200);
    const expiresAt = (parts(token).payload.exp as number) * 1000;
    await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 1_000));
    await expectRefused(bridge, token, /expired/);
  });

  it('a token minted for another MCP server (confused deputy)', async () => {
    const bridge = await startOAuthBridge();
    const token = await as.token(CLIENTS.writer, OTHER_SERVER, CLIENTS.writer.scopes);
    await expectRefused(bridge, token, /not meant for this resource/);
  });

  it('a token of another issuer signed with the same keys', async () => {
    const bridge = await startOAuthBridge();
    const token = await impostor.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]);
    await expectRefused(bridge, token, /not issued by/);
  });

  it('alg none', async () => {
    const bridge = await startOAuthBridge();
    const real = parts(await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]));
    const unsigned = `${encode({ ...real.header, alg: 'none' })}.${real.rawPayload}.`;
    await expectRefused(bridge, unsigned, /asymmetric|not a valid JWT/);
  });

  it('HS256 "signed" with the issuer public key', async () => {
    const bridge = await startOAuthBridge();
    const real = parts(await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]));
    const jwks = (await (await fetch(`${as.issuer}/jwks`)).json()) as { keys: object[] };
    const publicPem = createPublicKey({ key: jwks.keys[0]!, format: 'jwk' } as never)
      .export({ type: 'spki', format: 'pem' })
      .toString();
    for (const secret of [publicPem, JSON.stringify(jwks.keys[0])]) {
      const signingInput = `${encode({ ...real.header, alg: 'HS256' })}.${real.rawPayload}`;
      const mac = createHmac('sha256', secret).update(signingInput).digest('base64url');
      await expectRefused(bridge, `${signingInput}.${mac}`, /asymmetric/);
    }
  });

  it('a JWT that is not an access token: typ JWT, or no typ (RFC 9068 section 4)', async () => {
    const bridge = await startOAuthBridge();
    const real = parts(await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]));
    // Signed with the issuer's own key: only the type tells it from an access token.
    const key = await importJWK({ ...as.keys[0]! } as JWK, 'ES256');
    const untyped = { ...real.header };
    delete untyped.typ;
    for (const header of [{ ...real.header, typ: 'JWT' }, untyped]) {
      const token = await new SignJWT(real.payload)
        .setProtectedHeader(header as { alg: string })
        .sign(key);
      await expectRefused(bridge, token, /at\+jwt/);
    }
    expect(real.header.typ).toBe('at+jwt');
  });

  it('a 1 MB token, and the bridge goes on serving', async () => {
    const bridge = await startOAuthBridge();
    const huge = await post(bridge.url, INITIALIZE, bearer('a'.repeat(1024 * 1024)));
    expect(huge.status).toBe(431);
    // Under node's header limit, over the bridge's own: refused unparsed.
    await expectRefused(bridge, 'a.b.' + 'c'.repeat(10_000), /longer than/);
    const token = await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]);
    expect((await post(bridge.url, INITIALIZE, bearer(token))).status).toBe(200);
  });
});

describe('the issuer keys', () => {
  it('rotate mid-run: a token signed with the new key is accepted after one refetch', async () => {
    const bridge = await startOAuthBridge();
    const before = await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]);
    expect((await post(bridge.url, INITIALIZE, bearer(before))).status).toBe(200);
    const fetched = as.jwksRequests;
    as.rotateKeys();
    const after = await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]);
    expect(parts(after).header.kid).not.toBe(parts(before).header.kid);
    await new Promise((resolve) => setTimeout(resolve, 300)); // past the refetch cooldown
    expect((await post(bridge.url, INITIALIZE, bearer(after))).status).toBe(200);
    expect(as.jwksRequests).toBe(fetched + 1);
  });

  it('are not refetched for every made-up kid: one refetch per cooldown at most', async () => {
    const bridge = await startOAuthBridge({ jwksCooldownMs: 60_000 });
    const token = await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]);
    expect((await post(bridge.url, INITIALIZE, bearer(token))).status).toBe(200);
    const fetched = as.jwksRequests;
    const real = parts(token);
    const forged = Array.from(
      { length: 20 },
      (_, i) => `${encode({ ...real.header, kid: `made-up-${i}` })}.${real.rawPayload}.x`,
    );
    const refused = await Promise.all(
      forged.map((jwt) => post(bridge.url, INITIALIZE, bearer(jwt))),
    );
    expect(new Set(refused.map((response) => response.status))).toEqual(new Set([401]));
    expect(as.jwksRequests).toBeLessThanOrEqual(fetched + 1);
  });

  it('a JWKS endpoint that hangs costs 503 within the bound, and nothing else', async () => {
    as.hangJwks = true;
    try {
      const bridge = await startOAuthBridge({ timeoutMs: 1_000 });
      const token = await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]);
      const started = Date.now();
      const pending = post(bridge.url, INITIALIZE, bearer(token));
      const health = await fetch(bridge.url.replace('/mcp', '/healthz'));
      expect(health.status).toBe(200);
      const response = await pending;
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      as.hangJwks = false;
    }
  });
});

describe('opaque tokens by introspection (RFC 7662)', () => {
  it('accepts an active token for this resource and refuses one for another', async () => {
    const dir = await tempDir('oauth-introspection');
    await writeFile(join(dir, 'client-id'), CLIENTS.bridge.id);
    await writeFile(join(dir, 'client-secret'), CLIENTS.bridge.secret);
    const bridge = await startTestBridge({
      port: ports.opaque,
      command: SERVERS.memory,
      oauth: {
        issuer: as.issuer,
        resource: resourceOf(ports.opaque),
        scopes: [REQUIRED],
        clockSkewSeconds: 0,
        introspectionDir: dir,
      },
    });
    const token = await as.token(CLIENTS.writer, resourceOf(ports.opaque), [REQUIRED]);
    expect(token.split('.')).toHaveLength(1);
    expect((await post(bridge.url, INITIALIZE, bearer(token))).status).toBe(200);
    const unknown = await post(bridge.url, INITIALIZE, bearer('not-a-token-the-issuer-made'));
    expect(unknown.status).toBe(401);
    expect(challenge(unknown).error_description).toMatch(/not active/);
  });
});

async function startOpaqueBridge(): Promise<RunningBridge> {
  const dir = await tempDir('oauth-introspection');
  await writeFile(join(dir, 'client-id'), CLIENTS.bridge.id);
  await writeFile(join(dir, 'client-secret'), CLIENTS.bridge.secret);
  return startTestBridge({
    port: ports.opaque,
    command: SERVERS.memory,
    oauth: {
      issuer: as.issuer,
      resource: resourceOf(ports.opaque),
      scopes: [REQUIRED],
      clockSkewSeconds: 0,
      introspectionDir: dir,
    },
  });
}

describe('introspection answers that do not prove an access token', () => {
  it.each([
    ['a refresh token', { token_type: 'refresh_token' }],
    ['an exp written as a string', { exp: String(Math.floor(Date.now() / 1000) + 600) }],
    ['an nbf written as a string', { nbf: '0' }],
  ])('%s is refused', async (_what, edit) => {
    const bridge = await startOpaqueBridge();
    const token = await as.token(CLIENTS.writer, resourceOf(ports.opaque), [REQUIRED]);
    as.rewriteIntrospection = (answer) => ({ ...answer, ...edit });
    try {
      const response = await post(bridge.url, INITIALIZE, bearer(token));
      expect(response.status).toBe(401);
      expect(challenge(response).error).toBe('invalid_token');
    } finally {
      as.rewriteIntrospection = undefined;
    }
  });
});

describe('introspection is bounded', () => {
  it('an active token is introspected once, until it expires', async () => {
    const bridge = await startOpaqueBridge();
    const token = await as.token(CLIENTS.writer, resourceOf(ports.opaque), [REQUIRED]);
    const before = as.introspectionRequests;
    // Without a session id: 400 once the token is accepted, and no MCP server is started.
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    for (let i = 0; i < 20; i++) {
      expect((await post(bridge.url, list, bearer(token))).status).toBe(400);
    }
    expect(as.introspectionRequests - before).toBe(1);
  });

  it('200 made-up tokens make a bounded number of introspection calls, and the same one none again', async () => {
    const bridge = await startOpaqueBridge();
    const valid = await as.token(CLIENTS.writer, resourceOf(ports.opaque), [REQUIRED]);
    expect((await post(bridge.url, INITIALIZE, bearer(valid))).status).toBe(200);
    const before = as.introspectionRequests;
    const made = Array.from({ length: 200 }, (_, i) => `made-up-token-${i}`);
    const statuses = await Promise.all(
      made.map(async (token) => (await post(bridge.url, INITIALIZE, bearer(token))).status),
    );
    const calls = as.introspectionRequests - before;
    expect(statuses.filter((status) => status !== 401 && status !== 503)).toEqual([]);
    expect(calls).toBeLessThanOrEqual(40);
    // A token refused as inactive is remembered: asking again costs the issuer nothing.
    const refused = made[statuses.indexOf(401)]!;
    const again = await post(bridge.url, INITIALIZE, bearer(refused));
    expect(again.status).toBe(401);
    expect(as.introspectionRequests - before).toBe(calls);
    // The flood did not lock out a caller whose token is known.
    expect((await post(bridge.url, INITIALIZE, bearer(valid))).status).toBe(200);
  });
});

describe('a session belongs to the subject of the token that opened it', () => {
  it("another caller's valid token cannot use, resume or end it", async () => {
    const bridge = await startOAuthBridge();
    const owner = bearer(await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]));
    const other = bearer(await as.token(CLIENTS.reader, resourceOf(ports.jwt), [REQUIRED]));
    const opened = await post(bridge.url, INITIALIZE, owner);
    expect(opened.status).toBe(200);
    const session = { [HEADER.sessionId]: opened.headers.get(HEADER.sessionId)! };
    const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
    expect((await post(bridge.url, initialized, { ...owner, ...session })).status).toBe(202);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

    expect((await post(bridge.url, list, { ...other, ...session })).status).toBe(404);
    const resumed = await fetch(bridge.url, {
      headers: { ...other, ...session, accept: 'text/event-stream', 'last-event-id': '0-1' },
    });
    expect(resumed.status).toBe(404);
    const ended = await fetch(bridge.url, { method: 'DELETE', headers: { ...other, ...session } });
    expect(ended.status).toBe(404);

    expect((await post(bridge.url, list, { ...owner, ...session })).status).toBe(200);
  });
});

describe('per-tool scopes for a 2026-07-28 client of a child that speaks 2026-07-28', () => {
  const modern = (method: string, id: number, params: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'modern-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  const headers = (method: string, name?: string) => ({
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  });

  it('lists only the tools the token allows, and the refused call keeps its id', async () => {
    const bridge = await startOAuthBridge(
      {},
      { command: SERVERS.misbehaving('--native'), toolScopes: { echo: ['memory:write'] } },
    );
    const reader = bearer(
      await as.token(CLIENTS.reader, resourceOf(ports.jwt), CLIENTS.reader.scopes),
    );
    const writer = bearer(
      await as.token(CLIENTS.writer, resourceOf(ports.jwt), CLIENTS.writer.scopes),
    );
    const names = async (token: Record<string, string>) => {
      const response = await post(bridge.url, modern('tools/list', 1), {
        ...token,
        ...headers('tools/list'),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { result: { tools: { name: string }[] } };
      return body.result.tools.map((tool) => tool.name);
    };
    expect(await names(writer)).toContain('echo');
    expect(await names(reader)).not.toContain('echo');

    const call = await post(bridge.url, modern('tools/call', 7, { name: 'echo', arguments: {} }), {
      ...reader,
      ...headers('tools/call', 'echo'),
    });
    expect(call.status).toBe(403);
    expect(((await call.json()) as { id: unknown }).id).toBe(7);
  });
});

describe('a 2026-07-28 call parked for input (handshake-era child)', () => {
  it('is resumed only by the subject that made it; another token gets the unknown-state answer', async () => {
    const bridge = await startOAuthBridge({}, { command: SERVERS.misbehaving(), toolScopes: {} });
    const writer = bearer(await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]));
    const reader = bearer(await as.token(CLIENTS.reader, resourceOf(ports.jwt), [REQUIRED]));
    const capabilities = { elicitation: { form: {} } };
    const elicit = { method: 'tools/call', params: { name: 'elicit', arguments: {} } };
    const first = await jsonAnswer(
      await modern(bridge.url, { ...elicit, capabilities, headers: writer }),
    );
    const { requestState, inputRequests } = first.body.result as {
      requestState: string;
      inputRequests: Record<string, unknown>;
    };
    const inputResponses = Object.fromEntries(
      Object.keys(inputRequests).map((key) => [
        key,
        { action: 'accept', content: { name: 'Eve' } },
      ]),
    );
    const retry = (id: number, headers: Record<string, string>) =>
      modern(bridge.url, {
        id,
        method: 'tools/call',
        params: { ...elicit.params, inputResponses, requestState },
        capabilities,
        headers,
      });

    const stolen = await jsonAnswer(await retry(2, reader));
    expect(stolen.status).toBe(400);
    expect(stolen.body.error!.message).toMatch(/requestState is unknown or expired/);

    const own = await jsonAnswer(await retry(3, writer));
    expect(own.body.result).toMatchObject({ resultType: 'complete' });
    expect(JSON.parse(textOf(own.body.result))).toMatchObject({ content: { name: 'Eve' } });
  });
});

describe("the audit trail of a 2026-07-28 client's subscriptions", () => {
  it('names the OAuth caller on each resources/subscribe a listen causes', async () => {
    const file = join(await tempDir('oauth-audit'), 'audit.jsonl');
    const bridge = await startOAuthBridge(
      {},
      {
        command: SERVERS.misbehaving('--resources'),
        toolScopes: {},
        audit: { arguments: 'None', destination: file },
      },
    );
    const writer = bearer(await as.token(CLIENTS.writer, resourceOf(ports.jwt), [REQUIRED]));
    const listen = await modern(bridge.url, {
      method: 'subscriptions/listen',
      params: { notifications: { resourceSubscriptions: ['file:///watched'] } },
      headers: writer,
    });
    expect(listen.status).toBe(200);
    const reader = listen.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!/acknowledged/.test(text)) text += (await reader.read()).value ?? '';
    expect(sseEvents(text)[0]!.data).toContain('file:///watched');

    let subscribe: Record<string, unknown> | undefined;
    await waitFor('the audit event of the subscribe', async () => {
      const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean);
      subscribe = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((event) => event.method === 'resources/subscribe');
      return subscribe !== undefined;
    });
    await reader.cancel();
    expect(subscribe).toMatchObject({
      target: 'file:///watched',
      caller: { kind: 'oauth', clientId: CLIENTS.writer.id },
    });
  });
});
