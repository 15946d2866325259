/**
 * Real MCP servers for discovery tests, each on 127.0.0.1 with a port the kernel picks:
 * - `startEverything()`: the reference server `@modelcontextprotocol/server-everything` in its
 *   Streamable HTTP mode (SDK 1.x, revision 2025-11-25, sessions), as its own process.
 * - `startModern(tools)`: a server built with the v2 SDK (`createMcpHandler`), which speaks
 *   2026-07-28 (`server/discover`, stateless) and serves 2025 clients statelessly.
 * - `startScripted(script)`: a small legacy-era MCP server written here, whose tools/list pages
 *   a test controls (pagination, size, broken definitions, SSE answers).
 * - `startHttp(handler)`: a plain node:http server; `hostile` has the broken ones.
 * - `sdkListTools(url)`: what the official SDK client lists, the reference discovery must match.
 * Each returns `close()`, which ends open connections and the process it started.
 */

import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { afterEach } from 'vitest';
export { startEverything } from '../support/everything.ts';

export interface Running {
  url: string;
  close(): Promise<void>;
}

const tracked: Running[] = [];
afterEach(async () => {
  await Promise.all(tracked.splice(0).map((server) => server.close()));
});

/** The server once it runs; closed after the test. */
export async function track<T extends Running>(server: Promise<T>): Promise<T> {
  const running = await server;
  tracked.push(running);
  return running;
}

