/**
 * Failure handling (issue: "each costs only the session concerned"): a child that misbehaves
 * on purpose, in both session modes, seen through the official SDK client.
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionMode } from '../../src/bridge/pod-contract.ts';
import type { RunningBridge } from '../../src/bridge/server.ts';
import {
  callError,
  connect,
  INITIALIZE,
  messagesOf,
  NODE,
  post,
  POST_HEADERS,
  rawSession,
  SERVERS,
  startTestBridge,
  textOf,
  toolCall,
} from './harness.ts';
import { startSupervisor } from './pod.ts';
import { waitFor } from '../support/wait.ts';

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
      // What the call held is given back once: not left counted, and not given back twice.
      await allGivenBack(bridge);
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

/** A client notification of about `bytes` bytes (a padded roots/list_changed). */
const bigNotification = (bytes: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/roots/list_changed',
  params: { padding: 'x'.repeat(bytes) },
});

/** A raw session whose child has stopped reading its stdin. */
async function stuckSession(url: string): Promise<string> {
  const session = await rawSession(url);
  await (await post(url, toolCall('stop', 'stop-reading'), { 'mcp-session-id': session })).text();
  return session;
}

/** Posts notifications to a session until one is refused; the refusal and how many passed. */
async function floodUntilRefused(url: string, session: string, bytes: number) {
  for (let passed = 0; passed < 200; passed++) {
    const answer = await post(url, bigNotification(bytes), { 'mcp-session-id': session });
    if (answer.status !== 202) return { passed, answer };
    await answer.text();
  }
  throw new Error('200 notifications passed: nothing bounds what waits for the child');
}

/** Nothing is left counted once nothing waits: every byte taken was given back. */
const allGivenBack = (bridge: RunningBridge) =>
  waitFor('the budget to be all given back', () => bridge.bridge.budget.held === 0 || undefined);

describe('backpressure toward the child', { timeout: 120_000 }, () => {
  // --max-message-bytes 64 KiB: a session may hold 256 KiB for its child, the bridge 1 MiB.
  const small = () =>
    startTestBridge({ command: SERVERS.misbehaving(), maxMessageBytes: 64 * 1024 });

  it.each(['spawned', 'supervised (pod mode)'])(
    'refuses a session more than its share for a child that stopped reading: 429, others unaffected; %s',
    async (launch) => {
      const bridge =
        launch === 'spawned'
          ? await small()
          : await startTestBridge({
              supervisorDir: (await startSupervisor(SERVERS.misbehaving())).dir,
              maxMessageBytes: 64 * 1024,
            });
      const stuck = await stuckSession(bridge.url);
      const { passed, answer } = await floodUntilRefused(bridge.url, stuck, 60_000);
      expect(passed).toBeGreaterThan(0);
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(await answer.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: expect.stringMatching(
            /^Too much is waiting for the MCP server in this session \(limit 262144 bytes\); retry later$/,
          ) as string,
        },
      });
      // Refused again within a few messages: the child reads nothing, so at most what the pipe
      // itself buffers (a FIFO in pod mode) drains out of the bridge's count meanwhile.
      const again = await floodUntilRefused(bridge.url, stuck, 60_000);
      expect(again.passed).toBeLessThanOrEqual(2);
      expect(again.answer.status).toBe(429);
      await again.answer.text();
      // Both refusals are counted, so the saturation alert sees them.
      expect(await bridge.metrics.registry.metrics()).toMatch(
        /^mcp_bridge_refusals_total\{bound="session_bytes"\} 2$/m,
      );
      // Another session, with a child of its own, is served as before.
      const other = await connect(bridge.url);
      expect(textOf(await other.callTool({ name: 'echo', arguments: { text: 'fine' } }))).toBe(
        'fine',
      );
      await other.close();
      // Ending the session stops its child; what waited for it is given back.
      await fetch(bridge.url, { method: 'DELETE', headers: { 'mcp-session-id': stuck } });
      await allGivenBack(bridge);
    },
  );

  it('bounds requests the child holds unanswered too', async () => {
    const bridge = await small();
    const session = await rawSession(bridge.url);
    const headers = { 'mcp-session-id': session };
    const padding = 'x'.repeat(60_000);
    // `hang` reads each call and never answers it: the bridge keeps them in flight. All four at
    // once, which fit the bound only if each counts once, also while it is written to the child.
    const held = [1, 2, 3, 4].map((id) =>
      post(bridge.url, toolCall(id, 'hang', { padding }), headers),
    );
    await waitFor('the four calls to be in flight', () =>
      bridge.bridge.inFlight === 4 ? true : undefined,
    );
    const refused = await post(bridge.url, toolCall(5, 'hang', { padding }), headers);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { code: -32000 } });
    // Ending the session ends those calls and frees what they held.
    await fetch(bridge.url, { method: 'DELETE', headers });
    for (const answer of await Promise.all(held)) await answer.text();
    await allGivenBack(bridge);
    const fresh = await rawSession(bridge.url);
    const [echo] = await messagesOf(
      await post(bridge.url, toolCall(6, 'echo', { text: padding }), { 'mcp-session-id': fresh }),
    );
    expect(echo).toMatchObject({ id: 6, result: { content: [{ text: padding }] } });
  });

  it('bounds what all sessions together queue: 503, freed again when a stuck session ends', async () => {
    const bridge = await small();
    const sessions: string[] = [];
    let refusal: Response | undefined;
    while (!refusal && sessions.length < 10) {
      const session = await stuckSession(bridge.url);
      sessions.push(session);
      const { answer } = await floodUntilRefused(bridge.url, session, 60_000);
      if (answer.status === 503) refusal = answer;
      else await answer.text();
    }
    expect(refusal?.status).toBe(503);
    expect(refusal!.headers.get('retry-after')).toBe('1');
    expect(await refusal!.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message:
          'Too much is waiting for the MCP servers of this bridge (limit 1048576 bytes); retry later',
      },
    });
    // Five stuck sessions at 256 KiB each cannot all fit in 1 MiB.
    expect(sessions.length).toBeLessThanOrEqual(5);
    // The first session ends: its child is stopped and what waited for it is freed.
    await fetch(bridge.url, { method: 'DELETE', headers: { 'mcp-session-id': sessions[0]! } });
    const last = sessions.at(-1)!;
    await waitFor('room for the last session again', async () => {
      const answer = await post(bridge.url, bigNotification(60_000), { 'mcp-session-id': last });
      await answer.text();
      return answer.status === 202 || undefined;
    });
    for (const session of sessions)
      await fetch(bridge.url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
    await allGivenBack(bridge);
  });
});

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/**
 * `mcp-operator bridge` as its own process with a 192 MB heap, in front of the fixture: a
 * bridge that buffers without bound dies of "JavaScript heap out of memory" here.
 */
