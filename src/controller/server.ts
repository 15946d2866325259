/**
 * The operator's one HTTP server: liveness, readiness and metrics, as the kubelet probes and
 * Prometheus expect them. `/readyz` turns 200 once every cache has synced: before that the
 * controller would act on a partial view of the cluster.
 *
 * Three fixed routes need no framework: on node:http the operator does not load fastify and
 * the schema compilers it brings (some 270 modules, 3 MiB of heap at idle).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { operatorError } from '../errors.ts';

export interface ServerOptions {
  /** `host:port`; an empty host listens on every interface, port 0 picks a free one. */
  address: string;
  registry: Registry;
  ready: () => boolean;
  log: Logger;
}

export interface RunningServer {
  /** `http://host:port` as bound. */
  url: string;
  close: () => Promise<void>;
}

export function parseAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const port = Number(address.slice(colon + 1));
  if (colon < 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw operatorError('MCPOP_INVALID_FLAG', '--metrics-address', `'${address}' is not host:port`);
  }
  return { host: address.slice(0, colon) || '0.0.0.0', port };
}

interface Reply {
  status: number;
  body: string;
  contentType?: string;
}

const PLAIN_TEXT = 'text/plain; charset=utf-8';

/** What each route answers; `undefined` for a path that is not one. */
function route(path: string, options: ServerOptions): (() => Promise<Reply>) | undefined {
  switch (path) {
    case '/healthz':
      return () => Promise.resolve({ status: 200, body: 'ok\n' });
    case '/readyz':
      return () =>
        Promise.resolve(
          options.ready()
            ? { status: 200, body: 'ok\n' }
            : { status: 503, body: 'caches not synced\n' },
        );
    case '/metrics':
      return async () => ({
        status: 200,
        body: await options.registry.metrics(),
        contentType: options.registry.contentType,
      });
    default:
      return undefined;
  }
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  options: ServerOptions,
): Promise<Reply> {
  // node:http passes on request targets the URL parser refuses (`http://[/`).
  const path = URL.parse(request.url ?? '/', 'http://operator')?.pathname;
  if (path === undefined) return { status: 400, body: 'bad request: the target is not a URL\n' };
  const handler = route(path, options);
  if (handler === undefined) return { status: 404, body: 'not found\n' };
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    // RFC 9110 §15.5.6: a 405 names the methods the resource supports.
    response.setHeader('allow', 'GET, HEAD');
    return { status: 405, body: 'method not allowed\n' };
  }
  try {
    return await handler();
  } catch (error) {
    options.log.error({ err: error, path }, 'operator HTTP request failed');
    return { status: 500, body: 'internal error\n' };
  }
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const server = createServer((request, response) => {
    // Nothing a request brings may escape it: an unhandled rejection would end the operator.
    answer(request, response, options)
      .catch((error: unknown): Reply => {
        options.log.error({ err: error }, 'operator HTTP request failed');
        return { status: 500, body: 'internal error\n' };
      })
      .then((reply) => {
        if (response.headersSent) return void response.destroy();
        response.writeHead(reply.status, { 'content-type': reply.contentType ?? PLAIN_TEXT });
        response.end(request.method === 'HEAD' ? undefined : reply.body);
      })
      .catch(() => response.destroy());
  });
  const { host, port } = parseAddress(options.address);
  server.listen(port, host);
  await once(server, 'listening');
  const bound = server.address();
  const boundPort = typeof bound === 'object' && bound !== null ? bound.port : port;
  return {
    url: `http://${host}:${boundPort}`,
    close: async () => {
      // Closes idle keep-alive connections too (Node 19+): a scraper's would hold it open.
      const closed = once(server, 'close');
      server.close();
      await closed;
    },
  };
}
