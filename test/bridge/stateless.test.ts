/**
 * Clients of revision 2026-07-28 (stateless: version and capabilities in `_meta`, method and
 * name in headers) in front of a child that only knows the `initialize` handshake.
 */

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolDigest, type ToolLike } from '../../src/tools/digest.ts';
import { MAX_INPUT_REQUESTS } from '../../src/bridge/front/era-2026-call.ts';
import {
  connect,
  jsonAnswer,
  messagesOf,
  modern,
  MODERN_VERSION,
  type ModernCall,
  post,
  SERVERS,
  sseEvents,
  startTestBridge,
  tempDir,
  textOf,
} from './harness.ts';
import { everythingServer } from './go-server.ts';
import { waitFor } from '../support/wait.ts';

const fixture = () => startTestBridge({ command: SERVERS.misbehaving() });

/** A bridge under Enforce, every tool approved as listed, in front of a child of 2026-07-28. */
async function enforcedNativeChild() {
  const native = SERVERS.misbehaving('--native');
  const listed = await jsonAnswer(
    await modern((await startTestBridge({ command: native })).url, { method: 'tools/list' }),
  );
  const tools = listed.body.result!.tools as ToolLike[];
  const file = join(await tempDir('policy'), 'policy.json');
  const approved = tools.map((tool) => ({ name: tool.name, digest: toolDigest(tool) }));
  await writeFile(file, JSON.stringify({ approved }));
  return startTestBridge({ command: native, policyFile: file });
}

