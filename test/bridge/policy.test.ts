/**
 * The enforcement hook (driftPolicy: Enforce): the bridge hides tools that are not allowed or
 * not approved, and refuses to call them, checking against the child's current definitions.
 */

import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DISCOVERY_TOKEN_HEADER, UNFILTERED_LIST_META } from '../../src/mcp/metadata.ts';
import { decide } from '../../src/bridge/policy/gate.ts';
import { MAX_PAGES } from '../../src/bridge/policy/listing.ts';
import { parsePolicy, type BridgePolicy } from '../../src/tools/policy.ts';
import type { RunningBridge } from '../../src/bridge/server.ts';
import { discover } from '../../src/discovery/client.ts';
import { toolDigest, type Digest } from '../../src/tools/digest.ts';
import {
  connect,
  messagesOf,
  post,
  rawSession,
  SERVERS,
  startTestBridge,
  tempDir,
  textOf,
  toolCall,
} from './harness.ts';
import { waitFor } from '../support/wait.ts';

const D = (c: string): Digest => `sha256:${c.repeat(64)}`;

describe('policy file', () => {
  it('parses the format the controller writes', () => {
    const policy = parsePolicy(
      JSON.stringify({ approved: [{ name: 'echo', digest: D('a') }], allow: ['echo'] }),
    );
    expect(policy).toEqual({ approved: [{ name: 'echo', digest: D('a') }], allow: ['echo'] });
    expect(parsePolicy('{}')).toEqual({});
  });

  it('refuses a malformed policy, saying where', () => {
    const invalid = (text: string) => () => parsePolicy(text, '/etc/policy.json');
    expect(invalid('{')).toThrow(/policy file \/etc\/policy.json is invalid: not JSON/);
    expect(invalid('{"approved":[{"name":"echo","digest":"md5:abc"}]}')).toThrow(
      /\/approved\/0\/digest/,
    );
    expect(invalid('{"aproved":[]}')).toThrow(/is invalid/);
    expect(
      invalid(
        JSON.stringify({
          approved: [
            { name: 'x', digest: D('a') },
            { name: 'x', digest: D('b') },
          ],
        }),
      ),
    ).toThrow(/tool x is approved twice/);
  });

  it('decides by allowlist, then approval and digest', () => {
    const policy: BridgePolicy = {
      approved: [{ name: 'echo', digest: D('a') }],
      allow: ['echo', 'other'],
    };
    expect(decide(policy, 'echo', D('a'))).toBeUndefined();
    expect(decide(policy, 'echo', D('b'))?.reason).toBe('drifted');
    expect(decide(policy, 'other', D('c'))?.reason).toBe('not-approved');
    expect(decide(policy, 'third', D('c'))?.reason).toBe('not-allowed');
    expect(decide(policy, 'echo', undefined)?.reason).toBe('unknown-tool');
    // A list that could not be read names nothing; the allowlist still decides on its own.
    expect(decide(policy, 'echo', undefined, '-32603 down')?.reason).toBe('unverifiable');
    expect(decide(policy, 'third', undefined, '-32603 down')?.reason).toBe('not-allowed');
    expect(decide(undefined, 'echo', D('a'))?.reason).toBe('policy-unavailable');
    expect(decide({ allow: ['echo'] }, 'echo', D('f'))).toBeUndefined();
  });
});

/** Digests of the fixture's tools as they are now (read through a bridge without a policy). */
async function currentDigests(): Promise<Map<string, Digest>> {
  const bridge = await startTestBridge({ command: SERVERS.misbehaving() });
  const client = await connect(bridge.url);
  const { tools } = await client.listTools();
  await client.close();
  return new Map(tools.map((tool) => [tool.name, toolDigest(tool)]));
}

async function policyFile(policy: BridgePolicy): Promise<string> {
  const file = join(await tempDir('policy'), 'policy.json');
  await writeFile(file, JSON.stringify(policy));
  return file;
}

