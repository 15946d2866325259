/**
 * The relay floor (bench/relay-floor.ts) behind uWebSockets.js, an HTTP server in C++ with a
 * thin binding: what a front outside Node's HTTP stack costs per call. uWebSockets.js is not
 * a dependency of the project (docs/bridge.md says why); BENCH_UWS names the uws.js of a copy
 * that loads on this machine, and bench:bridge runs this row only when it is set.
 *
 *   BENCH_UWS=<path of uws.js> node bench/relay-floor-uws.ts <port> <server command…>
 */

import { createRequire } from 'node:module';
import { Relays, type Reply } from './relay-core.ts';

/** The part of uWebSockets.js' API this relay uses (its index.d.ts, v20). */
interface Uws {
  App(): App;
  us_listen_socket_close(socket: unknown): void;
}
interface App {
  any(pattern: string, handler: (res: Response, req: Request) => void): App;
  listen(host: string, port: number, done: (socket: unknown) => void): App;
}
interface Request {
  getMethod(): string;
  getHeader(lowerCaseName: string): string;
}
interface Response {
  onAborted(handler: () => void): Response;
  /** The chunk's memory is the server's and is reused once the handler returns. */
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): Response;
  cork(write: () => void): Response;
  writeStatus(status: string): Response;
  writeHeader(name: string, value: string): Response;
  end(body: string): Response;
  endWithoutBody(): Response;
}

const [port, ...command] = process.argv.slice(2);
const uws = createRequire(import.meta.url)(process.env.BENCH_UWS!) as Uws;
const relays = new Relays(command);

const STATUS = {
  200: '200 OK',
  202: '202 Accepted',
  204: '204 No Content',
  405: '405 Method Not Allowed',
};

const replyOn =
  (res: Response, aborted: () => boolean): Reply =>
  (status, session, json) => {
    if (aborted()) return;
    res.cork(() => {
      res.writeStatus(STATUS[status]);
      if (session !== undefined) res.writeHeader('mcp-session-id', session);
      if (json !== undefined) res.writeHeader('content-type', 'application/json');
      if (status === 204) res.endWithoutBody();
      else res.end(json ?? '');
    });
  };

let listening: unknown;
uws
  .App()
  .any('/*', (res, req) => {
    const method = req.getMethod().toUpperCase();
    const session = req.getHeader('mcp-session-id') || undefined;
    let gone = false;
    res.onAborted(() => (gone = true));
    const reply = replyOn(res, () => gone);
    if (method !== 'POST') return relays.handle(method, session, '', reply);
    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) relays.handle(method, session, Buffer.concat(chunks).toString('utf8'), reply);
    });
  })
  .listen('127.0.0.1', Number(port), (socket) => (listening = socket));
process.on('SIGTERM', () => {
  relays.close();
  uws.us_listen_socket_close(listening);
  process.exit(0);
});
