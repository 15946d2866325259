/**
 * Proxy mode: the bridge in front of a server that serves Streamable HTTP itself. The server
 * is the npm everything server in its HTTP mode (a real process), seen through the official
 * SDK client or raw HTTP; the hostile cases use a fixture server that misbehaves on request.
 */

import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolDigest } from '../../src/tools/digest.ts';
import { startHostileServer } from './fixtures/hostile-http-server.ts';
import { MAX_IDLE_RESUMES } from '../../src/bridge/proxy/http-upstream.ts';
import {
  callError,
  connect,
  HTTP_SERVERS,
  INITIALIZE,
  messagesOf,
  post,
  rawSession,
  sseEvents,
  startHttpServer,
  startTestBridge,
  tempDir,
  textOf,
  toolCall,
} from './harness.ts';
import { freePort } from '../support/ports.ts';
import { waitFor } from '../support/wait.ts';

const everything = () => startHttpServer(HTTP_SERVERS.everything, '/mcp');

describe('proxy mode in front of a real HTTP server', () => {
  it('lists and calls tools, with progress on the request stream, one upstream session per session', async () => {
    const server = await everything();
    const bridge = await startTestBridge({ upstream: server.url });
    const [first, second] = [await connect(bridge.url), await connect(bridge.url)];
    const { tools } = await first.listTools();
    expect(tools.map((tool) => tool.name)).toContain('echo');
    expect(textOf(await second.callTool({ name: 'echo', arguments: { message: 'hi' } }))).toBe(
      'Echo: hi',
    );
    const progress: number[] = [];
    const result = await first.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(textOf(result)).toMatch(/Long running operation completed/);
    expect(progress).toEqual([1, 2, 3]);
    expect(bridge.bridge.sessionCount).toBe(2);
    await first.close();
    await second.close();
  });

  it('passes requests of the server to the client that works with it (elicitation)', async () => {
    const server = await everything();
    const bridge = await startTestBridge({ upstream: server.url });
    const client = await connect(bridge.url, {
      capabilities: { capabilities: { elicitation: { form: {} } } },
    });
    client.setRequestHandler(ElicitRequestSchema, () => ({
      action: 'accept',
      content: { name: 'Ada', check: true, firstLine: 'x', email: 'ada@example.com' },
    }));
    const result = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    expect(JSON.stringify(result)).toMatch(/Ada/);
    await client.close();
  });

  it("sends each request of the server to the client whose call it came with, while both clients' calls are in flight", async () => {
    const server = await everything();
    // Shared: both clients' calls go to one upstream session, so only the stream a request
    // comes on tells whose it is.
    const bridge = await startTestBridge({ upstream: server.url, sessionMode: 'Shared' });
    const names = ['Ada', 'Grace'];
    const asked: string[] = [];
    let bothAsked: () => void;
    const waitForBoth = new Promise<void>((resolve) => (bothAsked = resolve));
    const clients = await Promise.all(
      names.map(async (name) => {
        const client = await connect(bridge.url, {
          capabilities: { capabilities: { elicitation: { form: {} } } },
        });
        client.setRequestHandler(ElicitRequestSchema, async () => {
          asked.push(name);
          if (asked.length === names.length) bothAsked();
          // Neither answers before both calls are in flight and have been asked.
          await waitForBoth;
          return {
            action: 'accept' as const,
            content: { name, check: true, firstLine: 'x', email: 'x@example.com' },
          };
        });
        return client;
      }),
    );
    const results = await Promise.all(
      clients.map((client) =>
        client.callTool({ name: 'trigger-elicitation-request', arguments: {} }),
      ),
    );
    expect(asked.sort()).toEqual([...names].sort());
    results.forEach((result, i) => {
      expect(JSON.stringify(result)).toContain(names[i]);
      expect(JSON.stringify(result)).not.toContain(names[1 - i]);
    });
    await Promise.all(clients.map((client) => client.close()));
  });

  it('resumes a request stream the client lost, with Last-Event-ID', async () => {
    const server = await everything();
    const bridge = await startTestBridge({ upstream: server.url });
    const session = await rawSession(bridge.url);
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    const call = toolCall(
      7,
      'trigger-long-running-operation',
      { duration: 2, steps: 4 },
      {
        progressToken: 'p',
      },
    );
    const response = await post(bridge.url, call, headers);
    // Read the first progress event, then drop the connection.
    const reader = response.body!.getReader();
    let text = '';
    while (!/"progress":1/.test(text)) {
      const { value } = (await reader.read()) as { value?: Uint8Array };
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    const lastId = sseEvents(text)
      .filter((event) => event.data !== '')
      .at(-1)!.id!;
    const resumed = await fetch(bridge.url, {
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': lastId },
    });
    const rest = await messagesOf(resumed);
    const progress = rest
      .filter((m) => m.method === 'notifications/progress')
      .map((m) => (m.params as { progress: number }).progress);
    expect(progress).toEqual([2, 3, 4]);
    expect(rest.at(-1)).toMatchObject({ id: 7, result: { content: [{ type: 'text' }] } });
  });

  it('enforces the policy: only approved tools are listed and callable', async () => {
    const server = await everything();
    const open = await startTestBridge({ upstream: server.url });
    const lister = await connect(open.url);
    const echo = (await lister.listTools()).tools.find((tool) => tool.name === 'echo')!;
    await lister.close();
    const file = join(await tempDir('policy'), 'policy.json');
    await writeFile(
      file,
      JSON.stringify({ approved: [{ name: 'echo', digest: toolDigest(echo) }] }),
    );
    const bridge = await startTestBridge({ upstream: server.url, policyFile: file });
    const client = await connect(bridge.url);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'ok' } }))).toBe(
      'Echo: ok',
    );
    const refused = await callError(client.callTool({ name: 'get-env', arguments: {} }));
    expect(refused.code).toBe(-32602);
    expect(refused.data).toEqual({ reason: 'not-approved', tool: 'get-env' });
    await client.close();
  });

  it('serves a 2026-07-28 client from the handshake-era HTTP server', async () => {
    const server = await everything();
    const bridge = await startTestBridge({ upstream: server.url });
    const response = await post(
      bridge.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'echo',
          arguments: { message: 'stateless' },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    );
    expect(response.status).toBe(200);
    const [answer] = await messagesOf(response);
    expect(answer).toMatchObject({
      id: 1,
      result: { resultType: 'complete', content: [{ type: 'text', text: 'Echo: stateless' }] },
    });
  });

  it('fails a call at once when the server crashes mid-call, and recovers when it is back', async () => {
    const port = await freePort();
    const server = await startHttpServer(HTTP_SERVERS.everything, '/mcp', port);
    const bridge = await startTestBridge({ upstream: server.url });
    const client = await connect(bridge.url);
    const call = callError(
      client.callTool({
        name: 'trigger-long-running-operation',
        arguments: { duration: 20, steps: 20 },
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = performance.now();
    await server.kill('SIGKILL');
    const error = await call;
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error.code).toBe(-32000);
    expect(error.message).toMatch(/The MCP server did not answer/);
    // Down: the next call fails too, with the reason.
    const refused = await callError(client.callTool({ name: 'echo', arguments: { message: 'x' } }));
    expect(refused.message).toMatch(/ECONNREFUSED/);
    // Back (a new process knows no session): a new session works.
    await startHttpServer(HTTP_SERVERS.everything, '/mcp', port);
    const again = await connect(bridge.url);
    expect(textOf(await again.callTool({ name: 'echo', arguments: { message: 'back' } }))).toBe(
      'Echo: back',
    );
    // The new process does not know the old session; this server says so with its own error.
    const unknown = await callError(client.callTool({ name: 'echo', arguments: { message: 'x' } }));
    expect(unknown.message).toMatch(/No valid session ID provided/);
    await again.close();
  });

  it('answers initialize with an error when the server refuses connections, and is not ready', async () => {
    const bridge = await startTestBridge({ upstream: `http://127.0.0.1:${await freePort()}/mcp` });
    const response = await post(bridge.url, INITIALIZE);
    const [answer] = await messagesOf(response);
    expect(answer).toMatchObject({
      id: 1,
      error: { code: -32000, message: 'The MCP server did not answer: ECONNREFUSED' },
    });
    await waitFor('the session to end', () => bridge.bridge.sessionCount === 0);
    const ready = await fetch(bridge.url.replace('/mcp', '/readyz'));
    expect(ready.status).toBe(503);
  });
});