async function refusal(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McpError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

describe('enforcement in the bridge', () => {
  it('hides and refuses tools that are not approved or not allowed', async () => {
    const digests = await currentDigests();
    const approve = (...names: string[]) =>
      names.map((name) => ({ name, digest: digests.get(name)! }));
    const file = await policyFile({
      approved: approve('echo', 'stats', 'change-tools', 'hang'),
      allow: ['echo', 'stats', 'change-tools'],
    });
    const bridge = await startTestBridge({ command: SERVERS.misbehaving(), policyFile: file });
    const client = await connect(bridge.url);

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['change-tools', 'echo', 'stats']);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'approved' } }))).toBe(
      'approved',
    );

    const notApproved = await refusal(client.callTool({ name: 'crash', arguments: {} }));
    expect(notApproved.code).toBe(-32602);
    expect(notApproved.message).toMatch(
      /Tool "crash" is refused by the bridge policy: it is not in the allowlist/,
    );
    expect(notApproved.data).toEqual({ reason: 'not-allowed', tool: 'crash' });
    const hang = await refusal(client.callTool({ name: 'hang', arguments: {} }));
    expect(hang.data).toEqual({ reason: 'not-allowed', tool: 'hang' });
    // The refused calls never reached the child (or it would have crashed).
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'alive' } }))).toBe(
      'alive',
    );
    expect(await bridge.metrics.registry.metrics()).toMatch(
      /mcp_bridge_policy_denials_total\{reason="not-allowed"\} 2/,
    );
    await client.close();
  });

  it('refuses a tool whose description changed after approval, even for a client that never re-lists', async () => {
    const digests = await currentDigests();
    const approve = (...names: string[]) =>
      names.map((name) => ({ name, digest: digests.get(name)! }));
    const file = await policyFile({ approved: approve('echo', 'change-tools') });
    const bridge = await startTestBridge({ command: SERVERS.misbehaving(), policyFile: file });
    const client = await connect(bridge.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'before' } }))).toBe(
      'before',
    );

    await client.callTool({ name: 'change-tools', arguments: {} }); // the rug pull
    const drifted = await refusal(client.callTool({ name: 'echo', arguments: { text: 'after' } }));
    expect(drifted.data).toEqual({ reason: 'drifted', tool: 'echo' });
    expect(drifted.message).toMatch(
      /its definition changed since it was approved \(approved sha256:[0-9a-f]{64}, now sha256:[0-9a-f]{64}\)/,
    );
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['change-tools']);

    // A human approves the new definition: the mounted file changes and the bridge follows.
    const changed = (await startTestBridgeDigests(['change-tools'])).get('echo')!;
    await writeFile(
      file,
      JSON.stringify({ approved: [{ name: 'echo', digest: changed }, ...approve('change-tools')] }),
    );
    await waitFor(
      'the new approval to take effect',
      async () =>
        (await client
          .callTool({ name: 'echo', arguments: { text: 'again' } })
          .then(textOf, () => undefined)) === 'again' || undefined,
    );
    await client.close();
  });

  it('refuses every tool, and is not ready, while its policy file cannot be loaded', async () => {
    const bridge = await startTestBridge({
      command: SERVERS.misbehaving(),
      policyFile: join(tmpdir(), 'no-such-policy.json'),
    });
    const client = await connect(bridge.url);
    expect((await client.listTools()).tools).toEqual([]);
    const refused = await refusal(client.callTool({ name: 'echo', arguments: {} }));
    expect(refused.data).toEqual({ reason: 'policy-unavailable', tool: 'echo' });
    await bridge.probed; // the child answers: only the policy keeps the bridge from being ready
    const readyz = await fetch(bridge.url.replace('/mcp', '/readyz'));
    expect(readyz.status).toBe(503);
    expect(await readyz.text()).toMatch(/no policy loaded/);
    await client.close();
  });

  it('applies to 2026-07-28 clients too', async () => {
    const digests = await currentDigests();
    const file = await policyFile({ approved: [{ name: 'echo', digest: digests.get('echo')! }] });
    const bridge = await startTestBridge({ command: SERVERS.misbehaving(), policyFile: file });
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const response = await fetch(bridge.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: meta },
      }),
    });
    const body = (await response.json()) as { result: { tools: { name: string }[] } };
    expect(body.result.tools.map((tool) => tool.name)).toEqual(['echo']);
  });

  it('shows discovery every tool, so drift can name the hidden ones, and still refuses calls', async () => {
    const { bridge, all } = await enforcedWithToken();
    const found = await discover({ url: bridge.url, discoveryToken: TOKEN });
    expect(found.tools.map((tool) => tool.name).sort()).toEqual(all);
    const client = await connect(bridge.url);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    const refused = await refusal(client.callTool({ name: 'crash', arguments: {} }));
    expect(refused.data).toEqual({ reason: 'not-approved', tool: 'crash' });
    await client.close();
  });
});

/** One raw request in a session; its answer (JSON or SSE) as the messages it holds. */
async function ask(url: string, session: string, message: unknown) {
  return messagesOf(await post(url, message, { 'mcp-session-id': session }));
}

