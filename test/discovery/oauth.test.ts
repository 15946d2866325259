/**
 * Discovery of an OAuth-protected server: the operator's own token by the client-credentials
 * grant at a real authorization server (oidc-provider), bound to the server with `resource`,
 * and what a failure says: which of issuer, client, audience or scope is wrong, never a secret.
 */

import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover } from '../../src/discovery/client.ts';
import { EgressGuard, egressPolicy, guardedDispatcher } from '../../src/discovery/egress.ts';
import { clientCredentialsToken, type TokenRequest } from '../../src/discovery/oauth-token.ts';
import { OperatorError } from '../../src/errors.ts';
import { AuthorizationServer } from '../oauth/authorization-server.ts';
import { freePort } from '../support/ports.ts';
import { SERVERS, startTestBridge, tempDir } from '../bridge/harness.ts';

const REQUIRED = 'mcp:tools';
const OPERATOR = { id: 'mcp-operator', secret: 'operator-secret-value', scopes: [REQUIRED] };
let as: AuthorizationServer;
let resource: string;
let port: number;

beforeAll(async () => {
  port = await freePort();
  resource = `http://127.0.0.1:${port}/mcp`;
  as = await AuthorizationServer.start({
    host: '127.0.0.1',
    clients: [OPERATOR],
    resources: [{ uri: resource, scopes: [REQUIRED, 'memory:write'] }],
  });
});

afterAll(async () => {
  await as?.close();
});

const request = (overrides: Partial<TokenRequest> = {}): TokenRequest => ({
  issuer: as.issuer,
  resource,
  scopes: [REQUIRED],
  credentials: { clientId: OPERATOR.id, clientSecret: OPERATOR.secret },
  timeoutMs: 5_000,
  ...overrides,
});

async function refusal(overrides: Partial<TokenRequest>): Promise<OperatorError> {
  const error: unknown = await clientCredentialsToken(request(overrides)).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof OperatorError))
    throw new Error(`expected an OperatorError: ${String(error)}`);
  expect(error.code).toBe('MCPOP_DISCOVERY_OAUTH');
  expect(error.message).not.toContain(OPERATOR.secret);
  return error;
}

describe('discovery of a server behind the OAuth bridge', () => {
  it('lists every tool with its own token, past the scopes agents need', async () => {
    const dir = await tempDir('oauth-discovery');
    await writeFile(
      join(dir, 'policy.json'),
      JSON.stringify({ toolScopes: { create_entities: ['memory:write'] } }),
    );
    await writeFile(join(dir, 'discovery-token'), 'the-discovery-token');
    const bridge = await startTestBridge({
      port,
      command: SERVERS.memory,
      policyFile: join(dir, 'policy.json'),
      discoveryTokenFile: join(dir, 'discovery-token'),
      oauth: { issuer: as.issuer, resource, scopes: [REQUIRED], clockSkewSeconds: 0 },
    });
    const { accessToken: token } = await clientCredentialsToken(request());
    const withDiscoveryToken = await discover({
      url: bridge.url,
      token,
      discoveryToken: 'the-discovery-token',
    });
    const names = withDiscoveryToken.tools.map((tool) => tool.name);
    expect(names).toContain('create_entities');
    // The same token as an agent's: the tool its scopes lack is hidden.
    const asAgent = await discover({ url: bridge.url, token });
    expect(asAgent.tools.map((tool) => tool.name)).toEqual(
      names.filter((name) => name !== 'create_entities'),
    );
  });
});

describe('a token that cannot be had names what is wrong', () => {
  it('the issuer: nothing answers there', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const error = await refusal({ issuer: nowhere });
    expect(error.message).toMatch(/the issuer is wrong: no authorization server metadata/);
  });

  it('the issuer: its metadata names another issuer', async () => {
    const error = await refusal({ issuer: `${as.issuer}/` });
    expect(error.message).toMatch(/the issuer is wrong: .*names another issuer/);
    // What the document says is not quoted back: it may be an internal service's answer.
    expect(error.message).not.toContain(JSON.stringify(as.issuer));
  });

  it('the client: a wrong secret', async () => {
    const wrong = 'not-the-secret-value';
    const error = await refusal({ credentials: { clientId: OPERATOR.id, clientSecret: wrong } });
    expect(error.message).toMatch(/the client is wrong: client mcp-operator was refused/);
    expect(error.message).not.toContain(wrong);
  });

  it('the audience: a resource the issuer does not know', async () => {
    const error = await refusal({ resource: 'http://unknown.example/mcp' });
    expect(error.message).toMatch(
      /the audience is wrong: no token for the resource http:\/\/unknown.example\/mcp/,
    );
  });

  it('the scope: one the client may not have', async () => {
    const error = await refusal({ scopes: [REQUIRED, 'memory:write'] });
    expect(error.message).toMatch(/the scope is wrong: the scopes "mcp:tools memory:write"/);
  });

  it('the issuer: an address the egress policy denies', async () => {
    const guard = new EgressGuard(
      egressPolicy({ inCluster: false, denied: ['127.0.0.0/8'], allowed: [] }),
    );
    const error = await refusal({ dispatcher: guardedDispatcher(guard) });
    expect(error.message).toMatch(/the issuer is wrong: .*127\.0\.0\.0\/8/);
  });
});

/**
 * A tenant's issuer whose metadata sends the token request to an internal service (the
 * issuer and the "internal" service are both real servers here): what that service answers
 * must not come back through status, as for `spec.url` (status, media type and size only).
 */
describe('a token endpoint at an internal service', () => {
  const SECRET = 'db_password=hunter2';
  let servers: Server[] = [];

  afterAll(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    servers = [];
  });

  async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** An issuer whose metadata names `internal` + `path` as its token endpoint. */
  async function issuerPointingAt(tokenEndpoint: string): Promise<string> {
    let issuer = '';
    issuer = await listen((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer, token_endpoint: tokenEndpoint }));
    });
    return issuer;
  }

  it.each([
    [
      'an error whose error_description quotes the service',
      400,
      'application/json',
      JSON.stringify({ error: 'invalid_request', error_description: SECRET }),
    ],
    ['a page that is not JSON', 200, 'text/plain', `${SECRET}\nroot:x:0:0`],
    ['JSON without an access token', 200, 'application/json', JSON.stringify({ note: SECRET })],
    [
      'an error code that is not one of RFC 6749',
      400,
      'application/json',
      JSON.stringify({ error: SECRET }),
    ],
  ])('%s: status, media type and size only', async (_what, status, type, body) => {
    const internal = await listen((_req, res) => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    });
    const error = await refusal({ issuer: await issuerPointingAt(`${internal}/internal`) });
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('root:x');
    expect(error.message).toContain(`HTTP ${status}`);
    expect(error.message).toContain(`${type} body of ${Buffer.byteLength(body)} bytes`);
  });

  it('keeps an RFC 6749 error code, which names the part to fix', async () => {
    const internal = await listen((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_client', error_description: SECRET }));
    });
    const error = await refusal({ issuer: await issuerPointingAt(`${internal}/token`) });
    expect(error.message).toMatch(
      /the client is wrong: client mcp-operator was refused \(HTTP 401 invalid_client/,
    );
    expect(error.message).not.toContain('hunter2');
  });
});
