/**
 * The console's web server (fastify): the page, its assets, a JSON API and the live stream,
 * every request through the guard (guard.ts) and every Kubernetes call as the user.
 *
 *   GET  /                               the page (the token's first use sets the cookie)
 *   GET  /assets/<file>                  its modules and stylesheet
 *   GET  /api/session                    who, where, and the CSRF token for writes
 *   GET  /api/fleet                      every MCPServer as a fleet row
 *   GET  /api/servers/<ns>/<name>        the server page: approved against current
 *   POST /api/servers/<ns>/<name>/preview  what approving would write (nothing is written)
 *   POST /api/servers/<ns>/<name>/approve  approve, onto the previewed resourceVersion only
 *   GET  /api/stream                     server-sent events: rows and touched servers
 */

import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { readBaseline } from '../discovery/baseline.ts';
import { OperatorError } from '../errors.ts';
import { MCP_SERVER, type StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { KubeApiError, errorText, isNotFound, type KubeClient } from '../kube/client.ts';
import { objectPath } from '../kube/resources.ts';
import type { Access } from './access.ts';
import {
  APPROVAL_BODY,
  PREVIEW_BODY,
  UnconfirmedApproval,
  applyApproval,
  previewApproval,
} from './approval.ts';
import { Assets } from './assets.ts';
import { SECURITY_HEADERS, guard, type Secrets } from './guard.ts';
import { serverReview } from './review.ts';
import { Snapshots } from './snapshots.ts';
import { Streams } from './stream.ts';
import type { ConsoleWatch } from './watch.ts';
import type { ApprovalRequest, PreviewRequest, Session } from './web/api-types.ts';

export interface ConsoleServerOptions {
  client: KubeClient;
  watch: ConsoleWatch;
  access: Access;
  secrets: Secrets;
  session: Omit<Session, 'csrf'>;
  log: Logger;
}

/** Bytes of a request body: an approval is a list of names and a note. */
export const BODY_LIMIT = 256 * 1024;

export interface ConsoleServer {
  app: FastifyInstance;
  /** Starts listening on 127.0.0.1; resolves with the port (0 picks a free one). */
  listen(port: number): Promise<number>;
  close(): Promise<void>;
}

export function consoleServer(o: ConsoleServerOptions): ConsoleServer {
  let port = 0;
  const app = Fastify({
    // Requests are not logged (the token is in the first one's URL); failures go to o.log.
    logger: false,
    bodyLimit: BODY_LIMIT,
  });
  guard(app, o.secrets, () => port);
  const assets = new Assets();
  const snapshots = new Snapshots(o.client);
  const streams = new Streams();
  const unsubscribe = o.watch.subscribe((message) => streams.send(message));

  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof KubeApiError) {
      return reply.code(error.status === 403 || error.status === 404 ? error.status : 502).send({
        code: 'CONSOLE_KUBE_API',
        message: error.detail,
      });
    }
    if (error instanceof UnconfirmedApproval) {
      return reply.code(409).send({ code: error.code, message: error.message });
    }
    if (error instanceof OperatorError) {
      // A refusal the project names (not discovered yet, an invalid snapshot): the page shows it.
      return reply.code(409).send({ code: error.code, message: error.message });
    }
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 500) o.log.error({ err: error }, 'console request failed');
    return reply.code(status).send({
      code: 'CONSOLE_REQUEST',
      message: status >= 500 ? 'The console failed to answer; its log says why.' : errorText(error),
    });
  });

  app.get('/', async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(await assets.page()),
  );

  // Browsers ask for it unprompted; the console has none, and says so without an error.
  app.get('/favicon.ico', (_request, reply) => reply.code(204).send());

  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const asset = await assets.get(request.params.name);
    if (asset === undefined) return notFound(reply, 'No such asset.');
    return reply.type(asset.type).send(asset.body);
  });

  app.get('/api/session', (_request, reply) =>
    reply.send({ ...o.session, csrf: o.secrets.csrf } satisfies Session),
  );

  app.get('/api/fleet', (_request, reply) => reply.send({ rows: o.watch.rows() }));

  app.get<{ Params: { namespace: string; name: string } }>(
    '/api/servers/:namespace/:name',
    async (request, reply) => {
      const { namespace, name } = request.params;
      // Read afresh as the user: the page shows the server as it is, and the watch keeps only rows.
      const server = await o.client
        .request<StoredMCPServer>({ method: 'GET', path: objectPath(MCP_SERVER, namespace, name) })
        .catch((error: unknown) => {
          if (isNotFound(error)) return undefined;
          throw error;
        });
      if (server === undefined) return notFound(reply, `No MCPServer ${namespace}/${name}.`);
      const [snapshot, baseline, access] = await Promise.all([
        snapshots.current(server),
        readBaseline(o.client, server).catch((error: unknown) => ({
          kind: 'invalid' as const,
          message: `The baseline cannot be read: ${errorText(error)}`,
        })),
        o.access.approval(namespace),
      ]);
      return serverReview({
        server,
        snapshot,
        baseline,
        events: o.watch.events(namespace, name),
        access,
      });
    },
  );

  type Target = { Params: { namespace: string; name: string } };

  app.post<Target & { Body: PreviewRequest }>(
    '/api/servers/:namespace/:name/preview',
    { schema: { body: PREVIEW_BODY } },
    (request) =>
      previewApproval(o.client, request.params.namespace, request.params.name, request.body),
  );

  app.post<Target & { Body: ApprovalRequest }>(
    '/api/servers/:namespace/:name/approve',
    { schema: { body: APPROVAL_BODY } },
    (request) =>
      applyApproval(o.client, request.params.namespace, request.params.name, request.body),
  );

  app.get('/api/stream', (request, reply) => {
    reply.hijack();
    if (!streams.open(reply.raw, SECURITY_HEADERS)) {
      reply.raw.writeHead(503, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify({ code: 'CONSOLE_BUSY', message: 'Too many live streams.' }));
    }
    request.raw.on('close', () => reply.raw.end());
  });

  return {
    app,
    async listen(wanted: number) {
      await app.listen({ host: '127.0.0.1', port: wanted });
      const address = app.server.address();
      port = typeof address === 'object' && address !== null ? address.port : wanted;
      return port;
    },
    async close() {
      unsubscribe();
      streams.close();
      await app.close();
    },
  };
}

function notFound(reply: FastifyReply, message: string) {
  return reply.code(404).send({ code: 'CONSOLE_NOT_FOUND', message });
}
