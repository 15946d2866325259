/**
 * Streamable HTTP, revision 2025-11-25 (basic/transports), checked with raw HTTP: the status
 * codes, headers and stream shapes that the SDK client never exercises on purpose.
 */

import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  INITIALIZE,
  messagesOf,
  post,
  POST_HEADERS,
  rawSession,
  SERVERS,
  sseEvents,
  startTestBridge,
  toolCall,
  tempDir,
} from './harness.ts';
import { waitFor } from '../support/wait.ts';

const fixtureBridge = (options: Parameters<typeof startTestBridge>[0] = {}) =>
  startTestBridge({ command: SERVERS.misbehaving(), ...options });

/** Reads an SSE response until `until` matches an event, then stops reading. */
async function readEvents(
  response: Response,
  until: (event: { id?: string; data: string }) => boolean,
) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    const events = sseEvents(text.slice(0, text.lastIndexOf('\n\n') + 2));
    if (events.some(until)) {
      await reader.cancel();
      return events;
    }
  }
  return sseEvents(text);
}

describe('guards', () => {
  it('refuses a foreign Origin with 403 and accepts loopback origins by default', async () => {
    const bridge = await fixtureBridge();
    const refused = await post(bridge.url, INITIALIZE, { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { message: 'Forbidden: this Origin is not allowed' },
    });
    expect((await post(bridge.url, INITIALIZE, { origin: 'http://localhost:5173' })).status).toBe(
      200,
    );
  });

  it('with an allow list, accepts exactly the listed origins', async () => {
    const bridge = await fixtureBridge({ allowedOrigins: ['https://app.example'] });
    expect((await post(bridge.url, INITIALIZE, { origin: 'https://app.example' })).status).toBe(
      200,
    );
    expect((await post(bridge.url, INITIALIZE, { origin: 'http://localhost:5173' })).status).toBe(
      403,
    );
    expect((await post(bridge.url, INITIALIZE)).status).toBe(200); // no Origin: not a browser
  });

  it('requires the bearer token when one is configured', async () => {
    const bridge = await fixtureBridge({ authToken: 's3cret-token' });
    const missing = await post(bridge.url, INITIALIZE);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect((await post(bridge.url, INITIALIZE, { authorization: 'Bearer wrong' })).status).toBe(
      401,
    );
    expect(
      (await post(bridge.url, INITIALIZE, { authorization: 'Basic s3cret-token' })).status,
    ).toBe(401);
    expect(
      (await post(bridge.url, INITIALIZE, { authorization: 'Bearer s3cret-token' })).status,
    ).toBe(200);
    // Probes and metrics stay open: the kubelet and Prometheus carry no token.
    expect((await fetch(bridge.url.replace('/mcp', '/healthz'))).status).toBe(200);
  });

  it('follows a rotated token file, and refuses everything when it cannot read one', async () => {
    const dir = await tempDir('token');
    const file = join(dir, 'token');
    await writeFile(file, 'first-token\n');
    const bridge = await fixtureBridge({ authTokenFile: file });
    expect(
      (await post(bridge.url, INITIALIZE, { authorization: 'Bearer first-token' })).status,
    ).toBe(200);
    await writeFile(file, 'second-token\n');
    await waitFor(
      'the new token',
      async () =>
        (await post(bridge.url, INITIALIZE, { authorization: 'Bearer second-token' })).status ===
          200 || undefined,
    );
    expect(
      (await post(bridge.url, INITIALIZE, { authorization: 'Bearer first-token' })).status,
    ).toBe(401);

    const unreadable = await fixtureBridge({ authTokenFile: join(dir, 'missing') });
    const refused = await post(unreadable.url, INITIALIZE, { authorization: 'Bearer first-token' });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({
      error: { message: 'The bridge cannot read its token file' },
    });
  });

  it('revokes the token when its file is deleted, emptied or unreadable: 503, not the old token', async () => {
    const dir = await tempDir('token');
    const file = join(dir, 'token');
    await writeFile(file, 'revocable-token\n');
    const bridge = await fixtureBridge({ authTokenFile: file });
    const withToken = () =>
      post(bridge.url, INITIALIZE, { authorization: 'Bearer revocable-token' });
    expect((await withToken()).status).toBe(200);
    const refusedWith = async (what: string) => {
      const refused = await waitFor(what, async () => {
        const answer = await withToken();
        return answer.status === 503 ? answer : undefined;
      });
      expect(await refused.json()).toMatchObject({
        error: { message: 'The bridge cannot read its token file' },
      });
    };
    const servedAgain = () =>
      waitFor('the token to be back', async () => (await withToken()).status === 200 || undefined);

    await rm(file);
    await refusedWith('the deleted token file to refuse requests');
    await writeFile(file, 'revocable-token\n');
    await servedAgain();
    await writeFile(file, '');
    await refusedWith('the emptied token file to refuse requests');
    await writeFile(file, 'revocable-token\n');
    await servedAgain();
    // A directory in its place cannot be read, whoever the bridge runs as.
    await rm(file);
    await mkdir(file);
    await refusedWith('the unreadable token file to refuse requests');
  });

  it('warns when it listens beyond loopback without a bearer token', async () => {
    const warnings = async (options: Parameters<typeof fixtureBridge>[0]) => {
      const lines: { level: number; msg: string; address?: string }[] = [];
      const write = (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]);
      await fixtureBridge({ logger: pino({ level: 'warn' }, { write }), ...options });
      return lines
        .filter((line) => /bearer token/.test(line.msg))
        .map(({ level, msg, address }) => ({ level, msg, address }));
    };
    expect(await warnings({ host: '0.0.0.0' })).toEqual([
      {
        level: 40,
        address: '0.0.0.0',
        msg: 'listening beyond loopback without a bearer token: anyone who can reach this address can use the MCP server; set --auth-token-file or $MCP_BRIDGE_AUTH_TOKEN',
      },
    ]);
    expect(await warnings({ host: '0.0.0.0', authToken: 'set' })).toEqual([]);
    expect(await warnings({ host: '127.0.0.1' })).toEqual([]);
    expect(await warnings({ host: '::1' })).toEqual([]);
  });

  it('answers wrong media types, oversized bodies, bad JSON, batches and non-messages', async () => {
    const bridge = await fixtureBridge({ maxMessageBytes: 2048 });
    const status = async (init: RequestInit) => {
      const response = await fetch(bridge.url, { method: 'POST', ...init });
      return {
        status: response.status,
        body: (await response.json()) as { id: unknown; error: { code: number } },
      };
    };
    const json = JSON.stringify(INITIALIZE);
    expect(
      (await status({ headers: { ...POST_HEADERS, 'content-type': 'text/plain' }, body: json }))
        .status,
    ).toBe(415);
    expect(
      (await status({ headers: { ...POST_HEADERS, accept: 'application/json' }, body: json }))
        .status,
    ).toBe(406);

    const big = await status({
      headers: POST_HEADERS,
      body: JSON.stringify({ ...INITIALIZE, params: { pad: 'x'.repeat(4096) } }),
    });
    expect(big.status).toBe(413);

    const parse = await status({ headers: POST_HEADERS, body: '{"jsonrpc": "2.0", "id": 1,' });
    expect(parse.status).toBe(400);
    expect(parse.body.id).toBeNull();
    expect(parse.body.error.code).toBe(-32700);
    const batch = await status({ headers: POST_HEADERS, body: `[${json}]` });
    expect(batch.status).toBe(400);
    expect(batch.body.error.code).toBe(-32600);
    const notRpc = await status({ headers: POST_HEADERS, body: '{"hello": "world"}' });
    expect(notRpc.status).toBe(400);
    expect(notRpc.body.error.code).toBe(-32600);

    // None of that disturbed the bridge.
    expect((await post(bridge.url, INITIALIZE)).status).toBe(200);
  });

  it('answers other HTTP methods with 405 and an Allow header', async () => {
    const bridge = await fixtureBridge();
    const response = await fetch(bridge.url, { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST, DELETE');
  });
});

describe('sessions', () => {
  it('issues Mcp-Session-Id on initialize and requires it afterwards (400 missing, 404 unknown)', async () => {
    const bridge = await fixtureBridge();
    const init = await post(bridge.url, INITIALIZE);
    expect(init.status).toBe(200);
    expect(init.headers.get('content-type')).toBe('application/json');
    const session = init.headers.get('mcp-session-id')!;
    expect(session).toMatch(/^[\x21-\x7e]+$/); // visible ASCII only
    expect(await init.json()).toMatchObject({
      id: 1,
      result: { serverInfo: { name: 'misbehaving-server' } },
    });

    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    expect((await post(bridge.url, ping)).status).toBe(400);
    expect((await post(bridge.url, ping, { 'mcp-session-id': 'no-such-session' })).status).toBe(
      404,
    );
    const again = await post(bridge.url, INITIALIZE, { 'mcp-session-id': session });
    expect(again.status).toBe(400);
  });

  it('checks MCP-Protocol-Version and assumes 2025-03-26 when it is absent', async () => {
    const bridge = await fixtureBridge();
    const session = await rawSession(bridge.url);
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    const wrong = await post(bridge.url, ping, {
      'mcp-session-id': session,
      'mcp-protocol-version': '1999-01-01',
    });
    expect(wrong.status).toBe(400);
    const versions: Record<string, string>[] = [{ 'mcp-protocol-version': '2025-11-25' }, {}];
    for (const headers of versions) {
      const ok = await post(bridge.url, ping, { 'mcp-session-id': session, ...headers });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    }
  });

  it('answers notifications and responses with 202 and no body', async () => {
    const bridge = await fixtureBridge();
    const session = await rawSession(bridge.url);
    const notification = await post(
      bridge.url,
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      { 'mcp-session-id': session },
    );
    expect(notification.status).toBe(202);
    expect(await notification.text()).toBe('');
    const response = await post(
      bridge.url,
      { jsonrpc: '2.0', id: 'nobody-asked', result: {} },
      { 'mcp-session-id': session },
    );
    expect(response.status).toBe(202);
  });

  it('keeps string and integer ids apart and restores them exactly', async () => {
    const bridge = await fixtureBridge();
    const session = await rawSession(bridge.url);
    const headers = { 'mcp-session-id': session };
    const [a, b] = await Promise.all([
      post(bridge.url, toolCall('7', 'echo', { text: 'string' }), headers),
      post(bridge.url, toolCall(7, 'echo', { text: 'number' }), headers),
    ]);
    expect(await a.json()).toMatchObject({ id: '7', result: { content: [{ text: 'string' }] } });
    expect(await b.json()).toMatchObject({ id: 7, result: { content: [{ text: 'number' }] } });
  });

  it('ends a session on DELETE', async () => {
    const bridge = await fixtureBridge();
    const session = await rawSession(bridge.url);
    expect(
      (await fetch(bridge.url, { method: 'DELETE', headers: { 'mcp-session-id': session } }))
        .status,
    ).toBe(204);
    expect(
      (await fetch(bridge.url, { method: 'DELETE', headers: { 'mcp-session-id': session } }))
        .status,
    ).toBe(404);
  });
});

describe('streams', () => {
  it('switches a response to SSE when notifications come first: primed, with event ids, ending with the response', async () => {
    const bridge = await fixtureBridge();
    const session = await rawSession(bridge.url);
    const response = await post(
      bridge.url,
      toolCall(3, 'progress', { steps: 2 }, { progressToken: 'tok' }),
      { 'mcp-session-id': session },
    );
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('mcp-session-id')).toBe(session);
    const events = sseEvents(await response.text());
    expect(events[0]).toEqual({ id: expect.stringMatching(/^\d+-0$/) as unknown, data: '' });
    const messages = events
      .slice(1)
      .map((event) => JSON.parse(event.data) as Record<string, unknown>);
    expect(messages).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'tok', progress: 1, total: 2 },
      },
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'tok', progress: 2, total: 2 },
      },
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'done in 2 steps' }] } },
    ]);
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
  });

  it('judges the media types of every request afresh: parameters, case and wildcards', async () => {
    const bridge = await fixtureBridge();
    const statusWith = async (headers: Record<string, string>) => {
      const response = await fetch(bridge.url, {
        method: 'POST',
        headers: { ...POST_HEADERS, ...headers },
        body: JSON.stringify(INITIALIZE),
      });
      await response.body?.cancel();
      return response.status;
    };
    // The same Accept and Content-Type in turn with others: no verdict carries over.
    expect(await statusWith({})).toBe(200);
    expect(await statusWith({ accept: 'application/json' })).toBe(406);
    expect(await statusWith({})).toBe(200);
    expect(await statusWith({ accept: 'text/event-stream' })).toBe(406);
    expect(await statusWith({ accept: 'Application/JSON;q=0.9, text/*' })).toBe(200);
    expect(await statusWith({ accept: '*/*' })).toBe(200);
    expect(await statusWith({ 'content-type': 'Application/Json; charset=utf-8' })).toBe(200);
    expect(await statusWith({ 'content-type': 'application/jsonp' })).toBe(415);
    expect(await statusWith({})).toBe(200);
  });

  it('delivers server-initiated messages on the GET stream; a second GET stream is a 409', async () => {
    const bridge = await fixtureBridge();
    const session = await rawSession(bridge.url);
    const headers = { 'mcp-session-id': session, accept: 'text/event-stream' };
    expect(
      (
        await fetch(bridge.url, {
          headers: { 'mcp-session-id': session, accept: 'application/json' },
        })
      ).status,
    ).toBe(406);
    const stream = await fetch(bridge.url, { headers });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    const second = await fetch(bridge.url, { headers });
    expect(second.status).toBe(409);
    await second.text();

    const changed = await post(bridge.url, toolCall(4, 'change-tools'), {
      'mcp-session-id': session,
    });
    expect(await messagesOf(changed)).toEqual([
      { jsonrpc: '2.0', id: 4, result: { content: [{ type: 'text', text: 'changed' }] } },
    ]);
    const events = await readEvents(stream, (event) => event.data.includes('list_changed'));
    expect(events.map((event) => event.data).filter(Boolean)).toEqual([
      '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}',
    ]);
  });

  it('resumes a broken POST stream with Last-Event-ID, replaying only what the client missed', async () => {
    const bridge = await fixtureBridge();
    const session = await rawSession(bridge.url);
    const response = await post(
      bridge.url,
      toolCall(5, 'progress', { steps: 20 }, { progressToken: 9 }),
      { 'mcp-session-id': session },
    );
    // The client reads two progress events, then its connection drops. (On a busy machine the
    // chunk that carried the second may carry more: the client resumes after the second.)
    const secondProgress = (event: { data: string }) => event.data.includes('"progress":2');
    const seen = await readEvents(response, secondProgress);
    const last = seen.find(secondProgress)!.id!;

    const resumed = await fetch(bridge.url, {
      headers: { 'mcp-session-id': session, accept: 'text/event-stream', 'last-event-id': last },
    });
    expect(resumed.status).toBe(200);
    const rest = sseEvents(await resumed.text()).map(
      (event) => JSON.parse(event.data) as { params?: { progress: number }; id?: number },
    );
    expect(rest[0]!.params!.progress).toBe(3);
    expect(rest.at(-1)).toMatchObject({
      id: 5,
      result: { content: [{ text: 'done in 20 steps' }] },
    });
    expect(
      rest.filter((message) => message.params).map((message) => message.params!.progress),
    ).toEqual(Array.from({ length: 18 }, (_, i) => i + 3));
  });

  it('answers a Last-Event-ID that names no stream of the session with 400', async () => {
    const bridge = await fixtureBridge();
    const session = await rawSession(bridge.url);
    const response = await fetch(bridge.url, {
      headers: { 'mcp-session-id': session, accept: 'text/event-stream', 'last-event-id': '99-1' },
    });
    expect(response.status).toBe(400);
  });
});

