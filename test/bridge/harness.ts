/**
 * Helpers for the bridge tests: a bridge running in this process in front of real child
 * processes, the official SDK client connected to it, and raw HTTP for what the SDK never
 * sends. Every bridge started here is closed after its test (children included).
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { startBridge, type BridgeOptions, type RunningBridge } from '../../src/bridge/server.ts';
import { testLogger } from '../support/log.ts';
import { waitFor } from '../support/wait.ts';
import { freePort } from '../support/ports.ts';

export const NODE = process.execPath;
/** The bin script of an installed package (these packages export no entry point to import). */
const packageBin = (name: string): string =>
  fileURLToPath(new URL(`../../node_modules/${name}/dist/index.js`, import.meta.url));

/** Real MCP servers from npm, run with node from node_modules (no npx download at test time). */
export const SERVERS = {
  everything: [NODE, packageBin('@modelcontextprotocol/server-everything'), 'stdio'],
  memory: [NODE, packageBin('@modelcontextprotocol/server-memory')],
  filesystem: (root: string) => [NODE, packageBin('@modelcontextprotocol/server-filesystem'), root],
  misbehaving: (...args: string[]) => [
    NODE,
    fileURLToPath(new URL('./fixtures/misbehaving-server.ts', import.meta.url)),
    ...args,
  ],
};

export interface HttpServerProcess {
  /** The server's MCP endpoint. */
  url: string;
  port: number;
  /** Stops it (SIGKILL: a crash) and waits for its exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts a server process that serves Streamable HTTP on a free port and waits until it
 * listens. `command` gets the port; `path` is its MCP endpoint. Stopped after the test.
 */
export async function startHttpServer(
  command: (port: number) => { argv: string[]; env?: Record<string, string> },
  path: string,
  port?: number,
): Promise<HttpServerProcess> {
  const chosen = port ?? (await freePort());
  const { argv, env } = command(chosen);
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: 'ignore',
    env: { ...process.env, ...env },
  });
  const exited = once(child, 'exit');
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  httpServers.push(kill);
  const url = `http://127.0.0.1:${chosen}${path}`;
  await waitFor(
    'the HTTP server to listen',
    async () => (await fetch(url, { method: 'DELETE' }).catch(() => undefined)) !== undefined,
  );
  return { url, port: chosen, kill };
}

/** Real HTTP MCP servers: the npm everything server in its Streamable HTTP mode. */
export const HTTP_SERVERS = {
  everything: (port: number) => ({
    argv: [NODE, packageBin('@modelcontextprotocol/server-everything'), 'streamableHttp'],
    env: { PORT: String(port) },
  }),
};

const httpServers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(httpServers.splice(0).map((kill) => kill()));
});

const running: RunningBridge[] = [];
const directories: string[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((bridge) => bridge.close()));
  await Promise.all(directories.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A temporary directory, removed after the test. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `mcp-${prefix}-`));
  directories.push(dir);
  return dir;
}

export async function startTestBridge(
  options: Partial<BridgeOptions> & { command?: string[] },
): Promise<RunningBridge> {
  const bridge = await startBridge({
    host: '127.0.0.1',
    port: 0,
    path: '/mcp',
    sessionMode: 'PerSession',
    maxSessions: 64,
    warmPool: 0,
    idleTimeoutMs: 60_000,
    requestTimeoutMs: 10_000,
    maxMessageBytes: 1024 * 1024,
    allowedOrigins: [],
    graceMs: 2_000,
    logger: testLogger(),
    ...options,
  });
  running.push(bridge);
  return bridge;
}

export async function connect(
  url: string,
  options: {
    capabilities?: ConstructorParameters<typeof Client>[1];
    headers?: Record<string, string>;
  } = {},
): Promise<Client> {
  const client = new Client({ name: 'bridge-test', version: '1.0.0' }, options.capabilities);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: options.headers ? { headers: options.headers } : undefined,
  });
  await client.connect(transport);
  return client;
}

/** The MCP error a call is refused with; anything else (success included) fails the test. */
export async function callError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McpError)) throw new Error(`expected an MCP error, got ${String(error)}`);
  return error;
}

/** The text of the first content item of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content[0]?.text ?? '';
}

export const POST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** A raw POST of one JSON-RPC message (or any body). */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { ...POST_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
} as const;

/** A raw `tools/call` request; `meta` becomes the request's `_meta` (e.g. a progress token). */
export const toolCall = (
  id: number | string,
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

/** The protocol revision of stateless clients: version and capabilities in every request. */
export const MODERN_VERSION = '2026-07-28';

/** One request of a 2026-07-28 client (`modern`); what is left out takes a plain default. */
export interface ModernCall {
  method: string;
  params?: Record<string, unknown>;
  id?: number | string;
  capabilities?: Record<string, unknown>;
  /** More of `_meta` (undefined leaves a key out, as JSON does). */
  meta?: Record<string, unknown>;
  /** More headers (a bearer token); one set to undefined is left out, to test its absence. */
  headers?: Record<string, string | undefined>;
}

/** A request as a 2026-07-28 client sends it, headers mirrored from the body. */
export async function modern(url: string, call: ModernCall): Promise<Response> {
  const params = call.params ?? {};
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'modern-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': call.capabilities ?? {},
    ...call.meta,
  };
  const name = params.name ?? params.uri;
  const headers = withoutUndefined<string>({
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': call.method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    ...call.headers,
  });
  return post(
    url,
    { jsonrpc: '2.0', id: call.id ?? 1, method: call.method, params: { ...params, _meta: meta } },
    headers,
  );
}

function withoutUndefined<T>(record: Record<string, T | undefined>): Record<string, T> {
  return Object.fromEntries(
    Object.entries(record).filter((entry): entry is [string, T] => entry[1] !== undefined),
  );
}

/** A JSON answer: its HTTP status and its body, a JSON-RPC response. */
export async function jsonAnswer(response: Response): Promise<{
  status: number;
  body: Record<string, unknown> & {
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
  };
}> {
  return { status: response.status, body: (await response.json()) as never };
}

/** Opens a session with raw HTTP: initialize + initialized. Returns the session id. */
export async function rawSession(
  url: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const response = await post(url, INITIALIZE, headers);
  const session = response.headers.get('mcp-session-id');
  await response.text();
  if (response.status !== 200 || !session)
    throw new Error(`initialize failed: HTTP ${response.status}`);
  const initialized = await post(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { ...headers, 'mcp-session-id': session },
  );
  await initialized.text();
  return session;
}

/** Parses an SSE body into its events (id and data). */
export function sseEvents(body: string): { id?: string; data: string }[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event: { id?: string; data: string } = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) event.id = line.slice(4);
        else if (line.startsWith('data: ')) event.data += line.slice(6);
      }
      return event;
    });
}

/** JSON-RPC messages in an answer, whether it came as JSON or as SSE. */
export async function messagesOf(response: Response): Promise<Record<string, unknown>[]> {
  const body = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    return sseEvents(body)
      .filter((event) => event.data.trim() !== '')
      .map((event) => JSON.parse(event.data) as Record<string, unknown>);
  }
  return [JSON.parse(body) as Record<string, unknown>];
}