export async function startHttp(
  handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
  host = '127.0.0.1',
): Promise<Running & { server: Server }> {
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((error: unknown) => {
      res.destroy(error as Error);
    });
  });
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host}:${port}/mcp`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A tool as a test writes it: plain JSON, exactly what tools/list should return. */
export interface ToolFixture {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations?: Record<string, boolean | string>;
}

export async function startModern(
  tools: () => readonly ToolFixture[],
  options: { token?: string; host?: string } = {},
): Promise<Running> {
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'fixture', version: '1.2.3' });
    for (const tool of tools()) {
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: fromJsonSchema(tool.inputSchema),
          outputSchema: tool.outputSchema && fromJsonSchema(tool.outputSchema),
          annotations: tool.annotations,
        },
        () => ({ content: [{ type: 'text', text: 'ok' }] }),
      );
    }
    return server;
  });
  const node = toNodeHandler(handler);
  const running = await startHttp(async (req, res) => {
    if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
      return;
    }
    await node(req, res);
  }, options.host);
  return {
    url: running.url,
    async close() {
      await handler.close();
      await running.close();
    },
  };
}

/** What a scripted server answers; anything not given behaves like a plain legacy server. */
export interface Script {
  /** The tools/list page for a cursor (undefined: the first page). */
  page(cursor: string | undefined): { tools: unknown[]; nextCursor?: unknown };
  /** Answer requests as an SSE stream, with a progress notification before the response. */
  sse?: boolean;
  /** Called for each JSON-RPC method (and for DELETE) the server receives. */
  seen?: (method: string) => void;
  /** Answers a message itself instead of the script when it returns true. */
  override?: (message: { id?: number; method: string }, res: ServerResponse) => boolean;
}

/**
 * Speaks 2025-11-25 the way SDK 1.x servers do: a modern probe without a session gets
 * 400 "Server not initialized"; initialize gets a session id; DELETE ends the session.
 */
export function startScripted(script: Script): Promise<Running & { server: Server }> {
  return startHttp(async (req, res) => {
    if (req.method === 'DELETE') {
      script.seen?.('DELETE');
      res.writeHead(200).end();
      return;
    }
    const message = JSON.parse(await bodyOf(req)) as {
      id?: number;
      method: string;
      params?: { cursor?: string };
    };
    script.seen?.(message.method);
    if (script.override?.(message, res) === true) return;
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    if (message.method !== 'initialize' && req.headers['mcp-session-id'] !== 'session-1') {
      const error = { code: -32000, message: 'Bad Request: Server not initialized' };
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error }));
      return;
    }
    const result =
      message.method === 'initialize'
        ? {
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 'scripted', version: '0.0.1' },
          }
        : script.page(message.params?.cursor);
    respond(res, script.sse === true, { jsonrpc: '2.0', id: message.id, result });
  });
}

function respond(res: ServerResponse, sse: boolean, message: object): void {
  const headers = { 'mcp-session-id': 'session-1' };
  if (!sse) {
    res.writeHead(200, { ...headers, 'content-type': 'application/json' });
    res.end(JSON.stringify(message));
    return;
  }
  res.writeHead(200, { ...headers, 'content-type': 'text/event-stream' });
  const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } };
  res.write(`id: 1\ndata:\n\n`);
  res.write(`: a comment line\n\nevent: message\ndata: ${JSON.stringify(progress)}\n\n`);
  res.end(`id: 2\ndata: ${JSON.stringify(message)}\n\n`);
}

export async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A small valid tool, for fixtures. */
export const fixtureTool = (name: string, extra: Partial<ToolFixture> = {}): ToolFixture => ({
  name,
  description: `The ${name} tool`,
  inputSchema: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] },
  ...extra,
});

/** Writes the chunks `next` returns (until null) as fast as the client reads them. */
export function flood(res: ServerResponse, contentType: string, next: () => string | null): void {
  res.writeHead(200, { 'content-type': contentType });
  const pump = () => {
    for (;;) {
      const chunk = next();
      if (chunk === null) return void res.end();
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

/**
 * Broken and hostile servers, shared by the discovery client's tests and the operator's: each
 * must end as a clear error, never a crash or a hang.
 */
export const hostile = {
  /** 500 with a text body on every request. */
  failing: () =>
    startHttp((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('database on fire');
    }),
  /** A legacy server whose initialize answer is a JSON-RPC error of 40,000 characters. */
  hugeRpcError: () =>
    startScripted({
      page: () => ({ tools: [] }),
      override(message, res) {
        if (message.method !== 'initialize') return false;
        const error = { code: -32603, message: `boom\u001b[2J${'x'.repeat(40_000)}` };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error }));
        return true;
      },
    }),
  /** Tools named with an escape sequence and ten names of 4,000 characters, besides a fine one. */
  poisonedNames: () =>
    startScripted({
      page: () => ({
        tools: [
          fixtureTool('fine'),
          fixtureTool('evil\u001b[2J'),
          ...Array.from({ length: 10 }, (_, i) => fixtureTool(`${i}${'n'.repeat(3_999)}`)),
        ],
      }),
    }),
  /** JSON that stops in the middle. */
  invalidJson: () =>
    startHttp((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0",');
    }),
  /** Accepts every request and never answers. */
  hanging: () => startHttp(() => undefined),
  /** An SSE stream of keep-alive comments that never ends. */
  endlessKeepAlives: () =>
    startHttp((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => res.write(': keep-alive\n\n'), 5);
      res.on('close', () => clearInterval(timer));
    }),
  /** nextCursor that comes back. */
  cursorLoop: () => startScripted({ page: () => ({ tools: [], nextCursor: 'again' }) }),
  /** 10,000 tools in pages of 500; `pages()` counts the pages served. */
  async tenThousandTools(): Promise<Running & { pages(): number }> {
    let pages = 0;
    const running = await startScripted({
      page(cursor) {
        pages++;
        const start = Number(cursor ?? 0);
        const tools = Array.from({ length: 500 }, (_, i) => fixtureTool(`t${start + i}`));
        return { tools, nextCursor: start + 500 < 10_000 ? String(start + 500) : undefined };
      },
    });
    return { ...running, pages: () => pages };
  },
  /** A tools/list answer of `total` bytes (64 KiB tools); `sent()` counts what was written. */
  async hugeList(total = 50 * 1024 * 1024): Promise<Running & { sent(): number }> {
    const big = JSON.stringify(fixtureTool('big', { description: 'y'.repeat(64 * 1024) }));
    let sent = 0;
    const running = await startScripted({
      page: () => ({ tools: [] }),
      override(message, res) {
        if (message.method !== 'tools/list') return false;
        const head = `{"jsonrpc":"2.0","id":${message.id},"result":{"tools":[${big}`;
        flood(res, 'application/json', () => {
          if (sent >= total) return null;
          const chunk = sent === 0 ? head : `,${big}`;
          sent += chunk.length;
          return chunk;
        });
        return true;
      },
    });
    return { ...running, sent: () => sent };
  },
};

/**
 * Every tool a server lists, all pages, as the official SDK client sees them: the independent
 * reference for what discovery should have found.
 */
export async function sdkListTools(
  url: string,
  token?: string,
  capabilities: ClientCapabilities = {},
): Promise<Tool[]> {
  const client = new Client({ name: 'reference', version: '1.0.0' }, { capabilities });
  const headers = token === undefined ? undefined : { authorization: `Bearer ${token}` };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: headers && { headers },
  });
  await client.connect(transport);
  try {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  } finally {
    await transport.terminateSession();
    await client.close();
  }
}
