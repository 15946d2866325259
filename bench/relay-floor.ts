/**
 * The floor of any Streamable HTTP front of a stdio server written on node:http: a relay that
 * does only what cannot be left out (bench/relay-core.ts) and none of what the bridge must do
 * (no Origin, media type, size, budget or JSON-RPC checks, no id rewriting, no timeouts, no
 * SSE, no metrics). What the bridge costs beyond this relay is its own; what this relay costs
 * beyond direct stdio is node:http and the extra process hop, which no change to the bridge's
 * code can remove. bench/relay-floor-net.ts and bench/relay-floor-uws.ts are the same relay
 * behind other fronts.
 *
 *   node bench/relay-floor.ts <port> <server command…>
 */

import { createServer, type ServerResponse } from 'node:http';
import { Relays, type Reply } from './relay-core.ts';

const [port, ...command] = process.argv.slice(2);
const relays = new Relays(command);

const replyOn =
  (res: ServerResponse): Reply =>
  (status, session, json) => {
    const headers = session === undefined ? [] : ['mcp-session-id', session];
    if (json === undefined) return void res.writeHead(status, headers).end();
    headers.push('content-type', 'application/json');
    headers.push('content-length', String(Buffer.byteLength(json)));
    res.writeHead(status, headers).end(json);
  };

const server = createServer((req, res) => {
  const session = req.headers['mcp-session-id'] as string | undefined;
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () =>
    relays.handle(req.method!, session, Buffer.concat(chunks).toString('utf8'), replyOn(res)),
  );
});
server.keepAliveTimeout = 65_000;
server.listen(Number(port), '127.0.0.1');
process.on('SIGTERM', () => {
  relays.close();
  server.close();
  server.closeAllConnections();
});