async function smallHeapBridge(): Promise<{ url: string; alive: () => boolean }> {
  const child = spawn(
    NODE,
    [
      '--max-old-space-size=192',
      CLI,
      'bridge',
      '--listen',
      '127.0.0.1:0',
      '--',
      ...SERVERS.misbehaving(),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = once(child, 'exit');
  stops.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  for await (const line of createInterface({ input: child.stdout })) {
    const { url } = JSON.parse(line) as { url?: string };
    if (url === undefined) continue;
    child.stdout.resume(); // keep draining its logs
    return { url, alive: () => child.exitCode === null && child.signalCode === null };
  }
  throw new Error('the bridge exited before it listened');
}

describe('a flood of large messages (192 MB heap)', { timeout: 180_000 }, () => {
  it('survives 400 x 1 MB notifications, 25 ms apart, to a child that stopped reading', async () => {
    const bridge = await smallHeapBridge();
    const session = await stuckSession(bridge.url);
    const statuses = new Map<number | string, number>();
    for (let i = 0; i < 400; i++) {
      const status = await post(bridge.url, bigNotification(1_000_000), {
        'mcp-session-id': session,
      })
        .then(async (answer) => (await answer.text(), answer.status))
        .catch((error: unknown) => String(error));
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      await sleep(25);
    }
    expect(bridge.alive()).toBe(true);
    expect([...statuses.keys()].sort()).toEqual([202, 429]);
    const fresh = await connect(bridge.url);
    expect(textOf(await fresh.callTool({ name: 'echo', arguments: { text: 'alive' } }))).toBe(
      'alive',
    );
    await fresh.close();
  });

  it('survives 400 x 1 MB notifications at once, in front of a healthy child', async () => {
    const bridge = await smallHeapBridge();
    const initialized = await post(bridge.url, INITIALIZE);
    const session = initialized.headers.get('mcp-session-id')!;
    await initialized.text();
    const statuses = await Promise.all(
      Array.from({ length: 400 }, () =>
        post(bridge.url, bigNotification(1_000_000), { 'mcp-session-id': session })
          .then(async (answer) => (await answer.text(), answer.status))
          .catch((error: unknown) => String(error)),
      ),
    );
    expect(bridge.alive()).toBe(true);
    expect(statuses.filter((status) => ![202, 429, 503].includes(status as number))).toEqual([]);
    const [echo] = await messagesOf(
      await post(bridge.url, toolCall(1, 'echo', { text: 'alive' }), { 'mcp-session-id': session }),
    );
    expect(echo).toMatchObject({ result: { content: [{ text: 'alive' }] } });
  });
});