describe('2026-07-28 clients', () => {
  it('server/discover: versions, capabilities, identity and instructions of the child', async () => {
    const bridge = await fixture();
    const response = await modern(bridge.url, { method: 'server/discover' });
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const { status, body } = await jsonAnswer(response);
    expect(status).toBe(200);
    expect(body.result).toEqual({
      resultType: 'complete',
      supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
      capabilities: { tools: { listChanged: true }, logging: {} },
      instructions: 'A server that misbehaves on request.',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: {
        'io.modelcontextprotocol/serverInfo': { name: 'misbehaving-server', version: '1.0.0' },
      },
    });
  });

  it('translates results: resultType, serverInfo, cache hints; no session is created', async () => {
    const bridge = await fixture();
    const { body } = await jsonAnswer(await modern(bridge.url, { method: 'tools/list' }));
    expect(body.result).toMatchObject({
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'misbehaving-server' } },
    });
    const called = await jsonAnswer(
      await modern(bridge.url, {
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'modern' } },
      }),
    );
    expect(called.body.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'modern' }],
    });
    expect(called.body.result).not.toHaveProperty('ttlMs');
    expect(bridge.bridge.sessionCount).toBe(0);
  });

  it('takes a child that never answers server/discover for one of the handshake era, once the request times out', async () => {
    const bridge = await startTestBridge({
      command: SERVERS.misbehaving('--ignore', 'server/discover'),
      // The same bound then covers the child's start and its answer to initialize: room for a
      // loaded machine, where Node alone takes over a second to start.
      requestTimeoutMs: 3_000,
    });
    const call = () =>
      modern(bridge.url, {
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x' } },
      });
    const [first, second] = await Promise.all([call(), call()]);
    for (const answer of [first, second])
      expect((await jsonAnswer(answer)).body.result).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'x' }],
      });
    expect((await jsonAnswer(await call())).body.result).toMatchObject({ resultType: 'complete' });
    // Asked once: neither the concurrent request nor a later one waited for a timeout again.
    expect(await bridge.metrics.registry.metrics()).toMatch(
      /mcp_bridge_requests_total\{method="server\/discover",outcome="timeout"\} 1\n/,
    );
  });

  it('refuses headers that do not match the body with 400 and HeaderMismatch (-32020)', async () => {
    const bridge = await fixture();
    const echo = { method: 'tools/call', params: { name: 'echo', arguments: {} } };
    const cases: ModernCall[] = [
      { ...echo, headers: { 'mcp-name': undefined } },
      { ...echo, headers: { 'mcp-name': 'other' } },
      { ...echo, headers: { 'mcp-method': 'tools/list' } },
      { ...echo, headers: { 'mcp-method': undefined } },
      { ...echo, meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } },
      { ...echo, headers: { 'mcp-name': 'ech\u00f6' } },
    ];
    for (const bad of cases) {
      const response = await modern(bridge.url, bad).catch(() => undefined);
      if (!response) continue; // fetch itself refuses a non-ASCII header value
      const { status, body } = await jsonAnswer(response);
      expect(status).toBe(400);
      expect(body.error!.code).toBe(-32020);
      expect(body.error!.message).toMatch(/^Header mismatch: /);
    }
    // Base64 without its padding, or of bytes that are not UTF-8, is malformed.
    for (const value of [
      '=?base64?ZWNobw?=',
      `=?base64?${Buffer.from([0xff]).toString('base64')}?=`,
    ]) {
      const { status, body } = await jsonAnswer(
        await modern(bridge.url, { ...echo, headers: { 'mcp-name': value } }),
      );
      expect(status).toBe(400);
      expect(body.error!.message).toBe(
        'Header mismatch: the Mcp-Name header contains invalid characters',
      );
    }
    // The Base64 sentinel encoding is decoded before comparing.
    const encoded = `=?base64?${Buffer.from('echo').toString('base64')}?=`;
    const ok = await jsonAnswer(
      await modern(bridge.url, { ...echo, headers: { 'mcp-name': encoded } }),
    );
    expect(ok.status).toBe(200);
  });

  it('validates Mcp-Param headers declared with x-mcp-header', async () => {
    const bridge = await fixture();
    const region = {
      method: 'tools/call',
      params: { name: 'region', arguments: { region: 'us-west1' } },
    };
    const missing = await jsonAnswer(await modern(bridge.url, region));
    expect(missing.status).toBe(400);
    expect(missing.body.error!.message).toBe(
      'Header mismatch: the Mcp-Param-Region header is missing',
    );
    const wrong = await jsonAnswer(
      await modern(bridge.url, { ...region, headers: { 'mcp-param-region': 'eu-north1' } }),
    );
    expect(wrong.status).toBe(400);
    const right = await jsonAnswer(
      await modern(bridge.url, { ...region, headers: { 'mcp-param-region': 'us-west1' } }),
    );
    expect(right.body.result).toMatchObject({ content: [{ text: 'region us-west1' }] });
  });

  it('answers an unsupported version with the versions it supports, and removed methods with 404', async () => {
    const bridge = await fixture();
    const future = await jsonAnswer(
      await modern(bridge.url, {
        method: 'tools/list',
        meta: { 'io.modelcontextprotocol/protocolVersion': '2027-01-01' },
        headers: { 'mcp-protocol-version': '2027-01-01' },
      }),
    );
    expect(future.status).toBe(400);
    expect(future.body.error).toMatchObject({
      code: -32022,
      data: {
        requested: '2027-01-01',
        supported: expect.arrayContaining(['2026-07-28']) as unknown,
      },
    });

    const noCapabilities = await post(
      bridge.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION } },
      },
      { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/list' },
    );
    expect(noCapabilities.status).toBe(400);

    for (const method of ['ping', 'initialize', 'made/up']) {
      const { status, body } = await jsonAnswer(await modern(bridge.url, { method }));
      expect(status).toBe(404);
      expect(body.error!.code).toBe(-32601);
    }
  });

  it('streams progress, and log messages only when the request asked for them', async () => {
    const bridge = await fixture();
    const progress = await modern(bridge.url, {
      method: 'tools/call',
      params: { name: 'progress', arguments: { steps: 2 } },
      meta: { progressToken: 'p' },
    });
    expect(progress.headers.get('content-type')).toBe('text/event-stream');
    const messages = await messagesOf(progress);
    expect(messages.map((m) => m.method ?? 'result')).toEqual([
      'notifications/progress',
      'notifications/progress',
      'result',
    ]);
    expect(messages[0]).toMatchObject({ params: { progressToken: 'p' } });

    const quiet = await messagesOf(
      await modern(bridge.url, { method: 'tools/call', params: { name: 'log', arguments: {} } }),
    );
    expect(quiet.map((m) => m.method ?? 'result')).toEqual(['result']);
    const chatty = await messagesOf(
      await modern(bridge.url, {
        method: 'tools/call',
        params: { name: 'log', arguments: {} },
        meta: { 'io.modelcontextprotocol/logLevel': 'info' },
      }),
    );
    expect(chatty.map((m) => m.method ?? 'result')).toEqual(['notifications/message', 'result']);
  });

  it('turns an elicitation of the child into an InputRequiredResult and resumes on the retry (MRTR)', async () => {
    const bridge = await fixture();
    const capabilities = { elicitation: { form: {} } };
    const first = await jsonAnswer(
      await modern(bridge.url, {
        id: 1,
        method: 'tools/call',
        params: { name: 'elicit', arguments: {} },
        capabilities,
      }),
    );
    const result = first.body.result as {
      resultType: string;
      inputRequests: Record<string, { method: string; params: { message: string } }>;
      requestState: string;
    };
    expect(result.resultType).toBe('input_required');
    const [[key, input]] = Object.entries(result.inputRequests) as [
      [string, { method: string; params: { message: string } }],
    ];
    expect(input.method).toBe('elicitation/create');
    expect(input.params.message).toMatch(/^question for call/);

    const retry = await jsonAnswer(
      await modern(bridge.url, {
        id: 2,
        method: 'tools/call',
        params: {
          name: 'elicit',
          arguments: {},
          inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } },
          requestState: result.requestState,
        },
        capabilities,
      }),
    );
    expect(retry.body.id).toBe(2);
    expect(retry.body.result).toMatchObject({ resultType: 'complete' });
    expect(JSON.parse(textOf(retry.body.result))).toEqual({
      action: 'accept',
      content: { name: 'Ada' },
    });

    const stale = await jsonAnswer(
      await modern(bridge.url, {
        id: 3,
        method: 'tools/call',
        params: { name: 'elicit', arguments: {}, requestState: result.requestState },
        capabilities,
      }),
    );
    expect(stale.status).toBe(400);
    expect(stale.body.error!.message).toMatch(/requestState is unknown or expired/);
  });

  it('resumes a parked call only with a retry of the same method and name', async () => {
    const bridge = await fixture();
    const capabilities = { elicitation: { form: {} } };
    const first = await jsonAnswer(
      await modern(bridge.url, {
        id: 1,
        method: 'tools/call',
        params: { name: 'elicit', arguments: {} },
        capabilities,
      }),
    );
    const { requestState, inputRequests } = first.body.result as {
      requestState: string;
      inputRequests: Record<string, unknown>;
    };
    const inputResponses = Object.fromEntries(
      Object.keys(inputRequests).map((key) => [
        key,
        { action: 'accept', content: { name: 'Ada' } },
      ]),
    );
    const elsewhere = [
      { method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      { method: 'prompts/get', params: { name: 'elicit' } },
      { method: 'resources/read', params: { uri: 'elicit' } },
    ];
    for (const [i, call] of elsewhere.entries()) {
      const answer = await jsonAnswer(
        await modern(bridge.url, {
          id: 10 + i,
          method: call.method,
          params: { ...call.params, inputResponses, requestState },
          capabilities,
        }),
      );
      expect(answer.status, call.method).toBe(400);
      expect(answer.body.error).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/requestState belongs to another request/) as unknown,
      });
    }
    // The state is still the call's: its own retry resumes it.
    const retry = await jsonAnswer(
      await modern(bridge.url, {
        id: 2,
        method: 'tools/call',
        params: { name: 'elicit', arguments: {}, inputResponses, requestState },
        capabilities,
      }),
    );
    expect(retry.body.result).toMatchObject({ resultType: 'complete' });
  });

  it('holds at most MAX_INPUT_REQUESTS questions of one call for the client, and refuses the rest to the child', async () => {
    const bridge = await fixture();
    const capabilities = { elicitation: { form: {} } };
    const call = { method: 'tools/call', params: { name: 'ask-many', arguments: { count: 40 } } };
    const first = await jsonAnswer(await modern(bridge.url, { ...call, capabilities }));
    const { requestState, inputRequests } = first.body.result as {
      requestState: string;
      inputRequests: Record<string, unknown>;
    };
    expect(Object.keys(inputRequests)).toHaveLength(MAX_INPUT_REQUESTS);
    const inputResponses = Object.fromEntries(
      Object.keys(inputRequests).map((key) => [key, { action: 'accept', content: {} }]),
    );
    const retry = await jsonAnswer(
      await modern(bridge.url, {
        id: 2,
        method: 'tools/call',
        params: { ...call.params, inputResponses, requestState },
        capabilities,
      }),
    );
    expect(retry.body.result).toMatchObject({ resultType: 'complete' });
    expect(JSON.parse(textOf(retry.body.result))).toEqual({
      answered: MAX_INPUT_REQUESTS,
      refused: 40 - MAX_INPUT_REQUESTS,
    });
  });

  it('answers a call that needs a capability the client did not declare with 400 and -32021', async () => {
    const bridge = await fixture();
    const { status, body } = await jsonAnswer(
      await modern(bridge.url, {
        method: 'tools/call',
        params: { name: 'elicit', arguments: {} },
        id: 'no-elicitation',
      }),
    );
    expect(status).toBe(400);
    expect(body.id).toBe('no-elicitation');
    expect(body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: {} } },
    });
    // The child is told, and the next call is served as usual.
    const echo = await jsonAnswer(
      await modern(bridge.url, { method: 'tools/call', params: { name: 'echo', arguments: {} } }),
    );
    expect(echo.status).toBe(200);
  });

  it('refuses a request without the required _meta with -32602 before comparing headers', async () => {
    const bridge = await fixture();
    const cases = [
      {},
      { 'io.modelcontextprotocol/clientCapabilities': {} },
      { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION },
    ];
    for (const meta of cases) {
      const response = await post(
        bridge.url,
        { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: meta } },
        { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/list' },
      );
      const { status, body } = await jsonAnswer(response);
      expect(status).toBe(400);
      expect(body.error!.code).toBe(-32602);
      expect(body.error!.message).toMatch(/^Invalid params: _meta is missing /);
    }
  });

  it('treats a closed response stream as cancellation', async () => {
    const bridge = await fixture();
    await modern(bridge.url, { method: 'server/discover' }); // the child is up and initialized
    const aborted = new AbortController();
    const hanging = fetch(bridge.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'hang',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'hang',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      signal: aborted.signal,
    }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    aborted.abort();
    await hanging;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stats = JSON.parse(
      textOf(
        (
          await jsonAnswer(
            await modern(bridge.url, {
              method: 'tools/call',
              params: { name: 'stats', arguments: {} },
            }),
          )
        ).body.result,
      ),
    ) as { cancelled: unknown[] };
    expect(stats.cancelled).toHaveLength(1);
  });

  it('subscriptions/listen: acknowledges first, then delivers opted-in notifications tagged with its id', async () => {
    const bridge = await fixture();
    const listen = await modern(bridge.url, {
      id: 'sub-1',
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true, promptsListChanged: true } },
    });
    expect(listen.headers.get('content-type')).toBe('text/event-stream');
    const reader = listen.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const next = async (pattern: RegExp) => {
      while (!pattern.test(text)) text += (await reader.read()).value ?? '';
    };
    await next(/acknowledged/);
    await modern(bridge.url, {
      method: 'tools/call',
      params: { name: 'change-tools', arguments: {} },
    });
    await next(/list_changed/);
    await reader.cancel();
    const events = sseEvents(text).map(
      (event) => JSON.parse(event.data) as Record<string, unknown>,
    );
    expect(events).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        // The child declares no prompts capability: only what it can honour is acknowledged.
        params: {
          notifications: { toolsListChanged: true },
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' },
        },
      },
      {
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } },
      },
    ]);
  });

  it('subscriptions/listen on a child that speaks 2026-07-28 outlives the request timeout', async () => {
    // The Go SDK everything-server answers 2026-07-28 itself: the bridge holds a subscription of
    // its own on it, which --request-timeout must not end (a reopened one would miss whatever
    // the child sent in between).
    const bridge = await startTestBridge({
      command: [await everythingServer()],
      requestTimeoutMs: 1_000,
    });
    const listen = await modern(bridge.url, {
      id: 'sub-2',
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true } },
    });
    const reader = listen.body!.pipeThrough(new TextDecoderStream()).getReader();
    // A notification that never comes fails the test rather than hanging it.
    const giveUp = setTimeout(() => void reader.cancel(), 20_000);
    let text = '';
    const next = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended without ${String(pattern)}: ${text}`);
        text += value;
      }
    };
    await next(/acknowledged/);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const trigger = await jsonAnswer(
      await modern(bridge.url, {
        method: 'tools/call',
        params: { name: 'test_trigger_tool_change', arguments: {} },
      }),
    );
    expect(trigger.body.result).toMatchObject({ resultType: 'complete' });
    await next(/list_changed/);
    clearTimeout(giveUp);
    await reader.cancel();
    const changes = sseEvents(text)
      .map((event) => JSON.parse(event.data) as Record<string, unknown>)
      .filter((message) => message.method === 'notifications/tools/list_changed');
    // Once, tagged with the client's subscription, however often the bridge subscribed.
    expect(changes).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-2' } },
      },
    ]);
  });

  it('under Enforce, refuses a tool of a child that speaks 2026-07-28 from the first call after it changed, with no client listening', async () => {
    // The child sends list_changed only on subscription streams: the bridge must hold one of
    // its own, or a changed tool would pass until some client happened to list tools again.
    const bridge = await enforcedNativeChild();
    const echo = () =>
      modern(bridge.url, {
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hi' } },
      });
    expect(textOf((await jsonAnswer(await echo())).body.result)).toBe('hi');

    const pulled = await jsonAnswer(
      await modern(bridge.url, {
        method: 'tools/call',
        params: { name: 'change-tools', arguments: {} },
      }),
    );
    expect(textOf(pulled.body.result)).toBe('changed');
    expect((await jsonAnswer(await echo())).body.error).toMatchObject({
      code: -32602,
      data: { reason: 'drifted', tool: 'echo' },
    });
  });

  it('under Enforce, opens its subscription on a child that speaks 2026-07-28 again when it ends, and takes lists as changed meanwhile', async () => {
    const bridge = await enforcedNativeChild();
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      (
        await jsonAnswer(
          await modern(bridge.url, { method: 'tools/call', params: { name, arguments: args } }),
        )
      ).body;
    const openSubscriptions = async () =>
      (JSON.parse(textOf((await call('stats')).result)) as { subscriptions: number }).subscriptions;
    expect(textOf((await call('echo', { text: 'hi' })).result)).toBe('hi');
    expect(await openSubscriptions()).toBe(1);

    // The child ends the bridge's subscription, then changes a tool while none is open.
    expect(textOf((await call('end-subscriptions')).result)).toBe('ended');
    expect(textOf((await call('change-tools')).result)).toBe('changed');
    await waitFor(
      'the bridge to subscribe again',
      async () => (await openSubscriptions()) === 1 || undefined,
    );
    expect((await call('echo', { text: 'after' })).error).toMatchObject({
      code: -32602,
      data: { reason: 'drifted', tool: 'echo' },
    });
  });

  it('serves 2026-07-28 and 2025-11-25 clients side by side', async () => {
    const bridge = await startTestBridge({ command: SERVERS.everything });
    const legacy = await connect(bridge.url);
    const { body } = await jsonAnswer(
      await modern(bridge.url, {
        method: 'tools/call',
        params: { name: 'echo', arguments: { message: 'new' } },
      }),
    );
    expect(textOf(body.result)).toBe('Echo: new');
    expect(textOf(await legacy.callTool({ name: 'echo', arguments: { message: 'old' } }))).toBe(
      'Echo: old',
    );
    await legacy.close();
  });
});
