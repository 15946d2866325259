/**
 * The routing core without processes: upstreams over the in-memory transport pair, and the
 * whole bridge in front of SDK servers running in this process.
 */

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ElicitRequestSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../src/bridge/budget.ts';
import type { JsonRpcMessage, RequestId } from '../../src/mcp/jsonrpc.ts';
import {
  MemoryLauncher,
  memoryPair,
  type PeerTransport,
} from '../../src/bridge/memory-transport.ts';
import { Upstream, type SessionPort } from '../../src/bridge/upstream.ts';
import { connect, startTestBridge, textOf } from './harness.ts';
import { testLogger } from '../support/log.ts';

/** A session port that records what reaches it. */
function port(id: string) {
  const received: { message: JsonRpcMessage; relatedTo?: RequestId }[] = [];
  const session: SessionPort = {
    id,
    clientCapabilities: {},
    deliver: (message, relatedTo) => received.push({ message, relatedTo }),
    upstreamClosed: () => received.push({ message: { jsonrpc: '2.0', method: 'closed' } }),
  };
  return { session, received };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('Upstream over an in-memory pair', () => {
  it('rewrites ids and progress tokens to its own and restores them exactly', async () => {
    const [transport, peer] = memoryPair();
    const seen: JsonRpcMessage[] = [];
    peer.onmessage = (message) => {
      seen.push(message);
      if ('id' in message && 'method' in message) {
        const token = (message.params?._meta as { progressToken?: number } | undefined)
          ?.progressToken;
        if (token !== undefined)
          void peer.send({
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken: token, progress: 1 },
          });
        void peer.send({ jsonrpc: '2.0', id: message.id, result: { echo: message.method } });
      }
    };
    const upstream = new Upstream(transport, {
      requestTimeoutMs: 1_000,
      logger: testLogger(),
      budget: new ByteBudget({ session: Infinity, bridge: Infinity }),
    });
    const a = port('a');
    const b = port('b');
    upstream.attach(a.session);
    upstream.attach(b.session);
    upstream.fromClient(a.session, {
      jsonrpc: '2.0',
      id: '1',
      method: 'x',
      params: { _meta: { progressToken: 't' } },
    });
    upstream.fromClient(b.session, {
      jsonrpc: '2.0',
      id: 1,
      method: 'y',
      params: { _meta: { progressToken: 't' } },
    });
    await settle();

    expect(seen.map((m) => (m as { id: unknown }).id)).toEqual([1, 2]);
    expect(a.received).toEqual([
      {
        message: {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: 't', progress: 1 },
        },
        relatedTo: '1',
      },
      { message: { jsonrpc: '2.0', id: '1', result: { echo: 'x' } }, relatedTo: '1' },
    ]);
    expect(b.received.at(-1)).toEqual({
      message: { jsonrpc: '2.0', id: 1, result: { echo: 'y' } },
      relatedTo: 1,
    });

    await peer.close();
    await upstream.closed;
    expect(a.received.at(-1)!.message).toEqual({ jsonrpc: '2.0', method: 'closed' });
  });
});

/** An SDK server with one tool, `greet`, that asks the client for a name when told to. */
function sdkServer(counters: { initialized: number }) {
  return async (transport: PeerTransport) => {
    const server = new Server(
      { name: 'in-memory', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.oninitialized = () => counters.initialized++;
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        {
          name: 'greet',
          inputSchema: { type: 'object', properties: { ask: { type: 'boolean' } } },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      if (!request.params.arguments?.ask) return { content: [{ type: 'text', text: 'hello' }] };
      const answer = await server.elicitInput({
        mode: 'form',
        message: 'name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      });
      return { content: [{ type: 'text', text: `hello ${String(answer.content?.name)}` }] };
    });
    await server.connect(transport);
  };
}

describe('the bridge in front of in-process SDK servers', () => {
  it.each(['PerSession', 'Shared'] as const)(
    '%s: serves calls and elicitation',
    async (sessionMode) => {
      const counters = { initialized: 0 };
      const bridge = await startTestBridge({
        sessionMode,
        launcher: new MemoryLauncher(sdkServer(counters)),
      });
      const clients = await Promise.all(
        [1, 2, 3].map(() =>
          connect(bridge.url, { capabilities: { capabilities: { elicitation: { form: {} } } } }),
        ),
      );
      clients.forEach((client, i) =>
        client.setRequestHandler(ElicitRequestSchema, () => ({
          action: 'accept',
          content: { name: `client ${i}` },
        })),
      );
      expect(textOf(await clients[0]!.callTool({ name: 'greet', arguments: {} }))).toBe('hello');
      expect(textOf(await clients[2]!.callTool({ name: 'greet', arguments: { ask: true } }))).toBe(
        'hello client 2',
      );
      // PerSession: a server per session; Shared: one server initialized once (plus the probe's).
      await bridge.probed;
      expect(counters.initialized).toBe(sessionMode === 'PerSession' ? 4 : 2);
      await Promise.all(clients.map((client) => client.close()));
    },
  );
});