describe('proxy mode in front of a misbehaving HTTP server', () => {
  async function fixture(
    options: { requestTimeoutMs?: number; sessionMode?: 'Shared' } = {},
    serverOptions: Parameters<typeof startHostileServer>[0] = {},
  ) {
    const server = await startHostileServer(serverOptions);
    const bridge = await startTestBridge({
      upstream: server.url,
      maxMessageBytes: 1024 * 1024,
      ...options,
    });
    return { server, bridge, [Symbol.asyncDispose]: () => server.close() };
  }

  it('lets no request overtake the notification sent before it, though each is its own POST', async () => {
    await using setup = await fixture({}, { notificationDelayMs: 300 });
    const { bridge, server } = setup;
    const client = await connect(bridge.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe(
      'after',
    );
    const bodies = (part: string) => server.seen.filter((seen) => seen.body?.includes(part));
    const [initialized] = bodies('notifications/initialized');
    const [call] = bodies('"tools/call"');
    expect(initialized?.answeredAt).toBeDefined();
    expect(call!.at).toBeGreaterThanOrEqual(initialized!.answeredAt!);
    await client.close();
  });

  it.each([
    ['garbage', -32603, /could not be read \(not a JSON-RPC response to this request, 22 bytes\)/],
    ['huge', -32603, /The MCP server's response is larger than 1048576 bytes/],
    ['huge-event', -32603, /The MCP server sent an event larger than 1048576 bytes/],
    ['reset', -32000, /The MCP server did not answer: UND_ERR_SOCKET/],
    ['html-error', -32000, /^MCP error -32000: The MCP server answered HTTP 502$/],
    ['early-end', -32000, /The MCP server ended its stream before it answered/],
  ])('%s: the call gets a clear error, the session and others go on', async (tool, code, text) => {
    await using setup = await fixture();
    const { bridge } = setup;
    const [client, other] = [await connect(bridge.url), await connect(bridge.url)];
    const arguments_ = tool === 'huge' ? { bytes: 50 * 1024 * 1024 } : {};
    const started = performance.now();
    const error = await callError(client.callTool({ name: tool, arguments: arguments_ }));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(text);
    expect(error.message).not.toMatch(/secret/);
    for (const session of [client, other]) {
      expect(textOf(await session.callTool({ name: 'echo', arguments: { text: 'on' } }))).toBe(
        'on',
      );
    }
    await client.close();
    await other.close();
  });

  it('gives up a call whose stream keeps ending without an event after MAX_IDLE_RESUMES resumptions', async () => {
    await using setup = await fixture();
    const { bridge, server } = setup;
    const client = await connect(bridge.url);
    const error = await callError(client.callTool({ name: 'stall', arguments: {} }));
    expect(error.message).toMatch(
      new RegExp(`stream ended ${MAX_IDLE_RESUMES} times in a row without an event`),
    );
    const resumptions = server.seen.filter(
      (seen) => seen.method === 'GET' && seen.headers['last-event-id'] === 'stall-1',
    );
    expect(resumptions).toHaveLength(MAX_IDLE_RESUMES);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'on' } }))).toBe('on');
    await client.close();
  });

  it('ends the session when the server forgets it (404), so the client initializes again', async () => {
    await using setup = await fixture();
    const { bridge, server } = setup;
    const session = await rawSession(bridge.url);
    const headers = { 'mcp-session-id': session };
    // The bridge opens the GET stream after `initialized`; once it has, only requests remain.
    await waitFor('the GET stream of the session', () =>
      server.seen.some(
        (seen) => seen.method === 'GET' && seen.headers['mcp-session-id'] === 'hostile-session-2',
      ),
    );
    await messagesOf(await post(bridge.url, toolCall(1, 'forget'), headers));
    const [gone] = await messagesOf(
      await post(bridge.url, toolCall(2, 'echo', { text: 'x' }), headers),
    );
    expect(gone).toMatchObject({ id: 2, error: { code: -32000 } });
    const after = await post(bridge.url, toolCall(3, 'echo', { text: 'x' }), headers);
    expect(after.status).toBe(404);
    const client = await connect(bridge.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'new' } }))).toBe('new');
    await client.close();
  });

  it('times out a call the server never answers, and tells the server', async () => {
    await using setup = await fixture({ requestTimeoutMs: 1_000 });
    const { bridge, server } = setup;
    const client = await connect(bridge.url);
    const error = await callError(client.callTool({ name: 'hang', arguments: {} }));
    expect(error.code).toBe(-32001);
    const cancelled = await waitFor('the cancellation to reach the server', () =>
      server.seen.find((seen) => seen.body?.includes('notifications/cancelled')),
    );
    expect(cancelled.headers['mcp-session-id']).toMatch(/^hostile-session-\d+$/);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'on' } }))).toBe('on');
    await client.close();
  });

  it('closes the stream of a timed-out call though the server refuses the cancellation, and routes none of its notifications to another call', async () => {
    await using setup = await fixture(
      { requestTimeoutMs: 1_000, sessionMode: 'Shared' },
      { refuseCancellations: true },
    );
    const { bridge, server } = setup;
    const [first, second] = [await rawSession(bridge.url), await rawSession(bridge.url)];
    const timedOut = await messagesOf(
      await post(bridge.url, toolCall(1, 'chatter'), { 'mcp-session-id': first }),
    );
    expect(timedOut.at(-1)).toMatchObject({ id: 1, error: { code: -32001 } });
    // Shared: both sessions' calls go to one upstream session, so a notification that outlives
    // its request could reach whichever call is in flight.
    const other = await messagesOf(
      await post(bridge.url, toolCall(2, 'echo', { text: 'mine', delayMs: 500 }), {
        'mcp-session-id': second,
      }),
    );
    expect(other).toEqual([
      expect.objectContaining({ id: 2, result: { content: [{ type: 'text', text: 'mine' }] } }),
    ]);
    await waitFor('the chatter stream to close', () => server.chattering === 0 || undefined, {
      timeoutMs: 3_000,
    });
  });

  it("never passes the client's bearer token or the discovery token to the server", async () => {
    await using setup = await fixture();
    const { server } = setup;
    const tokenFile = join(await tempDir('token'), 'token');
    await writeFile(tokenFile, 'client-secret-token');
    const bridge = await startTestBridge({ upstream: server.url, authTokenFile: tokenFile });
    const client = await connect(bridge.url, {
      headers: {
        authorization: 'Bearer client-secret-token',
        'mcp-operator-discovery-token': 'x',
      },
    });
    await client.listTools();
    await client.close();
    // Closing the bridge ends its upstream sessions with DELETE.
    await bridge.close();
    expect(server.seen.length).toBeGreaterThan(2);
    for (const seen of server.seen) {
      expect(seen.headers.authorization).toBeUndefined();
      expect(seen.headers['mcp-operator-discovery-token']).toBeUndefined();
    }
    const last = server.seen.at(-1)!;
    expect(last.method).toBe('DELETE');
    expect(last.headers['mcp-session-id']).toMatch(/^hostile-session-\d+$/);
  });
});
