/**
 * Fixture for bench/discovery.ts: one process serving many light MCP servers, one per path
 * `/s/<i>/mcp`, each with its own tool set (10-19 tools). `modern` serves with the v2 SDK
 * (2026-07-28, server/discover); `legacy` with the v1 SDK in stateless mode (2025-11-25, so
 * discovery takes the initialize fallback). With `catalog`, each server also offers 5 prompts,
 * 5 resources and 2 resource templates. Prints `listening <port>` when ready.
 *
 * `POST /drift` changes one tool's description on every tenth server (index divisible by 10),
 * for a discovery round in which 10% of the servers drifted.
 *
 * With `--latency=<ms>`, each answer waits that long first: a server's own latency, which with
 * the operator's discovery concurrency bounds a discovery round.
 *
 * Usage: node bench/discovery-servers.ts <modern|legacy> [--tools=<per server; default 10-19>]
 *        [--catalog] [--latency=<ms>]
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  fromJsonSchema,
  McpServer,
  ResourceTemplate,
} from '@modelcontextprotocol/server';
import { Server as LegacyServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

interface BenchTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, object>; required: string[] };
}

const option = (name: string) =>
  process.argv.slice(3).find((arg) => arg === name || arg.startsWith(`${name}=`));
const toolsOption = option('--tools');
const toolCount = toolsOption === undefined ? undefined : Number(toolsOption.split('=')[1]);
const latencyMs = Number(option('--latency')?.split('=')[1] ?? 0);
/** How often `POST /drift` was called: the drifted servers' first tool says so. */
let drifts = 0;

function toolsOf(server: number): BenchTool[] {
  const drifted = drifts > 0 && server % 10 === 0;
  return Array.from({ length: toolCount ?? 10 + (server % 10) }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool ${i} of server ${server}: looks things up in the ${i}th index.${drifted && i === 0 ? ` Revised ${drifts}.` : ''}`,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to look for', maxLength: 500 },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
        mode: { type: 'string', enum: ['fast', 'exact'] },
      },
      required: ['query'],
    },
  }));
}

const withCatalog = option('--catalog') !== undefined;

/** What each server offers besides tools, in catalog mode: the text a model reads. */
function catalogOf(server: number) {
  const prompts = Array.from({ length: 5 }, (_, i) => ({
    name: `prompt_${i}`,
    description: `Prompt ${i} of server ${server}: summarises the ${i}th report for the reader.`,
  }));
  const resources = Array.from({ length: 5 }, (_, i) => ({
    uri: `bench://${server}/doc/${i}`,
    name: `doc ${i}`,
    description: `Document ${i} of server ${server}.`,
    mimeType: 'text/markdown',
  }));
  const resourceTemplates = Array.from({ length: 2 }, (_, i) => ({
    uriTemplate: `bench://${server}/item${i}/{id}`,
    name: `item ${i}`,
    description: `Item ${i} of server ${server}, by id.`,
    mimeType: 'application/json',
  }));
  return { prompts, resources, resourceTemplates };
}

const ok = () => ({ content: [{ type: 'text' as const, text: 'ok' }] });
const text = (uri: URL) => ({ contents: [{ uri: uri.href, text: 'ok' }] });
const message = () => ({
  messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'ok' } }],
});

function serverIndex(url: string | undefined): number {
  return Number(/\/s\/(\d+)\/mcp/.exec(url ?? '')?.[1] ?? 0);
}

function modernHandler(): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // Every tool has the same input schema: converted once, the SDK compiles its validator once,
  // instead of 100 times per request, which made this fixture, not the operator, the bound.
  const inputSchema = fromJsonSchema(toolsOf(0)[0]!.inputSchema);
  const handler = createMcpHandler((ctx) => {
    const server = new McpServer({ name: 'bench', version: '1.0.0' });
    for (const { name, description } of toolsOf(serverIndex(ctx.requestInfo?.url))) {
      server.registerTool(name, { description, inputSchema }, ok);
    }
    if (withCatalog) registerCatalog(server, serverIndex(ctx.requestInfo?.url));
    return server;
  });
  return toNodeHandler(handler);
}

function registerCatalog(server: McpServer, index: number): void {
  const { prompts, resources, resourceTemplates } = catalogOf(index);
  for (const { name, description } of prompts)
    server.registerPrompt(name, { description }, message);
  for (const { uri, name, ...metadata } of resources) {
    server.registerResource(name, uri, metadata, text);
  }
  for (const { uriTemplate, name, ...metadata } of resourceTemplates) {
    const template = new ResourceTemplate(uriTemplate, { list: undefined });
    server.registerResource(name, template, metadata, text);
  }
}

function legacyHandler(): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const capabilities = withCatalog ? { tools: {}, prompts: {}, resources: {} } : { tools: {} };
    const server = new LegacyServer({ name: 'bench', version: '1.0.0' }, { capabilities });
    const tools = toolsOf(serverIndex(req.url));
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    if (withCatalog) {
      const { prompts, resources, resourceTemplates } = catalogOf(serverIndex(req.url));
      server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts }));
      server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources }));
      server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates }));
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
}

const handle = process.argv[2] === 'legacy' ? legacyHandler() : modernHandler();
const http = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/drift') {
    drifts += 1;
    res.end();
    return;
  }
  const answer = () => void handle(req, res).catch(() => res.destroy());
  if (latencyMs > 0) setTimeout(answer, latencyMs);
  else answer();
});
http.keepAliveTimeout = 60_000;
http.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(http.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => http.close(() => process.exit(0)));
