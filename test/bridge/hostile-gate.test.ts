/**
 * Requests and child output that took a real bridge process down or made it do work without
 * bound (issue 27: nesting, names of Object.prototype, `subscriptions/listen` fan-out, children
 * for 2026-07-28 clients). Each must cost only its own request: the process stays up, and
 * another session is served afterwards.
 */

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationServer } from '../oauth/authorization-server.ts';
import { waitFor } from '../support/wait.ts';
import {
  messagesOf,
  post,
  rawSession,
  SERVERS,
  startTestBridge,
  tempDir,
  toolCall,
} from './harness.ts';
import { startBridgeProcess, type BridgeProcess } from './process.ts';
import { ByteBudget } from '../../src/bridge/budget.ts';
import { entryGuard } from '../../src/bridge/entry-guard.ts';
import { memoryPair } from '../../src/bridge/memory-transport.ts';
import { Upstream, type SessionPort } from '../../src/bridge/upstream.ts';
import type { JsonRpcMessage } from '../../src/mcp/jsonrpc.ts';
import { testLogger } from '../support/log.ts';

/** Names a server may give its tools that an object's prototype also has. */
const PROTOTYPE_NAMES = ['toString', 'constructor', 'valueOf', '__proto__', 'hasOwnProperty'];

/** `{"a":{"a":…1…}}`, `depth` objects deep, as text. */
const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** A tools/call whose arguments are nested `depth` deep, as a raw body (about 5 bytes a level). */
const deepCall = (id: number, depth: number): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":${nested(depth)}}}`;

/** The one JSON-RPC message of an answer (JSON or SSE). */
async function answer(response: Response): Promise<Record<string, unknown>> {
  const messages = await messagesOf(response);
  return messages.at(-1)!;
}

/** A session serves a call: what must still hold after each hostile input. */
async function servesAnotherSession(bridge: BridgeProcess, headers: Record<string, string> = {}) {
  expect(bridge.exit).toBeUndefined();
  const session = await rawSession(bridge.url, headers);
  const reply = await answer(
    await post(bridge.url, toolCall(2, 'echo', { text: 'still here' }), {
      ...headers,
      'mcp-session-id': session,
    }),
  );
  expect(reply.result).toEqual({ content: [{ type: 'text', text: 'still here' }] });
  expect(bridge.exit).toBeUndefined();
}

async function policyFile(policy: Record<string, unknown>): Promise<string> {
  const file = join(await tempDir('gate-policy'), 'policy.json');
  await writeFile(file, JSON.stringify(policy));
  return file;
}

