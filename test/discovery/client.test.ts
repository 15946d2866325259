import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  discover,
  DISCOVERY_CLIENT_CAPABILITIES,
  type DiscoveryOptions,
} from '../../src/discovery/client.ts';
import { OperatorError, type ErrorCode } from '../../src/errors.ts';
import {
  type Running,
  fixtureTool,
  flood,
  hostile,
  sdkListTools,
  startEverything,
  startHttp,
  startModern,
  startScripted,
  track,
} from './servers.ts';

/** Runs discovery expecting it to fail; returns the error and how long it took. */
async function failure(options: DiscoveryOptions): Promise<{ error: OperatorError; ms: number }> {
  const started = performance.now();
  const error: unknown = await discover(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof OperatorError))
    throw new Error(`expected an OperatorError, got ${String(error)}`);
  return { error, ms: performance.now() - started };
}

async function expectFailure(
  options: DiscoveryOptions,
  code: ErrorCode,
  message: RegExp,
): Promise<number> {
  const { error, ms } = await failure(options);
  expect(error.code).toBe(code);
  expect(error.message).toMatch(message);
  return ms;
}

const tool = fixtureTool;

describe('against the reference server (server-everything, 2025-11-25 with sessions)', () => {
  let everything: Running & { log(): string };
  beforeAll(async () => {
    everything = await startEverything();
  });
  afterAll(async () => {
    await everything.close();
  });

  it('falls back to initialize and lists exactly the tools an agent sees, those it shows only to agents that can answer its requests included', async () => {
    const discovered = await discover({ url: everything.url });
    expect(discovered.protocolVersion).toBe('2025-11-25');
    expect(discovered.serverInfo?.name).toBe('mcp-servers/everything');
    expect(discovered.capabilities).toHaveProperty('tools');
    expect(discovered.tools).toEqual(
      await sdkListTools(everything.url, undefined, DISCOVERY_CLIENT_CAPABILITIES),
    );
    const names = discovered.tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'get-roots-list',
        'trigger-sampling-request',
        'trigger-elicitation-request',
        'trigger-url-elicitation',
      ]),
    );
    expect(discovered.tools.length).toBeGreaterThan((await sdkListTools(everything.url)).length);
  });

  it('closes the session it opened', async () => {
    const before = everything.log().split('session termination request').length;
    await discover({ url: everything.url });
    expect(everything.log().split('session termination request').length).toBe(before + 1);
  });
});

describe('against a 2026-07-28 server (v2 SDK)', () => {
  const tools = [
    tool('search', { title: 'Search', annotations: { readOnlyHint: true } }),
    tool('write', {
      outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    }),
  ];

  it('uses server/discover, no handshake, and lists the registered tools', async () => {
    const server = await track(startModern(() => tools));
    const discovered = await discover({ url: server.url });
    expect(discovered.protocolVersion).toBe('2026-07-28');
    expect(discovered.serverInfo).toEqual({ name: 'fixture', version: '1.2.3' });
    expect(discovered.tools).toEqual(tools);
  });

  it('sends the bearer token, and says which setting to check when it is refused', async () => {
    const server = await track(startModern(() => tools, { token: 's3cret' }));
    await expect(discover({ url: server.url, token: 's3cret' })).resolves.toMatchObject({
      tools,
    });
    for (const token of [undefined, 'wrong']) {
      await expectFailure(
        { url: server.url, token },
        'MCPOP_DISCOVERY_UNAUTHORIZED',
        new RegExp(`^401 Unauthorized from ${server.url}: .*check spec.auth.secretRef`),
      );
    }
  });
});

