/**
 * A child's answer reaches the client as the child wrote it, but for the id: the bridge does
 * not serialise it again, so nothing JSON.parse would change (a 64-bit integer, a key order)
 * is changed on the way. Layouts it does not splice are serialised and still correct.
 */

import { describe, expect, it } from 'vitest';
import type { SessionMode } from '../../src/bridge/pod-contract.ts';
import { post, rawSession, SERVERS, sseEvents, startTestBridge, toolCall } from './harness.ts';

const BIG = '12345678901234567890';

async function answer(sessionMode: SessionMode, layout: string, id: number | string) {
  const bridge = await startTestBridge({ sessionMode, command: SERVERS.misbehaving() });
  const session = await rawSession(bridge.url);
  const response = await post(bridge.url, toolCall(id, 'verbatim', { layout }), {
    'mcp-session-id': session,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return response.text();
}

describe.each<SessionMode>(['PerSession', 'Shared'])('answers passed on, %s mode', (mode) => {
  it("keeps the child's bytes and gives the client back its own id", async () => {
    const text = await answer(mode, 'sdk', 'request "one"');
    expect(text).toBe(
      `{"jsonrpc":"2.0","id":"request \\"one\\"","result":{"content":[{"type":"text","text":"big"}],"structuredContent":{"n":${BIG}}}}`,
    );
  });

  it('serialises an answer of another layout, with the right id', async () => {
    for (const layout of ['id-last', 'cr']) {
      const text = await answer(mode, layout, 7);
      expect(JSON.parse(text)).toMatchObject({ jsonrpc: '2.0', id: 7, result: {} });
      expect(text).not.toContain('\r');
    }
  });
});

it('passes an answer on verbatim in an SSE stream too', async () => {
  const bridge = await startTestBridge({ command: SERVERS.misbehaving() });
  const session = await rawSession(bridge.url);
  // The log notification before the answer switches the request's answer to SSE.
  const response = await post(bridge.url, toolCall(2, 'verbatim', { layout: 'sdk', log: true }), {
    'mcp-session-id': session,
  });
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  // Past the priming event (an id, no data): the notification, then the answer.
  const messages = sseEvents(await response.text()).filter((event) => event.data !== '');
  expect(messages).toHaveLength(2);
  expect(messages[1]!.data).toBe(
    `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"big"}],"structuredContent":{"n":${BIG}}}}`,
  );
});