describe('JSON nested deeper than the bound', () => {
  it('a tools/call with arguments 10,000 deep is refused under Enforce, and the bridge serves on', async () => {
    const policy = await policyFile({ allow: ['echo'] });
    const bridge = await startBridgeProcess(['--policy-file', policy], SERVERS.misbehaving());
    const session = await rawSession(bridge.url);
    const body = deepCall(7, 10_000);
    expect(body.length).toBeLessThan(64 * 1024);
    const response = await post(bridge.url, body, { 'mcp-session-id': session });
    expect(response.status).toBe(400);
    const refusal = (await response.json()) as { error: { code: number; message: string } };
    expect(refusal.error.code).toBe(-32600);
    expect(refusal.error.message).toMatch(/nested deeper than 128/);
    await servesAnotherSession(bridge);
  });

  it('without a policy the request is refused before it reaches the child: nothing stays in flight', async () => {
    const bridge = await startTestBridge({ command: SERVERS.misbehaving() });
    const session = await rawSession(bridge.url);
    const response = await post(bridge.url, deepCall(8, 10_000), { 'mcp-session-id': session });
    expect(response.status).toBe(400);
    await response.text();
    expect(bridge.bridge.inFlight).toBe(0);
  });

  it('a tools/call result 6,000 deep from the child fails that call alone (Shared mode)', async () => {
    const bridge = await startBridgeProcess(['--session-mode', 'Shared'], SERVERS.misbehaving());
    const session = await rawSession(bridge.url);
    const reply = await answer(
      await post(bridge.url, toolCall(3, 'deep', { depth: 6_000 }), { 'mcp-session-id': session }),
    );
    expect(reply.id).toBe(3);
    expect((reply.error as { code: number; message: string }).message).toMatch(
      /could not be read \(too-deep/,
    );
    await servesAnotherSession(bridge);
  });
});

describe('tool names that an object prototype also has', () => {
  let as: AuthorizationServer;
  const resource = 'http://gate.test/mcp';
  const client = { id: 'agent', secret: 'agent-secret', scopes: ['mcp:tools', 'tools:echo'] };
  beforeAll(async () => {
    as = await AuthorizationServer.start({
      host: '127.0.0.1',
      clients: [client],
      resources: [{ uri: resource, scopes: ['mcp:tools', 'tools:echo'] }],
    });
  });
  afterAll(async () => {
    await as?.close();
  });

  it('are listed and called as any other with OAuth and toolScopes; only scoped tools are hidden', async () => {
    const policy = await policyFile({ toolScopes: { echo: ['tools:echo'] } });
    const bridge = await startBridgeProcess(
      [
        '--policy-file',
        policy,
        '--oauth-issuer',
        as.issuer,
        '--oauth-resource',
        resource,
        '--oauth-scopes',
        'mcp:tools',
      ],
      SERVERS.misbehaving('--tool-names', PROTOTYPE_NAMES.join(',')),
    );
    const token = await as.token(client, resource, ['mcp:tools']);
    const auth = { authorization: `Bearer ${token}` };
    const session = await rawSession(bridge.url, auth);
    const headers = { ...auth, 'mcp-session-id': session };
    const listed = await answer(
      await post(bridge.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers),
    );
    const names = (listed.result as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(PROTOTYPE_NAMES));
    expect(names).not.toContain('echo');
    for (const [i, name] of PROTOTYPE_NAMES.entries()) {
      const called = await post(bridge.url, toolCall(10 + i, name), headers);
      const reply = await answer(called);
      // The fixture knows no such tool: its own error, passed on; the bridge does not fail.
      expect((reply.error as { message: string }).message, name).toBe(`Unknown tool: ${name}`);
    }
    expect(bridge.exit).toBeUndefined();
    const full = await as.token(client, resource, ['mcp:tools', 'tools:echo']);
    await servesAnotherSession(bridge, { authorization: `Bearer ${full}` });
  });
});

describe('the entry guard around each message of a child', () => {
  // A hook that throws stands for a defect not yet found: no real input throws any more.
  it('turns a throw while screening, or while answering, into an error for that request alone', async () => {
    const [transport, peer] = memoryPair();
    peer.onmessage = (message) => {
      if ('id' in message && 'method' in message)
        void peer.send({ jsonrpc: '2.0', id: message.id, result: { method: message.method } });
    };
    const logger = testLogger();
    const caught: string[] = [];
    const upstream = new Upstream(transport, {
      requestTimeoutMs: 60_000,
      logger,
      budget: new ByteBudget({ session: Infinity, bridge: Infinity }),
      guard: entryGuard(logger, (entry) => caught.push(entry)),
      hooks: () => ({
        screen: (request) => {
          if (request.method === 'unscreenable') throw new TypeError('a defect in screening');
          return undefined;
        },
        transformResult: (method, result) => {
          if (method === 'explode') throw new TypeError('a defect in a hook');
          return result;
        },
      }),
    });
    const received: JsonRpcMessage[] = [];
    const session: SessionPort = {
      id: 's',
      clientCapabilities: {},
      deliver: (message) => received.push(message),
      upstreamClosed: () => undefined,
    };
    upstream.attach(session);
    upstream.fromClient(session, { jsonrpc: '2.0', id: 'a', method: 'explode' });
    upstream.fromClient(session, { jsonrpc: '2.0', id: 'b', method: 'unscreenable' });
    upstream.fromClient(session, { jsonrpc: '2.0', id: 'c', method: 'fine' });
    await waitFor('three answers', () => (received.length === 3 ? true : undefined));
    const byId = Object.fromEntries(
      received.map((message) => [String((message as { id: unknown }).id), message]),
    );
    expect(byId.a).toMatchObject({
      error: { code: -32603, message: 'Internal error in the bridge' },
    });
    expect(byId.b).toMatchObject({
      error: { code: -32603, message: 'Internal error in the bridge' },
    });
    expect(byId.c).toMatchObject({ result: { method: 'fine' } });
    expect(caught.sort()).toEqual(['child_message', 'http_request']);
    expect(upstream.inFlight).toBe(0);
    await upstream.close();
  });
});