describe('operations', () => {
  it('serves /healthz, /readyz once a child answered, and Prometheus metrics', async () => {
    const bridge = await fixtureBridge();
    const base = bridge.url.replace('/mcp', '');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await bridge.probed;
    expect(await (await fetch(`${base}/readyz`)).text()).toBe('ready\n');
    const session = await rawSession(bridge.url);
    await (
      await post(bridge.url, toolCall(1, 'echo', { text: 'x' }), { 'mcp-session-id': session })
    ).text();
    await (
      await post(
        bridge.url,
        { jsonrpc: '2.0', id: 2, method: 'made/up' },
        { 'mcp-session-id': session },
      )
    ).text();
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/mcp_bridge_requests_total\{method="tools\/call",outcome="ok"\} 1/);
    expect(metrics).toMatch(/mcp_bridge_requests_total\{method="other",outcome="error"\} 1/);
    expect(metrics).toMatch(/mcp_bridge_request_duration_seconds_count\{method="initialize"\} \d/);
    expect(metrics).toMatch(/mcp_bridge_sessions 1/);
  });

  it('reports not ready while no child can be started', async () => {
    const bridge = await startTestBridge({ command: ['/nonexistent/server'] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const readyz = await fetch(bridge.url.replace('/mcp', '/readyz'));
    expect(readyz.status).toBe(503);
    expect(await readyz.text()).toMatch(/not ready/);
    const init = await post(bridge.url, INITIALIZE);
    expect(init.status).toBe(503);
    expect(((await init.json()) as { error: { message: string } }).error.message).toBe(
      'The MCP server could not be started',
    );
  });
});
