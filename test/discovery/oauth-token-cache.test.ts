/**
 * Discovery reuses its client-credentials token until shortly before it expires: counted at a
 * real authorization server (oidc-provider), which issues tokens for 600 s. The clock is the
 * cache's own lever, so that expiry needs no ten-minute wait.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthTokenCache, REFRESH_MARGIN_MS } from '../../src/discovery/oauth-token-cache.ts';
import { clientCredentialsToken, type TokenRequest } from '../../src/discovery/oauth-token.ts';
import { OperatorError } from '../../src/errors.ts';
import { AuthorizationServer } from '../oauth/authorization-server.ts';

const REQUIRED = 'mcp:tools';
const OPERATOR = {
  id: 'mcp-operator',
  secret: 'operator-secret-value',
  scopes: [REQUIRED, 'mcp:admin'],
};
const RESOURCE = 'http://127.0.0.1:1/mcp';
const OTHER_RESOURCE = 'http://127.0.0.1:2/mcp';
const TTL_MS = 600_000;
const TIMEOUT_MS = 5_000;
let as: AuthorizationServer;

beforeAll(async () => {
  as = await AuthorizationServer.start({
    host: '127.0.0.1',
    clients: [OPERATOR],
    resources: [RESOURCE, OTHER_RESOURCE].map((uri) => ({ uri, scopes: [REQUIRED, 'mcp:admin'] })),
  });
});

afterAll(async () => {
  await as?.close();
});

const request = (overrides: Partial<TokenRequest> = {}): TokenRequest => ({
  issuer: as.issuer,
  resource: RESOURCE,
  scopes: [REQUIRED],
  credentials: { clientId: OPERATOR.id, clientSecret: OPERATOR.secret },
  timeoutMs: TIMEOUT_MS,
  ...overrides,
});

/** A cache on a clock the test moves, and the token requests the issuer has seen since. */
function cacheOnClock() {
  const clock = { now: Date.now() };
  const cache = new OAuthTokenCache(clientCredentialsToken, () => clock.now);
  const before = as.tokenRequests.get(OPERATOR.id) ?? 0;
  const grants = () => (as.tokenRequests.get(OPERATOR.id) ?? 0) - before;
  return { cache, clock, grants };
}

describe('the discovery token cache', () => {
  it('reuses one token across runs while it has time left', async () => {
    const { cache, clock, grants } = cacheOnClock();
    const first = await cache.token(request());
    clock.now += TTL_MS / 2;
    expect(await cache.token(request())).toBe(first);
    expect(grants()).toBe(1);
  });

  it('asks again shortly before expiry: a token must outlive the run and the margin', async () => {
    const { cache, clock, grants } = cacheOnClock();
    const first = await cache.token(request());
    clock.now += TTL_MS - TIMEOUT_MS - REFRESH_MARGIN_MS - 1_000;
    expect(await cache.token(request())).toBe(first);
    clock.now += 1_000;
    expect(await cache.token(request())).not.toBe(first);
    expect(grants()).toBe(2);
  });

  it('keeps tokens apart by resource and scopes', async () => {
    const { cache, grants } = cacheOnClock();
    const plain = await cache.token(request());
    const other = await cache.token(request({ resource: OTHER_RESOURCE }));
    const wider = await cache.token(request({ scopes: [REQUIRED, 'mcp:admin'] }));
    expect(new Set([plain, other, wider]).size).toBe(3);
    expect(await cache.token(request({ scopes: ['mcp:admin', REQUIRED] }))).toBe(wider);
    expect(grants()).toBe(3);
  });

  it('does not hand out a cached token for a secret the issuer refuses', async () => {
    const { cache, grants } = cacheOnClock();
    await cache.token(request());
    const rotated = { clientId: OPERATOR.id, clientSecret: 'a-secret-the-issuer-refuses' };
    const refused = await cache.token(request({ credentials: rotated })).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(OperatorError);
    expect((refused as OperatorError).message).toMatch(/the client is wrong/);
    expect(grants()).toBe(2);
  });

  it('asks again once the server refused the token', async () => {
    const { cache, grants } = cacheOnClock();
    const first = await cache.token(request());
    cache.forget(as.issuer, RESOURCE);
    expect(await cache.token(request())).not.toBe(first);
    expect(grants()).toBe(2);
  });
});
