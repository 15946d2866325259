/**
 * Shared mode: one child for every session. What the child sees (through the fixture's
 * `stats` tool) and what each client sees must both be right.
 */

import {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  connect,
  INITIALIZE,
  messagesOf,
  post,
  rawSession,
  SERVERS,
  startTestBridge,
  textOf,
  toolCall,
} from './harness.ts';
import { waitFor } from '../support/wait.ts';

interface Stats {
  initialize: number;
  initialized: number;
  requestIds: unknown[];
  cancelled: unknown[];
  progressTokens: unknown[];
}

const sharedBridge = (...args: string[]) =>
  startTestBridge({ sessionMode: 'Shared', command: SERVERS.misbehaving(...args) });

/** The protocol version a fresh session asking for `version` is answered with. */
async function negotiated(url: string, version: string): Promise<unknown> {
  const params = { ...INITIALIZE.params, protocolVersion: version };
  const answer = (await (await post(url, { ...INITIALIZE, params })).json()) as {
    result: { protocolVersion: unknown };
  };
  return answer.result.protocolVersion;
}

describe('Shared mode', () => {
  it('initializes the child once and replays its result to later sessions', async () => {
    const bridge = await sharedBridge();
    const clients = await Promise.all(Array.from({ length: 5 }, () => connect(bridge.url)));
    for (const client of clients)
      expect(client.getServerVersion()).toEqual({ name: 'misbehaving-server', version: '1.0.0' });
    const stats = JSON.parse(
      textOf(await clients[0]!.callTool({ name: 'stats', arguments: {} })),
    ) as Stats;
    expect(stats.initialize).toBe(1);
    expect(stats.initialized).toBe(1);
    // The child only ever sees the bridge's own integer ids.
    expect(stats.requestIds.every((id) => typeof id === 'number')).toBe(true);
    expect(new Set(stats.requestIds).size).toBe(stats.requestIds.length);
    await Promise.all(clients.map((client) => client.close()));
  });

  it("records no subscription the child refused: another session's subscribe reaches the child too", async () => {
    const bridge = await sharedBridge();
    const sessions = [await rawSession(bridge.url), await rawSession(bridge.url)];
    for (const [i, session] of sessions.entries()) {
      const subscribe = { jsonrpc: '2.0', id: i + 1, method: 'resources/subscribe' };
      const [answer] = await messagesOf(
        await post(
          bridge.url,
          { ...subscribe, params: { uri: 'demo://x' } },
          {
            'mcp-session-id': session,
          },
        ),
      );
      // This child has no resources: it answers every subscribe with an error.
      expect(answer).toMatchObject({ id: i + 1, error: { code: -32601 } });
    }
  });

  it('negotiates the protocol version with each session, not once for all', async () => {
    const bridge = await sharedBridge();
    expect(await negotiated(bridge.url, '2024-11-05')).toBe('2024-11-05');
    expect(await negotiated(bridge.url, '2025-11-25')).toBe('2025-11-25');
    expect(await negotiated(bridge.url, '2025-06-18')).toBe('2025-06-18');
    // A version the bridge does not know: the newest the child speaks, as a server answers.
    expect(await negotiated(bridge.url, '2099-01-01')).toBe('2025-11-25');
    const session = await rawSession(bridge.url);
    const [answer] = await messagesOf(
      await post(bridge.url, toolCall(1, 'stats'), { 'mcp-session-id': session }),
    );
    expect((JSON.parse(textOf((answer as { result: unknown }).result)) as Stats).initialize).toBe(
      1,
    );
  });

  it('offers no session a newer version than the child speaks', async () => {
    const bridge = await sharedBridge('--newest-version', '2025-03-26');
    expect(await negotiated(bridge.url, '2025-11-25')).toBe('2025-03-26');
    expect(await negotiated(bridge.url, '2024-11-05')).toBe('2024-11-05');
  });

  it('keeps progress of two sessions using the same token apart', async () => {
    const bridge = await sharedBridge();
    const [a, b] = [await rawSession(bridge.url), await rawSession(bridge.url)];
    const [answerA, answerB] = await Promise.all(
      [a, b].map(async (session) =>
        messagesOf(
          await post(bridge.url, toolCall(1, 'progress', { steps: 3 }, { progressToken: 'same' }), {
            'mcp-session-id': session,
          }),
        ),
      ),
    );
    for (const answer of [answerA!, answerB!]) {
      expect(
        answer.map((m) => (m.params as { progress?: number } | undefined)?.progress ?? 'result'),
      ).toEqual([1, 2, 3, 'result']);
      expect(
        answer
          .slice(0, 3)
          .every((m) => (m.params as { progressToken: string }).progressToken === 'same'),
      ).toBe(true);
    }
    const stats = (
      await messagesOf(await post(bridge.url, toolCall(2, 'stats'), { 'mcp-session-id': a }))
    )[0] as { result: unknown };
    const seen = JSON.parse(textOf(stats.result)) as Stats;
    expect(new Set(seen.progressTokens).size).toBe(2); // mapped to distinct tokens for the child
  });

  it('maps a cancellation to the right request of the right session', async () => {
    const bridge = await sharedBridge();
    const [a, b] = [await rawSession(bridge.url), await rawSession(bridge.url)];
    const hangingA = post(bridge.url, toolCall(5, 'hang'), { 'mcp-session-id': a });
    const hangingB = post(bridge.url, toolCall(5, 'hang'), { 'mcp-session-id': b });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const cancel = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 5, reason: 'user' },
    };
    expect((await post(bridge.url, cancel, { 'mcp-session-id': a })).status).toBe(202);

    const stats = JSON.parse(
      textOf(
        (
          (
            await messagesOf(await post(bridge.url, toolCall(6, 'stats'), { 'mcp-session-id': b }))
          )[0] as { result: unknown }
        ).result,
      ),
    ) as Stats;
    expect(stats.cancelled).toHaveLength(1);
    // The child was told about A's request, under the id it knows it by.
    expect(stats.requestIds).toContain(stats.cancelled[0]);
    // Ending the sessions cancels B's request too; neither client waits forever.
    await fetch(bridge.url, { method: 'DELETE', headers: { 'mcp-session-id': b } });
    expect((await messagesOf(await hangingB))[0]).toMatchObject({ id: 5, error: { code: -32000 } });
    await fetch(bridge.url, { method: 'DELETE', headers: { 'mcp-session-id': a } });
    await (await hangingA).text();
  });

  it('fans list_changed out to every session', async () => {
    const bridge = await sharedBridge();
    const clients = await Promise.all([
      connect(bridge.url),
      connect(bridge.url),
      connect(bridge.url),
    ]);
    const notified = clients.map(() => 0);
    clients.forEach((client, i) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        notified[i]!++;
      }),
    );
    await clients[0].callTool({ name: 'change-tools', arguments: {} });
    await waitFor('every session to hear of the change', () =>
      notified.every((n) => n === 1) ? true : undefined,
    );
    const { tools } = await clients[2].listTools();
    expect(tools.find((tool) => tool.name === 'echo')!.description).toMatch(
      /sends your data elsewhere/,
    );
    await Promise.all(clients.map((client) => client.close()));
  });

  it('routes an elicitation to the session whose call the child is working on', async () => {
    const bridge = await sharedBridge();
    const capabilities = { capabilities: { elicitation: { form: {} } } };
    const a = await connect(bridge.url, { capabilities });
    const b = await connect(bridge.url, { capabilities });
    const asked: string[] = [];
    a.setRequestHandler(ElicitRequestSchema, () => {
      asked.push('a');
      return { action: 'accept', content: { name: 'Ada' } };
    });
    b.setRequestHandler(ElicitRequestSchema, () => {
      asked.push('b');
      return { action: 'decline' };
    });
    // B has a call in flight the whole time; A's later call is the one that asks.
    const busy = b.callTool({ name: 'progress', arguments: { steps: 40 } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(JSON.parse(textOf(await a.callTool({ name: 'elicit', arguments: {} })))).toEqual({
      action: 'accept',
      content: { name: 'Ada' },
    });
    expect(JSON.parse(textOf(await b.callTool({ name: 'elicit', arguments: {} })))).toEqual({
      action: 'decline',
    });
    expect(asked).toEqual(['a', 'b']);
    await busy;
    await a.close();
    await b.close();
  });

  it('asks a session only for what it declared: the child gets a refusal instead', async () => {
    const bridge = await sharedBridge();
    // The first session declares elicitation; the second, asking later, declares nothing.
    await connect(bridge.url, { capabilities: { capabilities: { elicitation: { form: {} } } } });
    const session = await rawSession(bridge.url);
    const answer = await messagesOf(
      await post(bridge.url, toolCall(1, 'elicit'), { 'mcp-session-id': session }),
    );
    expect(answer).toHaveLength(1); // no elicitation/create reached the client
    const refusal: unknown = JSON.parse(textOf((answer[0] as { result: unknown }).result));
    expect(refusal).toEqual({
      code: -32601,
      message: 'The client does not support elicitation/create',
    });
  });

  it('shares the state of server-memory between sessions, as one process would', async () => {
    const bridge = await startTestBridge({ sessionMode: 'Shared', command: SERVERS.memory });
    const writer = await connect(bridge.url);
    const reader = await connect(bridge.url);
    await writer.callTool({
      name: 'create_entities',
      arguments: {
        entities: [
          { name: 'bridge', entityType: 'component', observations: ['serves stdio over HTTP'] },
        ],
      },
    });
    const graph = textOf(await reader.callTool({ name: 'read_graph', arguments: {} }));
    expect(graph).toContain('serves stdio over HTTP');
    await writer.close();
    await reader.close();
  });
});