describe('the gate fails closed', () => {
  it('refuses a tools/call whose name is not a string, or that has no name', async () => {
    const file = await policyFile({ allow: ['echo'] });
    const bridge = await startTestBridge({ command: SERVERS.misbehaving(), policyFile: file });
    const session = await rawSession(bridge.url);
    const malformed: [string, Record<string, unknown> | undefined][] = [
      ['an array', { name: ['stats'], arguments: {} }],
      ['a number', { name: 7, arguments: {} }],
      ['null', { name: null }],
      ['an object', { name: { toString: 'stats' } }],
      ['missing', { arguments: {} }],
      ['no params at all', undefined],
    ];
    for (const [what, params] of malformed) {
      const request = { jsonrpc: '2.0', id: what, method: 'tools/call', ...(params && { params }) };
      expect(await ask(bridge.url, session, request), what).toEqual([
        {
          jsonrpc: '2.0',
          id: what,
          error: {
            code: -32602,
            message: 'Tool call refused by the bridge policy: params.name must be a string',
            data: { reason: 'invalid-call' },
          },
        },
      ]);
    }
    // None of them reached the child, which would have run `stats` for ["stats"].
    const [echo] = await ask(bridge.url, session, toolCall(9, 'echo', { text: 'alive' }));
    expect(echo).toMatchObject({ result: { content: [{ text: 'alive' }] } });
    expect(await bridge.metrics.registry.metrics()).toMatch(
      /mcp_bridge_policy_denials_total\{reason="invalid-call"\} 6/,
    );
  });

  it('refuses a tools/call sent as a notification, so a hidden tool cannot run that way', async () => {
    const file = await policyFile({ allow: ['echo'] });
    const bridge = await startTestBridge({
      // A careless server that runs a tools/call even without an id.
      command: SERVERS.misbehaving('--calls-without-id'),
      policyFile: file,
    });
    const session = await rawSession(bridge.url);
    const sneaked = await post(
      bridge.url,
      { jsonrpc: '2.0', method: 'tools/call', params: { name: 'crash', arguments: {} } },
      { 'mcp-session-id': session },
    );
    expect(sneaked.status).toBe(400);
    expect(await sneaked.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message:
          'Invalid Request: tools/call must be a request (with an id), so the bridge policy can screen it',
        data: { reason: 'invalid-call' },
      },
    });
    // `crash` would have ended the child, and the session with it.
    const [echo] = await ask(bridge.url, session, toolCall(1, 'echo', { text: 'alive' }));
    expect(echo).toMatchObject({ result: { content: [{ text: 'alive' }] } });
  });

  it('refuses calls, instead of trusting the last list, when the MCP server cannot list its tools', async () => {
    const digests = await currentDigests();
    const file = await policyFile({
      approved: ['echo', 'fail-tools-list'].map((name) => ({ name, digest: digests.get(name)! })),
    });
    const bridge = await startTestBridge({ command: SERVERS.misbehaving(), policyFile: file });
    const client = await connect(bridge.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'listed' } }))).toBe(
      'listed',
    );
    // The server announces a change and then cannot say what its tools are.
    await client.callTool({ name: 'fail-tools-list', arguments: {} });
    const refused = await refusal(client.callTool({ name: 'echo', arguments: { text: 'stale' } }));
    expect(refused.code).toBe(-32602);
    expect(refused.data).toEqual({ reason: 'unverifiable', tool: 'echo' });
    expect(refused.message).toMatch(
      /Tool "echo" is refused by the bridge policy: the MCP server's tool list could not be read \(-32603 the tool registry is unavailable\)/,
    );
    await client.close();
  });

  it('reads at most MAX_PAGES pages of a server whose tool list never ends, and still decides', async () => {
    const digests = await currentDigests();
    const file = await policyFile({
      approved: ['echo', 'stats'].map((name) => ({ name, digest: digests.get(name)! })),
    });
    const bridge = await startTestBridge({
      command: SERVERS.misbehaving('--endless-pages'),
      policyFile: file,
    });
    const client = await connect(bridge.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'paged' } }))).toBe(
      'paged',
    );
    const stats = JSON.parse(textOf(await client.callTool({ name: 'stats', arguments: {} }))) as {
      toolsLists: number;
    };
    expect(stats.toolsLists).toBe(MAX_PAGES);
    await client.close();
  });

  it('survives a tool list with malformed entries, and never shows or calls them', async () => {
    const file = await policyFile({ allow: ['echo', 'break-tools-list', '7'] });
    const bridge = await startTestBridge({ command: SERVERS.misbehaving(), policyFile: file });
    const client = await connect(bridge.url);
    await client.callTool({ name: 'break-tools-list', arguments: {} });
    // The bridge lists the tools itself to check this call: null, 42 and {name: 7} are in it.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'checked' } }))).toBe(
      'checked',
    );
    const session = (client.transport as unknown as { sessionId: string }).sessionId;
    const [listed] = await ask(bridge.url, session, {
      jsonrpc: '2.0',
      id: 'l',
      method: 'tools/list',
    });
    expect(
      (listed as { result: { tools: { name: unknown }[] } }).result.tools.map((tool) => tool.name),
    ).toEqual(['echo', 'break-tools-list']);
    const numeric = await refusal(client.callTool({ name: '7', arguments: {} }));
    expect(numeric.data).toEqual({ reason: 'unknown-tool', tool: '7' });
    await client.close();
  });
});

