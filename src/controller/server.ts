/**
 * The operator's one HTTP server: liveness, readiness and metrics, as the kubelet probes and
 * Prometheus expect them. `/readyz` turns 200 once every cache has synced: before that the
 * controller would act on a partial view of the cluster.
 */
import fastify, { LogController } from 'fastify';
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

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  // Probes and scrapes every few seconds would drown the log: no per-request lines.
  const logController = new LogController({ disableRequestLogging: true });
  const app = fastify({ loggerInstance: options.log, logController });
  app.get('/healthz', (_req, reply) => reply.send('ok\n'));
  app.get('/readyz', (_req, reply) =>
    options.ready() ? reply.send('ok\n') : reply.code(503).send('caches not synced\n'),
  );
  app.get('/metrics', async (_req, reply) =>
    reply.type(options.registry.contentType).send(await options.registry.metrics()),
  );
  const { host, port } = parseAddress(options.address);
  await app.listen({ host, port });
  const bound = app.server.address();
  const boundPort = typeof bound === 'object' && bound !== null ? bound.port : port;
  return { url: `http://${host}:${boundPort}`, close: () => app.close() };
}
