/**
 * The console's door (src/console/guard.ts) on a real fastify instance, through its inject
 * API: Host, Origin, the token and its cookie, CSRF on writes, and the headers of every answer.
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTENT_SECURITY_POLICY,
  CSRF_HEADER,
  cookieName,
  cookieValue,
  guard,
  newSecrets,
} from '../../src/console/guard.ts';

const PORT = 8123;
const secrets = newSecrets();
const app = Fastify();
const host = `127.0.0.1:${PORT}`;
const cookie = `${cookieName(PORT)}=${secrets.token}`;

beforeAll(async () => {
  guard(app, secrets, () => PORT);
  app.get('/', (_request, reply) => reply.send('page'));
  app.get('/api/thing', (_request, reply) => reply.send({ ok: true }));
  app.post('/api/thing', (_request, reply) => reply.send({ written: true }));
  await app.ready();
});

afterAll(() => app.close());

describe('the console guard', () => {
  it('trades the token in the URL for a cookie and a URL without it', async () => {
    const answer = await app.inject({ url: `/?token=${secrets.token}`, headers: { host } });
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/');
    const set = String(answer.headers['set-cookie']);
    expect(set).toContain(`${cookie};`);
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Strict');
    expect(cookieValue(set.split(';')[0], cookieName(PORT))).toBe(secrets.token);
  });

  it('refuses every request without the token, and a wrong token', async () => {
    for (const url of ['/', '/api/thing', '/?token=wrong', `/api/thing?token=${secrets.token}`]) {
      const answer = await app.inject({ url, headers: { host } });
      expect(answer.statusCode, url).toBe(401);
      expect(answer.json()).toMatchObject({ code: 'CONSOLE_TOKEN' });
    }
    const stale = await app.inject({
      url: '/api/thing',
      headers: { host, cookie: `${cookieName(PORT)}=x` },
    });
    expect(stale.statusCode).toBe(401);
  });

  it('answers only to its loopback names (DNS rebinding)', async () => {
    for (const name of ['evil.example:8123', '127.0.0.1:9999', 'localhost', '']) {
      const answer = await app.inject({ url: '/api/thing', headers: { host: name, cookie } });
      expect(answer.statusCode, name).toBe(421);
    }
    for (const name of [host, `localhost:${PORT}`, `[::1]:${PORT}`]) {
      const answer = await app.inject({ url: '/api/thing', headers: { host: name, cookie } });
      expect(answer.statusCode, name).toBe(200);
    }
  });

  it('refuses a request another origin sends', async () => {
    const answer = await app.inject({
      url: '/api/thing',
      headers: { host, cookie, origin: 'http://evil.example' },
    });
    expect(answer.statusCode).toBe(403);
    expect(answer.json()).toMatchObject({ code: 'CONSOLE_ORIGIN' });
  });

  it('takes a write only from its own origin, with the CSRF token', async () => {
    const write = (headers: Record<string, string>) =>
      app.inject({
        method: 'POST',
        url: '/api/thing',
        payload: {},
        headers: { host, cookie, ...headers },
      });
    expect((await write({})).statusCode).toBe(403);
    expect((await write({ origin: `http://${host}` })).json()).toMatchObject({
      code: 'CONSOLE_CSRF',
    });
    expect((await write({ origin: `http://${host}`, [CSRF_HEADER]: 'nope' })).statusCode).toBe(403);
    const ok = await write({ origin: `http://${host}`, [CSRF_HEADER]: secrets.csrf });
    expect(ok.statusCode).toBe(200);
    expect((await write({ origin: 'null', [CSRF_HEADER]: secrets.csrf })).statusCode).toBe(403);
  });

  it('sends a strict CSP and the other protective headers with every answer, refusals included', async () => {
    for (const headers of [{ host, cookie }, { host: 'evil.example' }]) {
      const answer = await app.inject({ url: '/api/thing', headers });
      expect(answer.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['referrer-policy']).toBe('no-referrer');
    }
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(CONTENT_SECURITY_POLICY).toContain("require-trusted-types-for 'script'");
  });
});
