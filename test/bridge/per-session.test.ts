/**
 * PerSession mode in local mode: one real server process per MCP session, driven by the
 * official SDK client over Streamable HTTP.
 */

import { describe, expect, it } from 'vitest';
import { connect, post, rawSession, SERVERS, startTestBridge, textOf } from './harness.ts';
import { waitFor } from '../support/wait.ts';

describe('PerSession bridge in front of server-everything', () => {
  it('serves tools, progress and resources through the SDK client', async () => {
    const bridge = await startTestBridge({ command: SERVERS.everything });
    const client = await connect(bridge.url);

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('echo');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'hello' } }))).toBe(
      'Echo: hello',
    );

    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      undefined,
      { onprogress: (update) => progress.push(update.progress) },
    );
    expect(textOf(result)).toContain('Long running operation completed');
    expect(progress).toEqual([1, 2, 3]);

    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    await client.close();
  });

  it('gives every session a process of its own, and stops it when the session ends', async () => {
    const bridge = await startTestBridge({ command: SERVERS.misbehaving() });
    await bridge.probed;
    const children = () => Number(/mcp_bridge_children (\d+)/.exec(text)?.[1]);
    let text = await bridge.metrics.registry.metrics();
    expect(children()).toBe(0);

    const [a, b] = await Promise.all([connect(bridge.url), connect(bridge.url)]);
    const stats = async (client: typeof a) =>
      JSON.parse(textOf(await client.callTool({ name: 'stats', arguments: {} }))) as {
        initialize: number;
        requestIds: unknown[];
      };
    // Each child saw exactly one initialize: its own session's.
    expect((await stats(a)).initialize).toBe(1);
    expect((await stats(b)).initialize).toBe(1);
    text = await bridge.metrics.registry.metrics();
    expect(children()).toBe(2);
    expect(text).toMatch(/mcp_bridge_sessions 2/);

    const transport = a.transport as unknown as { terminateSession(): Promise<void> };
    await transport.terminateSession();
    await waitFor('the ended session to release its process', async () => {
      text = await bridge.metrics.registry.metrics();
      return children() === 1 || undefined;
    });
    await a.close();
    await b.close();
  });

  it('answers 404 once a session was deleted, so the client starts a new one', async () => {
    const bridge = await startTestBridge({ command: SERVERS.misbehaving() });
    const session = await rawSession(bridge.url);
    const deleted = await fetch(bridge.url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': session },
    });
    expect(deleted.status).toBe(204);
    const after = await post(
      bridge.url,
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { 'mcp-session-id': session },
    );
    expect(after.status).toBe(404);
    expect(((await after.json()) as { error: { message: string } }).error.message).toMatch(
      /Session not found/,
    );
  });

  it('refuses sessions over the limit with a clear 503 and counts it, and serves again when one ends', async () => {
    const bridge = await startTestBridge({ command: SERVERS.misbehaving(), maxSessions: 2 });
    const first = await rawSession(bridge.url);
    await rawSession(bridge.url);
    const refused = await post(bridge.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {},
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    const body = (await refused.json()) as { id: number; error: { message: string } };
    expect(body.id).toBe(1);
    expect(body.error.message).toMatch(/Too many sessions: the limit of 2 is reached/);
    // What the saturation alert reads: the bound, the sessions at it, and the refusal.
    const metrics = await bridge.metrics.registry.metrics();
    expect(metrics).toMatch(/^mcp_bridge_sessions 2$/m);
    expect(metrics).toMatch(/^mcp_bridge_sessions_max 2$/m);
    expect(metrics).toMatch(/^mcp_bridge_refusals_total\{bound="sessions"\} 1$/m);

    await fetch(bridge.url, { method: 'DELETE', headers: { 'mcp-session-id': first } });
    await rawSession(bridge.url);
  });

  it('ends idle sessions after the idle timeout and stops their process', async () => {
    const bridge = await startTestBridge({ command: SERVERS.misbehaving(), idleTimeoutMs: 3_000 });
    const session = await rawSession(bridge.url);
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    expect((await post(bridge.url, ping, { 'mcp-session-id': session })).status).toBe(200);
    await waitFor('the idle session to end', () =>
      bridge.bridge.sessionCount === 0 ? true : undefined,
    );
    expect((await post(bridge.url, ping, { 'mcp-session-id': session })).status).toBe(404);
    await waitFor(
      'its process to stop',
      async () =>
        /mcp_bridge_children 0/.test(await bridge.metrics.registry.metrics()) || undefined,
    );
  });

  it('hands a new session a pre-started process from the warm pool', async () => {
    // A server that takes 2 s before it reads stdin: the pool hides that cold start.
    const command = SERVERS.misbehaving('--slow-start', '2000');
    const cold = await startTestBridge({ command });
    const warm = await startTestBridge({ command, warmPool: 2 });
    await new Promise((resolve) => setTimeout(resolve, 3_500));

    const timed = async (url: string) => {
      const started = performance.now();
      await rawSession(url);
      return performance.now() - started;
    };
    const [coldMs, warmMs] = await Promise.all([timed(cold.url), timed(warm.url)]);
    expect(coldMs).toBeGreaterThan(1_900);
    expect(coldMs - warmMs).toBeGreaterThan(1_000);
    // The pool refills itself.
    await waitFor(
      'the pool to refill',
      async () => /mcp_bridge_children 3/.test(await warm.metrics.registry.metrics()) || undefined,
    );
  });

  it('shuts down gracefully: requests in flight finish, then the children stop', async () => {
    const bridge = await startTestBridge({ command: SERVERS.misbehaving() });
    const client = await connect(bridge.url);
    const slow = client.callTool({ name: 'progress', arguments: { steps: 30 } });
    // In flight before the shutdown begins: a fixed pause was too short on a loaded machine.
    await waitFor('the call to be in flight', () => bridge.bridge.inFlight === 1 || undefined);
    const closing = bridge.close();
    expect(textOf(await slow)).toBe('done in 30 steps');
    await closing;
    // No new sessions while and after closing.
    await expect(connect(bridge.url)).rejects.toThrow();
    expect(await bridge.metrics.registry.metrics()).toMatch(/mcp_bridge_children 0/);
  });
});
