/**
 * The relay floor (bench/relay-floor.ts) behind a front on node:net instead of node:http: what
 * Node's JS HTTP layers (llhttp's callbacks, IncomingMessage and ServerResponse, their streams)
 * cost per call. NOT AN HTTP SERVER TO SHIP: it parses just the requests the bench sends
 * (HTTP/1.1, Content-Length bodies, header names and values on one line each) and trusts
 * them; no chunked bodies, no limits, no header validation, no error answers.
 *
 *   node bench/relay-floor-net.ts <port> <server command…>
 */

import { createServer, type Socket } from 'node:net';
import { Relays, type Reply } from './relay-core.ts';

const [port, ...command] = process.argv.slice(2);
const relays = new Relays(command);

const REASONS = { 200: 'OK', 202: 'Accepted', 204: 'No Content', 405: 'Method Not Allowed' };
const HEAD_END = Buffer.from('\r\n\r\n');

const replyOn =
  (socket: Socket, next: () => void): Reply =>
  (status, session, json) => {
    let head = `HTTP/1.1 ${status} ${REASONS[status]}\r\n`;
    if (session !== undefined) head += `mcp-session-id: ${session}\r\n`;
    if (status !== 204)
      head += `content-length: ${json === undefined ? 0 : Buffer.byteLength(json)}\r\n`;
    if (json !== undefined) head += 'content-type: application/json\r\n';
    socket.write(`${head}\r\n${json ?? ''}`);
    next();
  };

/** One request at a time per connection, as the bench's client (pipelining 1) sends them. */
function serve(socket: Socket): void {
  let buffered: Buffer = Buffer.alloc(0);
  let busy = false;
  const next = (): void => {
    busy = false;
    parse();
  };
  const parse = (): void => {
    if (busy) return;
    const headEnd = buffered.indexOf(HEAD_END);
    if (headEnd === -1) return;
    const lines = buffered.toString('latin1', 0, headEnd).split('\r\n');
    const method = lines[0]!.slice(0, lines[0]!.indexOf(' '));
    let length = 0;
    let session: string | undefined;
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      if (name === 'content-length') length = Number(line.slice(colon + 1));
      else if (name === 'mcp-session-id') session = line.slice(colon + 1).trim();
    }
    const bodyStart = headEnd + HEAD_END.length;
    if (buffered.length < bodyStart + length) return;
    const body = buffered.toString('utf8', bodyStart, bodyStart + length);
    buffered = buffered.subarray(bodyStart + length);
    busy = true;
    relays.handle(method, session, body, replyOn(socket, next));
  };
  socket.setNoDelay(true);
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    parse();
  });
  socket.on('error', () => socket.destroy());
}

const server = createServer(serve);
server.listen(Number(port), '127.0.0.1');
process.on('SIGTERM', () => {
  relays.close();
  server.close();
  process.exit(0);
});