describe('pagination and answer formats (scripted legacy server)', () => {
  it('follows nextCursor to the last page and reads SSE answers', async () => {
    const all = Array.from({ length: 25 }, (_, i) => tool(`t${i}`));
    const seen: string[] = [];
    const server = await track(
      startScripted({
        sse: true,
        seen: (method) => seen.push(method),
        page(cursor) {
          const start = Number(cursor ?? 0);
          const next = start + 10 < all.length ? String(start + 10) : undefined;
          return { tools: all.slice(start, start + 10), nextCursor: next };
        },
      }),
    );
    const discovered = await discover({ url: server.url });
    expect(discovered.tools.map((t) => t.name)).toEqual(all.map((t) => t.name));
    expect(seen).toEqual([
      'server/discover',
      'initialize',
      'notifications/initialized',
      'tools/list',
      'tools/list',
      'tools/list',
      'DELETE',
    ]);
  });

  it('treats nextCursor: null as the last page', async () => {
    const server = await track(
      startScripted({ page: () => ({ tools: [tool('a')], nextCursor: null }) }),
    );
    expect((await discover({ url: server.url })).tools).toHaveLength(1);
  });

  it('stops a cursor loop', async () => {
    const server = await track(hostile.cursorLoop());
    await expectFailure(
      { url: server.url },
      'MCPOP_DISCOVERY_ENDLESS_PAGES',
      /cursor "again" came back on page 2/,
    );
  });

  it('stops pagination that never ends', async () => {
    const server = await track(
      startScripted({
        page: (cursor) => ({ tools: [], nextCursor: `${Number(cursor ?? 0) + 1}` }),
      }),
    );
    await expectFailure(
      { url: server.url, maxPages: 20 },
      'MCPOP_DISCOVERY_ENDLESS_PAGES',
      /more than 20 pages/,
    );
  });

  it('stops at 10,000 tools without reading further pages', async () => {
    const server = await track(hostile.tenThousandTools());
    await expectFailure(
      { url: server.url },
      'MCPOP_DISCOVERY_TOO_MANY_TOOLS',
      /more than 1000 tools/,
    );
    expect(server.pages()).toBe(3);
  });

  it('records a tool that breaks the MCP schema, and fails only on an answer that is not a tools list', async () => {
    const broken = { name: 'broken', inputSchema: { properties: {} } };
    const server = await track(
      startScripted({ page: () => ({ tools: [tool('fine'), broken, 'not a tool'] }) }),
    );
    const found = await discover({ url: server.url });
    expect(found.tools).toEqual([tool('fine'), broken]);
    expect(found.findings).toEqual([{ item: '#2', problem: 'not a tool: no string name' }]);

    const notAList = await track(
      startScripted({ page: () => ({ tools: { broken } as unknown as unknown[] }) }),
    );
    await expectFailure(
      { url: notAList.url },
      'MCPOP_DISCOVERY_INVALID_RESULT',
      /invalid tools\/list result from .* at \/tools: Expected array/,
    );
  });

  it('does not ask for tools a server does not declare, and lists the prompts it does', async () => {
    const seen: string[] = [];
    const server = await track(
      startScripted({
        page: () => ({ tools: [tool('a')] }),
        seen: (method) => seen.push(method),
        override(message, res) {
          if (message.method !== 'initialize' && message.method !== 'prompts/list') return false;
          const result =
            message.method === 'prompts/list'
              ? { prompts: [{ name: 'greet', description: 'Say hello' }, { title: 'no name' }] }
              : {
                  protocolVersion: '2025-11-25',
                  capabilities: { prompts: {} },
                  serverInfo: { name: 'p', version: '1' },
                };
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
          return true;
        },
      }),
    );
    const found = await discover({ url: server.url });
    expect(found.tools).toEqual([]);
    expect(found.catalog).toEqual({ prompts: [{ name: 'greet', description: 'Say hello' }] });
    expect(found.catalogFindings).toEqual([{ item: 'prompt #1', problem: 'no string name' }]);
    expect(seen).not.toContain('tools/list');
    expect(seen).not.toContain('resources/list');
  });

  it('keeps two tools with one name, as listed', async () => {
    const twin = { ...tool('twin'), description: 'the second' };
    const server = await track(startScripted({ page: () => ({ tools: [tool('twin'), twin] }) }));
    expect((await discover({ url: server.url })).tools).toEqual([tool('twin'), twin]);
  });
});

