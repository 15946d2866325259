/**
 * A stdio server scaled out to three replicas: three `mcp-operator bridge` processes on
 * loopback that know each other (--peers), each in front of its own server-everything, behind
 * a front that sends every HTTP request to the next bridge in turn, as a Service without
 * affinity does. The official SDK client, unchanged, keeps one session through 50 tool calls:
 * the bridge that did not create the session forwards the request to the one that did. A
 * session id naming a replica outside the peer set gets 404 and sends nothing anywhere.
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { replicaTag } from '../../src/bridge/front/replicas.ts';
import { CLI } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';
import { waitFor } from '../support/wait.ts';
import { INITIALIZE, NODE, SERVERS, post, textOf, toolCall } from './harness.ts';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

interface Replica {
  base: string;
  url: string;
  stop(): Promise<void>;
}

/** One bridge process in front of `server`, ready once /readyz says so. */
async function startReplica(port: number, peers: string, server: string[]): Promise<Replica> {
  const address = `127.0.0.1:${port}`;
  const flags = ['--listen', address, '--replica-address', address, '--peers', peers];
  const child = spawn(NODE, [CLI, 'bridge', ...flags, '--', ...server], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  stops.push(stop);
  const base = `http://${address}`;
  await waitFor(
    `the bridge on ${address} to be ready`,
    async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200 || undefined,
    { timeoutMs: 60_000 },
  );
  return { base, url: `${base}/mcp`, stop };
}

async function startReplicas(count: number, server = SERVERS.everything): Promise<Replica[]> {
  const ports = await Promise.all(Array.from({ length: count }, freePort));
  const peers = ports.map((port) => `127.0.0.1:${port}`).join(',');
  return Promise.all(ports.map((port) => startReplica(port, peers, server)));
}

/**
 * A 2026-07-28 `tools/call` of the fixture's `elicit` tool: no session, version and
 * capabilities in `_meta`, method and name mirrored in headers.
 */
async function modernElicit(url: string, id: number, extra: Record<string, unknown> = {}) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'scale-out', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  };
  const params = { name: 'elicit', arguments: {}, ...extra, _meta: meta };
  const response = await post(
    url,
    { jsonrpc: '2.0', id, method: 'tools/call', params },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'elicit' },
  );
  return {
    status: response.status,
    body: (await response.json()) as { result?: Record<string, unknown>; error?: unknown },
  };
}

async function sessionsOn(replica: Replica): Promise<number> {
  const text = await (await fetch(`${replica.base}/metrics`)).text();
  return Number(/^mcp_bridge_sessions (\d+)$/m.exec(text)?.[1]);
}

/** fetch that sends each request to the next replica, counting what each one got. */
function roundRobin(replicas: Replica[]) {
  const hits = replicas.map(() => 0);
  let next = 0;
  const fetchNext = (input: string | URL | Request, init?: RequestInit) => {
    const i = next++ % replicas.length;
    hits[i]! += 1;
    const url = new URL(input instanceof Request ? input.url : input);
    return fetch(`${replicas[i]!.base}${url.pathname}${url.search}`, init);
  };
  return { fetch: fetchNext, hits };
}

describe('three replicas of a stdio server', { timeout: 180_000 }, () => {
  it('serve one SDK session through 50 calls, whichever replica each request reaches', async () => {
    const replicas = await startReplicas(3);
    const front = roundRobin(replicas);
    const client = new Client({ name: 'scale-out', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(replicas[0]!.url), {
      fetch: front.fetch,
    });
    await client.connect(transport);
    for (let i = 0; i < 50; i++) {
      const result = await client.callTool({ name: 'echo', arguments: { message: `call ${i}` } });
      expect(textOf(result)).toBe(`Echo: call ${i}`);
    }
    expect(front.hits.every((hits) => hits >= 15)).toBe(true);
    const sessions = await Promise.all(replicas.map(sessionsOn));
    expect(sessions.sort()).toEqual([0, 0, 1]);
    await transport.terminateSession();
    await client.close();
    await waitFor('the session to end', async () => {
      const left = await Promise.all(replicas.map(sessionsOn));
      return left.every((n) => n === 0) || undefined;
    });
  });

  it('answers 404 for a session id that names no peer, and connects nowhere', async () => {
    let canaryRequests = 0;
    const canary = createServer((_req, res) => {
      canaryRequests++;
      res.end();
    });
    canary.listen(0, '127.0.0.1');
    await once(canary, 'listening');
    stops.push(async () => {
      canary.close();
      await once(canary, 'close');
    });
    const canaryAddress = `127.0.0.1:${(canary.address() as AddressInfo).port}`;
    const [replica] = await startReplicas(2);
    const crafted = [
      `${replicaTag(canaryAddress)}.00000000-0000-4000-8000-000000000000`,
      `${replicaTag('169.254.169.254:80')}.x`,
      'not-a-tag.x',
      '../../admin',
    ];
    for (const id of crafted) {
      const response = await post(replica!.url, toolCall(1, 'echo', { message: 'x' }), {
        'mcp-session-id': id,
      });
      expect(response.status, id).toBe(404);
      expect(await response.json()).toMatchObject({ error: { message: /Session not found/ } });
    }
    expect(canaryRequests).toBe(0);
  });

  it('routes the retry of a 2026-07-28 call parked for input to the replica that holds it', async () => {
    const [first, second] = await startReplicas(2, SERVERS.misbehaving());
    const asked = await modernElicit(first!.url, 1);
    const { requestState, inputRequests } = asked.body.result as {
      requestState: string;
      inputRequests: Record<string, unknown>;
    };
    const [key] = Object.keys(inputRequests);
    const answer = { [key!]: { action: 'accept', content: { name: 'Ada' } } };
    const retry = await modernElicit(second!.url, 2, { requestState, inputResponses: answer });
    expect(retry.status).toBe(200);
    expect(retry.body.result).toMatchObject({ resultType: 'complete' });
    expect(JSON.parse(textOf(retry.body.result))).toEqual({
      action: 'accept',
      content: { name: 'Ada' },
    });
  });

  it('answers 404 when the replica that held a session is gone, so the client starts again', async () => {
    const [first, second] = await startReplicas(2);
    const init = await post(first!.url, INITIALIZE);
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    const forwarded = await post(
      second!.url,
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      {
        'mcp-session-id': session,
      },
    );
    expect(forwarded.status).toBe(200);
    await forwarded.text();
    await first!.stop();
    const orphan = await post(
      second!.url,
      { jsonrpc: '2.0', id: 3, method: 'ping' },
      {
        'mcp-session-id': session,
      },
    );
    expect(orphan.status).toBe(404);
  });
});
