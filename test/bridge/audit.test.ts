/**
 * The audit trail of a real bridge in front of real servers: one event per gated request in
 * both protocol eras and per refusal, each valid against docs/audit.schema.json, with the
 * digests the policy judged by, arguments digested and redacted, text bounded and escaped, no
 * secret in any line, and a stalled reader costing dropped events (counted), never calls.
 */

import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { constants, openSync, closeSync, readSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import type { AuditOptions } from '../../src/bridge/server.ts';
import { toolDigest, type Digest } from '../../src/tools/digest.ts';
import type { BridgePolicy } from '../../src/tools/policy.ts';
import { waitForEvents } from './audit-events.ts';
import {
  connect,
  INITIALIZE,
  post,
  rawSession,
  SERVERS,
  startTestBridge,
  tempDir,
  textOf,
  toolCall,
} from './harness.ts';

async function auditedBridge(
  audit: Partial<AuditOptions>,
  more: Parameters<typeof startTestBridge>[0] = {},
) {
  const file = join(await tempDir('audit'), 'audit.jsonl');
  const bridge = await startTestBridge({
    command: SERVERS.misbehaving(),
    audit: {
      arguments: 'None',
      destination: file,
      server: { namespace: 'team-a', name: 'fixture' },
      ...audit,
    },
    ...more,
  });
  return { bridge, file };
}

async function policyFile(policy: BridgePolicy): Promise<string> {
  const file = join(await tempDir('audit-policy'), 'policy.json');
  await writeFile(file, JSON.stringify(policy));
  return file;
}

/** Digests of the fixture's tools as it lists them. */
async function fixtureDigests(): Promise<Map<string, Digest>> {
  const bridge = await startTestBridge({ command: SERVERS.misbehaving() });
  const client = await connect(bridge.url);
  const { tools } = await client.listTools();
  await client.close();
  return new Map(tools.map((tool) => [tool.name, toolDigest(tool)]));
}

const sha256 = (value: unknown) =>
  `sha256:${createHash('sha256').update(canonicalize(value)!).digest('hex')}`;

describe('audit events', () => {
  it('records allowed and denied calls under Enforce with the digests judged, and the refusals at the front', async () => {
    const digests = await fixtureDigests();
    const echo = digests.get('echo')!;
    const policy = await policyFile({ approved: [{ name: 'echo', digest: echo }] });
    const { bridge, file } = await auditedBridge(
      { arguments: 'Redacted' },
      { policyFile: policy, allowedOrigins: ['https://app.example'] },
    );
    const client = await connect(bridge.url);
    const args = { text: 'hello', apiToken: 'tok-3f9a-secret', nested: { password: 'pw-77' } };
    expect(textOf(await client.callTool({ name: 'echo', arguments: args }))).toBe('hello');
    await expect(client.callTool({ name: 'crash', arguments: {} })).rejects.toThrow(/not approved/);

    // Hostile text in a tool name: control characters, a bidi override, far too long.
    const session = await rawSession(bridge.url);
    const hostile = `\u001b[2J\u202eevil${'x'.repeat(5000)}`;
    await post(bridge.url, toolCall(7, hostile), { 'mcp-session-id': session });
    // A number canonical JSON cannot hold: no digest, and the bridge goes on.
    await post(
      bridge.url,
      '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"big","n":1e400}}}',
      {
        'mcp-session-id': session,
      },
    );
    const unknown = await post(bridge.url, toolCall(9, 'echo'), {
      'mcp-session-id': 'no-such-session',
    });
    expect(unknown.status).toBe(404);
    const foreign = await post(bridge.url, INITIALIZE, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    await client.close();

    const events = await waitForEvents(file, 6);
    const calls = events.filter((e) => e.method === 'tools/call' && e.httpStatus === null);
    const [allowed, denied, escaped, unbounded] = calls;
    expect(allowed).toMatchObject({
      mcpAudit: 'v1',
      server: { namespace: 'team-a', name: 'fixture' },
      protocolVersion: '2025-11-25',
      caller: { kind: 'anonymous' },
      source: '127.0.0.1',
      target: 'echo',
      digest: { current: echo, approved: echo, match: true },
      decision: 'allowed',
      reason: null,
      outcome: 'ok',
      errorCode: null,
      argumentsDigest: sha256(args),
      arguments: { text: 'hello', apiToken: '[redacted]', nested: { password: '[redacted]' } },
    });
    expect(allowed!.session).toMatch(/^[0-9a-f]{32}$/);
    expect(allowed!.durationMs).toBeGreaterThan(0);
    expect(allowed!.requestBytes).toBeGreaterThan(0);
    expect(allowed!.responseBytes).toBeGreaterThan(0);
    expect(denied).toMatchObject({
      target: 'crash',
      digest: { current: digests.get('crash'), approved: null, match: null },
      decision: 'denied',
      reason: 'not-approved',
      outcome: 'refused',
      errorCode: -32602,
    });
    expect(escaped!.target!.length).toBeLessThanOrEqual(512);
    expect(escaped!.target!.startsWith('\u001b[2J\u202eevilxxx')).toBe(true);
    expect(escaped!.target).toMatch(/x… \(\d+ more characters\)$/);
    expect(unbounded).toMatchObject({ target: 'echo', argumentsDigest: null, decision: 'allowed' });
    expect(events.find((e) => e.httpStatus === 404)).toMatchObject({
      reason: 'unknown_session',
      method: 'tools/call',
      target: 'echo',
      decision: 'denied',
      outcome: 'refused',
    });
    expect(events.find((e) => e.httpStatus === 403)).toMatchObject({
      reason: 'foreign_origin',
      method: null,
      caller: { kind: 'anonymous' },
    });

    const text = await readFile(file, 'utf8');
    // Every line is one event, and nothing a terminal acts on is in it raw.
    expect(text.split('\n').filter(Boolean)).toHaveLength(events.length);
    expect(text.includes('\u001b') || text.includes('\u202e')).toBe(false);
    expect(text).toContain('\\u001b[2J\\u202eevil');
    for (const secret of ['tok-3f9a-secret', 'pw-77', session]) expect(text).not.toContain(secret);
  });

  it('records calls of 2026-07-28 clients, with no session, and the static-token caller', async () => {
    const { bridge, file } = await auditedBridge(
      { arguments: 'Full' },
      { authToken: 'static-secret-1' },
    );
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const response = await post(
      bridge.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'now' }, _meta: meta },
      },
      {
        authorization: 'Bearer static-secret-1',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'echo',
      },
    );
    expect(response.status).toBe(200);
    const refused = await post(bridge.url, INITIALIZE, { authorization: 'Bearer wrong' });
    expect(refused.status).toBe(401);

    const events = await waitForEvents(file, 2);
    expect(events.find((e) => e.method === 'tools/call')).toMatchObject({
      protocolVersion: '2026-07-28',
      session: null,
      caller: { kind: 'token' },
      target: 'echo',
      digest: { current: null, approved: null, match: null },
      decision: 'allowed',
      outcome: 'ok',
      arguments: { text: 'now' },
    });
    expect(events.find((e) => e.httpStatus === 401)).toMatchObject({
      reason: 'unauthorized',
      decision: 'denied',
      caller: { kind: 'token' },
    });
    const text = await readFile(file, 'utf8');
    for (const secret of ['static-secret-1', 'wrong']) expect(text).not.toContain(secret);
  });

  it('records a session refused at --max-sessions, and leaves out arguments that would make an event too long', async () => {
    const { bridge, file } = await auditedBridge({ arguments: 'Full' }, { maxSessions: 1 });
    const client = await connect(bridge.url);
    const long = 'y'.repeat(10_000);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: long } }))).toBe(long);
    const second = await post(bridge.url, INITIALIZE);
    expect(second.status).toBe(503);
    await client.close();

    const events = await waitForEvents(file, 2);
    expect(events.find((e) => e.method === 'tools/call')).toMatchObject({
      argumentsDigest: sha256({ text: long }),
      argumentsOmitted: 'size',
    });
    expect(events.find((e) => e.method === 'tools/call')).not.toHaveProperty('arguments');
    expect(events.find((e) => e.httpStatus === 503)).toMatchObject({
      method: 'initialize',
      reason: 'max_sessions',
    });
    for (const line of (await readFile(file, 'utf8')).split('\n'))
      expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(4096);
  });

  it('drops and counts events when nobody reads them, and calls keep flowing', async () => {
    const dir = await tempDir('audit-fifo');
    const fifo = join(dir, 'audit.fifo');
    execFileSync('mkfifo', [fifo]);
    // A reader that never reads: the pipe fills, then the queue, then events are dropped.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const { bridge } = await auditedBridge({
        arguments: 'Full',
        destination: fifo,
        bufferBytes: 16 * 1024,
      });
      const client = await connect(bridge.url);
      const text = 'z'.repeat(3000);
      for (let i = 0; i < 60; i++) {
        expect(textOf(await client.callTool({ name: 'echo', arguments: { text } }))).toBe(text);
      }
      await client.close();
      const metrics = await bridge.metrics.registry.metrics();
      const dropped = Number(/^mcp_bridge_audit_events_dropped_total (\d+)$/m.exec(metrics)?.[1]);
      // 64 KiB of pipe and 16 KiB of queue hold about 25 events of 3 KiB; the rest are dropped.
      expect(dropped).toBeGreaterThan(20);
      // Drain the pipe so the bridge can close.
      const buffer = Buffer.alloc(1 << 16);
      const drain = setInterval(() => {
        try {
          while (readSync(reader, buffer) > 0);
        } catch {
          // EAGAIN: nothing more to read for now
        }
      }, 10);
      await bridge.close();
      clearInterval(drain);
    } finally {
      closeSync(reader);
    }
  });
});