/** The operator's discovery token, as the controller makes it. */
const TOKEN = randomBytes(32).toString('base64url');

/** A bridge enforcing "echo only", with the discovery token in its file (as the kubelet writes it). */
async function enforcedWithToken(): Promise<{ bridge: RunningBridge; all: string[] }> {
  const digests = await currentDigests();
  const file = await policyFile({ approved: [{ name: 'echo', digest: digests.get('echo')! }] });
  const tokenFile = join(await tempDir('discovery-token'), 'token');
  await writeFile(tokenFile, TOKEN);
  const bridge = await startTestBridge({
    command: SERVERS.misbehaving(),
    policyFile: file,
    discoveryTokenFile: tokenFile,
  });
  return { bridge, all: [...digests.keys()].sort() };
}

/** What a client that sets the unfiltered `_meta` key is listed and answered for a hidden tool. */
async function askUnfiltered(url: string, headers?: Record<string, string>) {
  const client = await connect(url, { headers });
  const { tools } = await client.listTools({ _meta: { [UNFILTERED_LIST_META]: true } });
  const refused = await refusal(client.callTool({ name: 'crash', arguments: {} }));
  await client.close();
  return { listed: tools.map((tool) => tool.name).sort(), refused: refused.data };
}

describe('the unfiltered list is for discovery alone (the discovery token)', () => {
  const hidden = { listed: ['echo'], refused: { reason: 'not-approved', tool: 'crash' } };

  it('ignores the unfiltered key from a client without the token', async () => {
    const { bridge } = await enforcedWithToken();
    expect(await askUnfiltered(bridge.url)).toEqual(hidden);
    expect(
      (await discover({ url: bridge.url })).tools.map((tool) => tool.name),
      'discovery without its token sees what agents see',
    ).toEqual(['echo']);
  });

  it('ignores it with a wrong token, and answers as if none was sent', async () => {
    const { bridge } = await enforcedWithToken();
    const wrong = randomBytes(32).toString('base64url');
    expect(await askUnfiltered(bridge.url, { [DISCOVERY_TOKEN_HEADER]: wrong })).toEqual(hidden);
    expect(await askUnfiltered(bridge.url, { [DISCOVERY_TOKEN_HEADER]: `${TOKEN}x` })).toEqual(
      hidden,
    );
  });

  it('lists every tool with the right token, and still refuses the hidden ones', async () => {
    const { bridge, all } = await enforcedWithToken();
    expect(await askUnfiltered(bridge.url, { [DISCOVERY_TOKEN_HEADER]: TOKEN })).toEqual({
      listed: all,
      refused: { reason: 'not-approved', tool: 'crash' },
    });
  });

  it('takes the discovery token alongside the bearer token clients need', async () => {
    const digests = await currentDigests();
    const file = await policyFile({ approved: [{ name: 'echo', digest: digests.get('echo')! }] });
    const tokenFile = join(await tempDir('discovery-token'), 'token');
    await writeFile(tokenFile, `${TOKEN}\n`);
    const bridge = await startTestBridge({
      command: SERVERS.misbehaving(),
      policyFile: file,
      discoveryTokenFile: tokenFile,
      authToken: 'clients-token',
    });
    const found = await discover({
      url: bridge.url,
      token: 'clients-token',
      discoveryToken: TOKEN,
    });
    expect(found.tools.map((tool) => tool.name).sort()).toEqual([...digests.keys()].sort());
  });

  it('lists nobody every tool when it has no token file', async () => {
    const digests = await currentDigests();
    const file = await policyFile({ approved: [{ name: 'echo', digest: digests.get('echo')! }] });
    const bridge = await startTestBridge({ command: SERVERS.misbehaving(), policyFile: file });
    expect(await askUnfiltered(bridge.url, { [DISCOVERY_TOKEN_HEADER]: TOKEN })).toEqual(hidden);
  });
});

/** Digests after the given fixture tools have been called (to learn a changed definition). */
async function startTestBridgeDigests(calls: string[]): Promise<Map<string, Digest>> {
  const bridge = await startTestBridge({ command: SERVERS.misbehaving() });
  const client = await connect(bridge.url);
  for (const name of calls) await client.callTool({ name, arguments: {} });
  const { tools } = await client.listTools();
  await client.close();
  return new Map(tools.map((tool) => [tool.name, toolDigest(tool)]));
}
