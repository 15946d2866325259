/**
 * The bridge's one node:http server: a table of routes by path, each request inside the entry
 * guard, and the socket settings that long-lived SSE streams and bursts of agents need. Raw
 * node:http, because the MCP endpoint needs exact control of status codes, headers and SSE
 * framing (ADR 0013).
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EntryGuard } from '../entry-guard.ts';
import { replyError, replyText } from '../replies.ts';
import { WIRE } from '../../mcp/jsonrpc.ts';

/** Connections the kernel may hold for the bridge before it accepts them. */
const LISTEN_BACKLOG = 4096;
/** Longer than the idle timeouts of common clients and load balancers (60 s). */
const KEEP_ALIVE_MS = 65_000;

export type Route = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
export type Routes = Record<string, Route>;

/** A server that answers each request by its path's route, 404 for other paths. */
export function routedServer(routes: Routes, guard: EntryGuard): Server {
  const server = createServer((req, res) => {
    guard.run(
      'http_request',
      { method: req.method },
      () => {
        const route = routeOf(routes, req.url ?? '/');
        if (route === 'malformed')
          return replyError(
            res,
            400,
            WIRE.INVALID_REQUEST,
            'Bad Request: the request target is not a URL',
          );
        if (!route) return replyText(res, 404, 'not found\n');
        // Routes answer synchronously when they can (endpoint.ts): a throw and a rejection alike.
        return route(req, res);
      },
      () => {
        if (!res.headersSent)
          replyError(res, 500, WIRE.INTERNAL_ERROR, 'Internal error in the bridge');
        else res.destroy();
      },
    );
  });
  // SSE streams are long-lived; only the time to receive a request is bounded.
  server.requestTimeout = 60_000;
  server.headersTimeout = 30_000;
  // Idle keep-alive connections are left for the client (or the load balancer in front) to
  // close. With Node's 5 s, a client that reuses a connection as the bridge closes it gets a
  // reset: under load the two timers fire together (seen in a test with a thousand sessions).
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  return server;
}

/** Listens on host:port (port 0: any free one); resolves to the origin, `http://host:port`. */
export async function listen(
  server: Server,
  where: { host: string; port: number },
): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Node's default backlog (511) overflows when a burst of agents connect at once while the
    // event loop is busy; the kernel then drops their handshakes, and some end in a reset.
    // The kernel caps it at net.core.somaxconn.
    server.listen({ port: where.port, host: where.host, backlog: LISTEN_BACKLOG }, resolve);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * The route of a request target. A bare path, as clients send it, is looked up as it is: no URL
 * parsed for every request. Anything else is parsed; node:http passes on targets the URL
 * parser refuses (`http://[/`), which are 'malformed'. Own keys only: a target is the client's.
 */
function routeOf(routes: Routes, target: string): Route | 'malformed' | undefined {
  if (Object.hasOwn(routes, target)) return routes[target];
  const url = URL.parse(target, 'http://bridge');
  if (url === null) return 'malformed';
  return Object.hasOwn(routes, url.pathname) ? routes[url.pathname] : undefined;
}
