/**
 * Requests and child output that took a real bridge process down or made it do work without
 * bound (issue 27: nesting, names of Object.prototype, `subscriptions/listen` fan-out, children
 * for 2026-07-28 clients). Each must cost only its own request: the process stays up, and
 * another session is served afterwards.
 */

import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationServer } from '../oauth/authorization-server.ts';
import { waitFor } from '../support/wait.ts';
import {
  INITIALIZE,
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

const VERSION = '2026-07-28';
/** A request as a 2026-07-28 client sends it, headers mirrored from the body. */
function modern(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = {},
): Promise<Response> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': VERSION,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
  const name = params.name ?? params.uri;
  return post(
    url,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } },
    {
      'mcp-protocol-version': VERSION,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
  );
}

/** The processes the bridge process has started (its children), from /proc. */
async function childrenOf(pid: number): Promise<number> {
  let count = 0;
  for (const task of await readdir(`/proc/${pid}/task`)) {
    const children = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    count += children.split(' ').filter((child) => child.trim() !== '').length;
  }
  return count;
}

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
  }, 180_000);
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

describe('subscriptions/listen', () => {
  it('sends one resources/subscribe per distinct URI, and refuses more URIs than the bound', async () => {
    const bridge = await startBridgeProcess([], SERVERS.misbehaving('--resources'));
    const repeated = Array.from({ length: 5_000 }, () => 'file:///same');
    const listen = await modern(bridge.url, 'subscriptions/listen', {
      notifications: { resourceSubscriptions: repeated },
    });
    expect(listen.status).toBe(200);
    const reader = listen.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('acknowledged')) text += (await reader.read()).value ?? '';
    const ack = JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as {
      params: { notifications: { resourceSubscriptions: string[] } };
    };
    expect(ack.params.notifications.resourceSubscriptions).toEqual(['file:///same']);
    const stats = async () => {
      const reply = await answer(await modern(bridge.url, 'tools/call', { name: 'stats' }));
      const content = (reply.result as { content: { text: string }[] }).content;
      return JSON.parse(content[0]!.text) as { subscribes: number };
    };
    await waitFor('the subscription to reach the child', async () =>
      (await stats()).subscribes > 0 ? true : undefined,
    );
    expect((await stats()).subscribes).toBe(1);
    await reader.cancel();

    const distinct = Array.from({ length: 1_000 }, (_, i) => `file:///r/${i}`);
    const refused = await modern(bridge.url, 'subscriptions/listen', {
      notifications: { resourceSubscriptions: distinct },
    });
    expect(refused.status).toBe(400);
    const error = ((await refused.json()) as { error: { code: number; message: string } }).error;
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/at most 64 resource subscriptions/);
    await servesAnotherSession(bridge);
  });

  it('open listens count against --max-sessions', async () => {
    const bridge = await startBridgeProcess(['--max-sessions', '1'], SERVERS.misbehaving());
    const first = await modern(bridge.url, 'subscriptions/listen', {
      notifications: { toolsListChanged: true },
    });
    expect(first.status).toBe(200);
    const second = await modern(bridge.url, 'subscriptions/listen', {
      notifications: { toolsListChanged: true },
    });
    expect(second.status).toBe(503);
    expect(((await second.json()) as { error: { message: string } }).error.message).toMatch(
      /Too many sessions/,
    );
    const initialize = await post(bridge.url, INITIALIZE);
    expect(initialize.status).toBe(503);
    await initialize.text();
    await first.body!.cancel();
    await waitFor('the listen slot to be free', async () => {
      const again = await post(bridge.url, INITIALIZE);
      await again.text();
      return again.status === 200 || undefined;
    });
  });

  it('holds what its resource subscriptions cost against the byte budget', async () => {
    // --max-message-bytes 64 KiB: the bridge holds at most 1 MiB waiting for its children.
    const bridge = await startBridgeProcess(
      ['--max-message-bytes', '65536'],
      SERVERS.misbehaving('--resources'),
    );
    const uris = (n: number) =>
      Array.from({ length: 60 }, (_, i) => `file:///${n}/${i}/${'x'.repeat(900)}`);
    const statuses: number[] = [];
    const open: Response[] = [];
    for (let n = 0; n < 30; n++) {
      const listen = await modern(bridge.url, 'subscriptions/listen', {
        notifications: { resourceSubscriptions: uris(n) },
      });
      statuses.push(listen.status);
      if (listen.status === 200) open.push(listen);
      else await listen.text();
    }
    expect(statuses).toContain(503);
    for (const listen of open) await listen.body!.cancel();
    await servesAnotherSession(bridge);
  }, 180_000);
});

describe('children for 2026-07-28 clients', () => {
  /** Every combination of the input sub-capabilities a client may declare: 50. */
  const combinations = (() => {
    const parts = (names: string[]) => [
      undefined,
      {},
      ...names.map((name) => ({ [name]: {} })),
      Object.fromEntries(names.map((name) => [name, {}])),
    ];
    const all: Record<string, unknown>[] = [];
    for (const elicitation of parts(['form', 'url']))
      for (const sampling of parts(['context', 'tools']))
        for (const roots of [undefined, {}])
          all.push(
            Object.fromEntries(
              Object.entries({ elicitation, sampling, roots }).filter(([, v]) => v !== undefined),
            ),
          );
    return all;
  })();

  it('are counted against --max-sessions, and idle ones are stopped', async () => {
    expect(combinations).toHaveLength(50);
    const bridge = await startBridgeProcess(
      ['--max-sessions', '1', '--idle-timeout', '1s'],
      SERVERS.misbehaving(),
    );
    let most = 0;
    for (const capabilities of combinations) {
      const reply = await answer(
        await modern(
          bridge.url,
          'tools/call',
          { name: 'echo', arguments: { text: 'hi' } },
          capabilities,
        ),
      );
      expect(reply.result, JSON.stringify(reply)).toBeDefined();
      most = Math.max(most, await childrenOf(bridge.pid));
    }
    // The readiness probe's child may not have ended yet; one child serves the clients.
    expect(most).toBeLessThanOrEqual(2);
    await waitFor('idle children to be stopped', async () =>
      (await childrenOf(bridge.pid)) === 0 ? true : undefined,
    );
    await servesAnotherSession(bridge);
  }, 180_000);
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
