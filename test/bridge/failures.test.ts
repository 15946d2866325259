/**
 * Failure handling (issue: "each costs only the session concerned"): a child that misbehaves
 * on purpose, in both session modes, seen through the official SDK client.
 */

import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { SessionMode } from '../../src/bridge/pod-contract.ts';
import {
  connect,
  messagesOf,
  post,
  POST_HEADERS,
  rawSession,
  SERVERS,
  startTestBridge,
  textOf,
  toolCall,
} from './harness.ts';
import { waitFor } from '../support/wait.ts';

async function callError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McpError)) throw new Error(`expected an MCP error, got ${String(error)}`);
  return error;
}

describe.each<SessionMode>(['PerSession', 'Shared'])(
  'a misbehaving child, %s mode',
  (sessionMode) => {
    it('skips a non-JSON line on stdout and still answers', async () => {
      const bridge = await startTestBridge({
        sessionMode,
        command: SERVERS.misbehaving('--banner'),
      });
      const client = await connect(bridge.url);
      expect(textOf(await client.callTool({ name: 'garbage', arguments: {} }))).toBe(
        'after garbage',
      );
      expect(
        textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } })),
      ).toBe('still here');
      await client.close();
    });

    it('fails at once a call whose answer is larger than the limit, and goes on', async () => {
      const bridge = await startTestBridge({
        sessionMode,
        command: SERVERS.misbehaving(),
        maxMessageBytes: 64 * 1024,
      });
      const client = await connect(bridge.url);
      const started = performance.now();
      const error = await callError(
        client.callTool({ name: 'huge', arguments: { bytes: 1_000_000 } }),
      );
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(error.code).toBe(-32603);
      expect(error.message).toMatch(/could not be read \(too-large, 10000\d\d bytes\)/);
      expect(
        textOf(await client.callTool({ name: 'echo', arguments: { text: 'after huge' } })),
      ).toBe('after huge');
      await client.close();
    });

    it('fails at once a call answered with invalid UTF-8, and goes on', async () => {
      const bridge = await startTestBridge({ sessionMode, command: SERVERS.misbehaving() });
      const client = await connect(bridge.url);
      const error = await callError(client.callTool({ name: 'bad-utf8', arguments: {} }));
      expect(error.message).toMatch(/could not be read \(invalid-utf8/);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'ok' } }))).toBe('ok');
      await client.close();
    });

    it('times out a call the child never answers, tells the child, and goes on', async () => {
      const bridge = await startTestBridge({
        sessionMode,
        command: SERVERS.misbehaving(),
        requestTimeoutMs: 4_000,
      });
      const client = await connect(bridge.url);
      const error = await callError(
        client.callTool({ name: 'hang', arguments: {} }, undefined, { timeout: 10_000 }),
      );
      expect(error.code).toBe(-32001);
      expect(error.message).toMatch(/did not answer tools\/call within 4000 ms/);
      const stats = JSON.parse(textOf(await client.callTool({ name: 'stats', arguments: {} }))) as {
        cancelled: unknown[];
      };
      expect(stats.cancelled).toHaveLength(1);
      await client.close();
    });

    it('fails in-flight calls at once when the child crashes; the next session gets a fresh child', async () => {
      const bridge = await startTestBridge({
        sessionMode,
        command: SERVERS.misbehaving(),
        requestTimeoutMs: 30_000,
      });
      const client = await connect(bridge.url);
      const sessionId = (client.transport as unknown as { sessionId: string }).sessionId;
      const hanging = callError(
        client.callTool({ name: 'hang', arguments: {} }, undefined, { timeout: 30_000 }),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = performance.now();
      const crash = await callError(client.callTool({ name: 'crash', arguments: {} }));
      const hung = await hanging;
      expect(performance.now() - started).toBeLessThan(2_000);
      for (const error of [crash, hung]) {
        expect(error.code).toBe(-32000);
        expect(error.message).toMatch(/The MCP server process ended \(exited with code 3\)/);
      }
      // The session was bound to that child: it is gone.
      const after = await post(
        bridge.url,
        { jsonrpc: '2.0', id: 9, method: 'ping' },
        { 'mcp-session-id': sessionId },
      );
      expect(after.status).toBe(404);
      await client.close();

      const fresh = await connect(bridge.url);
      const stats = JSON.parse(textOf(await fresh.callTool({ name: 'stats', arguments: {} }))) as {
        initialize: number;
      };
      expect(stats.initialize).toBe(1);
      expect(await bridge.metrics.registry.metrics()).toMatch(/mcp_bridge_child_restarts_total 1/);
      await fresh.close();
    });

    it('keeps serving when a client disconnects in the middle of a stream', async () => {
      const bridge = await startTestBridge({ sessionMode, command: SERVERS.misbehaving() });
      const session = await rawSession(bridge.url);
      const aborted = new AbortController();
      const response = await fetch(bridge.url, {
        method: 'POST',
        headers: { ...POST_HEADERS, 'mcp-session-id': session },
        body: JSON.stringify(toolCall(1, 'progress', { steps: 30 }, { progressToken: 1 })),
        signal: aborted.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      aborted.abort();

      const other = await connect(bridge.url);
      expect(
        textOf(await other.callTool({ name: 'echo', arguments: { text: 'unaffected' } })),
      ).toBe('unaffected');
      const ping = await post(
        bridge.url,
        { jsonrpc: '2.0', id: 2, method: 'ping' },
        { 'mcp-session-id': session },
      );
      expect(await messagesOf(ping)).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
      await other.close();
    });
  },
);

describe('many sessions', { timeout: 120_000 }, () => {
  it('serves a thousand concurrent sessions on one shared child', async () => {
    const bridge = await startTestBridge({
      sessionMode: 'Shared',
      command: SERVERS.misbehaving(),
      maxSessions: 2_000,
    });
    const sessions = await Promise.all(Array.from({ length: 1_000 }, () => rawSession(bridge.url)));
    const answers = await Promise.all(
      sessions.map(async (session, i) => {
        const response = await post(bridge.url, toolCall(1, 'echo', { text: `session ${i}` }), {
          'mcp-session-id': session,
        });
        return (await messagesOf(response))[0];
      }),
    );
    answers.forEach((answer, i) =>
      expect(answer).toMatchObject({ id: 1, result: { content: [{ text: `session ${i}` }] } }),
    );
    await waitFor(
      'the metrics to show them',
      async () =>
        /mcp_bridge_sessions 1000/.test(await bridge.metrics.registry.metrics()) || undefined,
    );
    expect(await bridge.metrics.registry.metrics()).toMatch(/mcp_bridge_children 1\n/);
  });
});