describe('hostile and broken servers end as a clear error within the budget', () => {
  const budget = { timeoutMs: 1000 };

  it('500 on every request', async () => {
    const server = await track(hostile.failing());
    await expectFailure(
      { url: server.url },
      'MCPOP_DISCOVERY_HTTP_STATUS',
      /^HTTP 500 from .* for server\/discover \(text\/plain body of 16 bytes, not shown\): check that the URL is the MCP endpoint/,
    );
  });

  it('invalid JSON', async () => {
    const server = await track(hostile.invalidJson());
    await expectFailure({ url: server.url }, 'MCPOP_DISCOVERY_BAD_RESPONSE', /invalid JSON/);
  });

  it('invalid JSON in an SSE event', async () => {
    const server = await track(
      startHttp((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {"id": 1,\n\n');
      }),
    );
    await expectFailure(
      { url: server.url },
      'MCPOP_DISCOVERY_BAD_RESPONSE',
      /invalid JSON in an SSE event/,
    );
  });

  it('an answer that is neither JSON nor SSE', async () => {
    const server = await track(
      startHttp((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
      }),
    );
    await expectFailure(
      { url: server.url },
      'MCPOP_DISCOVERY_BAD_RESPONSE',
      /unexpected Content-Type 'text\/html'/,
    );
  });

  it('an SSE stream that ends without the response', async () => {
    const server = await track(
      startHttp((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end('id: 1\ndata:\n\n');
      }),
    );
    await expectFailure(
      { url: server.url },
      'MCPOP_DISCOVERY_BAD_RESPONSE',
      /SSE stream ended before the response/,
    );
  });

  it('a server that accepts the request and never answers', async () => {
    const server = await track(hostile.hanging());
    const ms = await expectFailure(
      { url: server.url, ...budget },
      'MCPOP_DISCOVERY_TIMEOUT',
      /did not answer server\/discover within the discovery budget of 1000 ms/,
    );
    expect(ms).toBeLessThan(budget.timeoutMs + 1000);
  });

  it('a never-ending SSE stream of keep-alives', async () => {
    const server = await track(hostile.endlessKeepAlives());
    const ms = await expectFailure(
      { url: server.url, ...budget },
      'MCPOP_DISCOVERY_TIMEOUT',
      /budget/,
    );
    expect(ms).toBeLessThan(budget.timeoutMs + 1000);
  });

  it('a never-ending SSE stream of data, stopped by the byte budget', async () => {
    const event = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(1000) } })}\n\n`;
    const server = await track(
      startHttp((_req, res) => flood(res, 'text/event-stream', () => event)),
    );
    await expectFailure(
      { url: server.url, maxBytes: 1024 * 1024 },
      'MCPOP_DISCOVERY_TOO_LARGE',
      /more than 1048576 bytes/,
    );
  });

  it('a 50 MB tool list is cut off at the byte budget, not buffered', async () => {
    const total = 50 * 1024 * 1024;
    const server = await track(hostile.hugeList(total));
    const ms = await expectFailure(
      { url: server.url },
      'MCPOP_DISCOVERY_TOO_LARGE',
      /sent more than 8388608 bytes/,
    );
    expect(ms).toBeLessThan(5000);
    expect(server.sent()).toBeLessThan(total / 2);
  });

  it('a connection dropped in the middle of an answer', async () => {
    const server = await track(
      startHttp((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"jsonrpc":"2.0"');
        setTimeout(() => res.destroy(), 20);
      }),
    );
    await expectFailure(
      { url: server.url },
      'MCPOP_DISCOVERY_BAD_RESPONSE',
      /connection lost while reading/,
    );
  });

  it('nothing listening', async () => {
    const server = await startHttp(() => undefined);
    await server.close();
    await expectFailure(
      { url: server.url },
      'MCPOP_DISCOVERY_UNREACHABLE',
      /ECONNREFUSED.*check that the server runs/,
    );
  });

  it('a redirect is not followed (it could carry the token elsewhere)', async () => {
    const server = await track(
      startHttp((_req, res) => {
        res.writeHead(307, { location: 'http://example.com/mcp' }).end();
      }),
    );
    await expectFailure(
      { url: server.url, token: 't' },
      'MCPOP_DISCOVERY_REDIRECT',
      /HTTP 307 .*redirected to http:\/\/example.com\/mcp/,
    );
  });

  it('cancellation by the caller', async () => {
    const server = await track(startHttp(() => undefined));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expectFailure(
      { url: server.url, signal: controller.signal },
      'MCPOP_DISCOVERY_CANCELLED',
      /cancelled/,
    );
  });

  it('error messages do not show the URL query (it may hold a secret)', async () => {
    const server = await track(startHttp((_req, res) => void res.writeHead(500).end()));
    const { error } = await failure({ url: `${server.url}?key=secret` });
    expect(error.message).toMatch(/^HTTP 500 from http:\/\/127.0.0.1:\d+\/mcp for/);
    expect(error.message).not.toMatch(/secret/);
  });

  it('refuses credentials in the URL without echoing them', async () => {
    const { error } = await failure({ url: 'http://user:pw@127.0.0.1:1/mcp' });
    expect(error.code).toBe('MCPOP_DISCOVERY_UNREACHABLE');
    expect(error.message).toMatch(/spec.auth.secretRef/);
    expect(error.message).not.toMatch(/user|pw/);
  });
});

describe('choosing between 2026-07-28 and the handshake', () => {
  function answeringProbe(status: number, body: object | undefined) {
    const seen: string[] = [];
    const server = startScripted({
      page: () => ({ tools: [tool('a')] }),
      seen: (method) => seen.push(method),
      override(message, res) {
        if (message.method !== 'server/discover') return false;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body && JSON.stringify(body));
        return true;
      },
    });
    return { seen, server };
  }

  it.each([
    ['an empty 400', 400, undefined],
    ['404 without a JSON-RPC error', 404, { message: 'Not Found' }],
    ['405', 405, undefined],
    [
      'a JSON-RPC method-not-found in a 200',
      200,
      { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } },
    ],
    [
      'an unsupported-version error that offers 2025-11-25',
      400,
      {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32022, message: 'Unsupported', data: { supported: ['2025-11-25'] } },
      },
    ],
  ])('falls back to initialize on %s', async (_name, status, body) => {
    const { seen, server } = answeringProbe(status, body);
    const running = await track(server);
    const discovered = await discover({ url: running.url });
    expect(discovered.protocolVersion).toBe('2025-11-25');
    expect(seen.slice(0, 3)).toEqual([
      'server/discover',
      'initialize',
      'notifications/initialized',
    ]);
  });

  it('does not fall back on a modern error, and reports it', async () => {
    const body = { jsonrpc: '2.0', id: 1, error: { code: -32020, message: 'Header mismatch' } };
    const { seen, server } = answeringProbe(400, body);
    const running = await track(server);
    await expectFailure(
      { url: running.url },
      'MCPOP_DISCOVERY_HTTP_STATUS',
      /HTTP 400 .* \(application\/json body of 76 bytes with JSON-RPC error -32020, not shown\)/,
    );
    expect(seen).toEqual(['server/discover']);
  });

  it('reports a server that speaks no revision discovery knows', async () => {
    const body = {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32022, message: 'Unsupported', data: { supported: ['2030-01-01'] } },
    };
    const { server } = answeringProbe(400, body);
    const running = await track(server);
    await expectFailure(
      { url: running.url },
      'MCPOP_DISCOVERY_UNSUPPORTED_VERSION',
      /server: 2030-01-01/,
    );
  });
});

/** Write chunks from `next` as fast as the client reads them, until it returns null or the client leaves. */
