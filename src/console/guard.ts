/**
 * The console's door, checked on every request before any route runs (a fastify onRequest
 * hook), in this order:
 *
 * 1. Host: only the loopback names of the console's own port. A page on another site cannot
 *    reach a loopback server through a name it controls (DNS rebinding): its requests carry
 *    that name in Host.
 * 2. Origin: when a browser says where a request comes from, it must be the console itself;
 *    a write must say it (Fetch sends Origin on every POST).
 * 3. The token: printed in the console's URL; the first page load trades it for a cookie
 *    (HttpOnly, SameSite=Strict, named for the port, since cookies ignore ports) and
 *    redirects to a URL without it. Every other request, the page's API calls and the live
 *    stream included, carries the cookie.
 * 4. CSRF, for writes: a second secret the page reads from /api/session (which no other
 *    origin can read: the console sends no CORS headers) and sends back in a header, with a
 *    JSON body. A form on another site can send neither.
 *
 * And on every answer the headers that keep server text inert: a Content-Security-Policy
 * without inline script or any remote source, and Trusted Types required, so that even a
 * mistaken innerHTML in the page throws instead of parsing markup.
 */

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface Secrets {
  token: string;
  csrf: string;
}

export function newSecrets(): Secrets {
  return {
    token: randomBytes(32).toString('base64url'),
    csrf: randomBytes(32).toString('base64url'),
  };
}

export const CSRF_HEADER = 'x-console-csrf';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The names a browser on this machine uses for the console; nothing else reaches it. */
export function allowedHosts(port: number): Set<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
}

export const cookieName = (port: number): string => `mcp-console-${port}`;

function same(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The value of cookie `name` in a Cookie header (RFC 6265 §5.4: `name=value; …`). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at !== -1 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

function refuse(reply: FastifyReply, status: number, code: string, message: string) {
  return reply.code(status).type('application/json').send({ code, message });
}

/** Installs the checks and headers; `port` is the one the console listens on. */
export function guard(app: FastifyInstance, secrets: Secrets, port: () => number): void {
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS);
  });
  app.addHook('onRequest', async (request, reply) => {
    const hosts = allowedHosts(port());
    if (!hosts.has(request.headers.host ?? '')) {
      return refuse(
        reply,
        421,
        'CONSOLE_HOST',
        'This console answers only on its loopback address.',
      );
    }
    const origin = request.headers.origin;
    const write = WRITES.has(request.method);
    if ((origin !== undefined || write) && !isOwnOrigin(origin, hosts)) {
      return refuse(
        reply,
        403,
        'CONSOLE_ORIGIN',
        'Requests must come from the console page itself.',
      );
    }
    if (!hasToken(request, secrets, port())) {
      if (request.method === 'GET' && request.url.startsWith('/?')) {
        const token = new URLSearchParams(request.url.slice(2)).get('token') ?? undefined;
        if (same(token, secrets.token)) return enter(reply, secrets, port());
      }
      return refuse(
        reply,
        401,
        'CONSOLE_TOKEN',
        'Open the console with the URL it printed: it holds the token.',
      );
    }
    if (write && !same(headerValue(request, CSRF_HEADER), secrets.csrf)) {
      return refuse(reply, 403, 'CONSOLE_CSRF', 'The page is out of date: reload it.');
    }
  });
}

function isOwnOrigin(origin: string | undefined, hosts: Set<string>): boolean {
  if (origin === undefined || !origin.startsWith('http://')) return false;
  return hosts.has(origin.slice('http://'.length));
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? undefined : value;
}

function hasToken(request: FastifyRequest, secrets: Secrets, port: number): boolean {
  return same(cookieValue(request.headers.cookie, cookieName(port)), secrets.token);
}

/** The token traded for a cookie, and a URL without it (so it leaves the address bar and history). */
function enter(reply: FastifyReply, secrets: Secrets, port: number) {
  const cookie = `${cookieName(port)}=${secrets.token}; HttpOnly; SameSite=Strict; Path=/`;
  return reply.code(303).header('set-cookie', cookie).header('location', '/').send();
}
