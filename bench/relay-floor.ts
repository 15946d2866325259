/**
 * The floor of any Streamable HTTP front of a stdio server written on node:http: a relay that
 * does only what cannot be left out (one child per session, the body passed on as a line, the
 * child's line passed back as the answer) and none of what the bridge must do (no Origin,
 * media type, size, budget or JSON-RPC checks, no id rewriting, no timeouts, no SSE, no
 * metrics). Not a bridge: it trusts its one client, the bench. What the bridge costs beyond
 * this relay is its own; what this relay costs beyond direct stdio is node:http and the extra
 * process hop, which no change to the bridge's code can remove.
 *
 *   node bench/relay-floor.ts <port> <server command…>
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';

const [port, command, ...args] = process.argv.slice(2);

class Relay {
  readonly id = randomUUID();
  readonly #child: ChildProcess;
  /** Answers still owed, oldest first: a stdio server answers one session's requests in order. */
  readonly #waiting: ServerResponse[] = [];
  #partial = '';

  constructor() {
    this.#child = spawn(command!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.#child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (this.#partial + chunk).split('\n');
      this.#partial = lines.pop()!;
      for (const line of lines) this.#answer(line);
    });
  }

  send(body: string, res: ServerResponse | undefined): void {
    if (res) this.#waiting.push(res);
    this.#child.stdin!.write(`${body}\n`);
  }

  #answer(line: string): void {
    const res = this.#waiting.shift();
    if (!res) return;
    res.writeHead(200, [
      'content-type',
      'application/json',
      'mcp-session-id',
      this.id,
      'content-length',
      String(Buffer.byteLength(line)),
    ]);
    res.end(line);
  }

  close(): void {
    this.#child.stdin!.end();
  }
}

const relays = new Map<string, Relay>();

const server = createServer((req, res) => {
  const id = req.headers['mcp-session-id'] as string | undefined;
  if (req.method === 'DELETE') {
    if (id !== undefined) relays.get(id)?.close();
    if (id !== undefined) relays.delete(id);
    res.writeHead(204).end();
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const message = JSON.parse(body) as { id?: unknown };
    let relay = id === undefined ? undefined : relays.get(id);
    if (!relay) {
      relay = new Relay();
      relays.set(relay.id, relay);
    }
    const isRequest = message.id !== undefined;
    relay.send(body, isRequest ? res : undefined);
    if (!isRequest) res.writeHead(202, ['mcp-session-id', relay.id]).end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(port), '127.0.0.1');
process.on('SIGTERM', () => {
  for (const relay of relays.values()) relay.close();
  server.close();
  server.closeAllConnections();
});
