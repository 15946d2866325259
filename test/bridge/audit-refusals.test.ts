/**
 * Audit events of a real bridge for who called and for every refusal: OAuth callers with their
 * sub, client_id and granted scopes (tokens from a real authorization server,
 * test/oauth/authorization-server.ts), each OAuth refusal, the byte budgets of both protocol
 * eras; each event valid against docs/audit.schema.json and free of the tokens used.
 */

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/bridge/audit/event.ts';
import type { RunningBridge } from '../../src/bridge/server.ts';
import { AuthorizationServer, type TestClient } from '../oauth/authorization-server.ts';
import { freePort } from '../support/ports.ts';
import { waitFor } from '../support/wait.ts';
import { waitForEvents } from './audit-events.ts';
import {
  INITIALIZE,
  MODERN_VERSION,
  post,
  rawSession,
  SERVERS,
  startTestBridge,
  tempDir,
  toolCall,
} from './harness.ts';

const REQUIRED = 'mcp:tools';
const CLIENTS = {
  writer: { id: 'writer', secret: 'writer-secret', scopes: [REQUIRED, 'memory:write'] },
  reader: { id: 'reader', secret: 'reader-secret', scopes: [REQUIRED] },
  partial: { id: 'partial', secret: 'partial-secret', scopes: ['memory:write'] },
} satisfies Record<string, TestClient>;

let port = 0;
const resource = () => `http://127.0.0.1:${port}/mcp`;
let as: AuthorizationServer;

beforeAll(async () => {
  port = await freePort();
  as = await AuthorizationServer.start({
    host: '127.0.0.1',
    clients: Object.values(CLIENTS),
    resources: [{ uri: `http://127.0.0.1:${port}/mcp`, scopes: [REQUIRED, 'memory:write'] }],
  });
});

afterAll(async () => {
  await as?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function auditFile(): Promise<string> {
  return join(await tempDir('audit-refusals'), 'audit.jsonl');
}

const audit = (file: string) => ({ arguments: 'None' as const, destination: file });

describe('audit events of OAuth callers', () => {
  it('name the sub, client_id and granted scopes of an allowed call, and each refusal with its reason', async () => {
    const file = await auditFile();
    const policyFile = join(await tempDir('audit-oauth-policy'), 'policy.json');
    await writeFile(
      policyFile,
      JSON.stringify({ toolScopes: { create_entities: ['memory:write'] } }),
    );
    await startTestBridge({
      port,
      command: SERVERS.memory,
      policyFile,
      audit: audit(file),
      oauth: {
        issuer: as.issuer,
        resource: resource(),
        scopes: [REQUIRED],
        clockSkewSeconds: 0,
        jwksCooldownMs: 200,
        timeoutMs: 1_000,
      },
    });
    const url = resource();
    const writer = await as.token(CLIENTS.writer, url, CLIENTS.writer.scopes);
    const reader = await as.token(CLIENTS.reader, url, CLIENTS.reader.scopes);
    const partial = await as.token(CLIENTS.partial, url, CLIENTS.partial.scopes);
    const forged = `${reader.slice(0, -8)}AAAAAAAA`;

    const session = await rawSession(url, bearer(writer));
    const call = toolCall(2, 'read_graph', {});
    const allowed = await post(url, call, { ...bearer(writer), 'mcp-session-id': session });
    expect(allowed.status).toBe(200);
    await allowed.text();
    const statuses = [
      await post(url, INITIALIZE),
      await post(url, INITIALIZE, bearer(forged)),
      await post(url, INITIALIZE, { authorization: 'Basic d3JpdGVyOnNlY3JldA==' }),
      await post(url, INITIALIZE, bearer(partial)),
      await post(url, toolCall(3, 'create_entities', { entities: [] }), bearer(reader)),
    ].map((response) => response.status);
    expect(statuses).toEqual([401, 401, 400, 403, 403]);

    const events = await waitForEvents(file, 6);
    const granted = expect.arrayContaining([REQUIRED, 'memory:write']) as unknown;
    expect(events.find((e) => e.method === 'tools/call' && e.decision === 'allowed')).toMatchObject(
      {
        caller: { kind: 'oauth', clientId: 'writer', scopes: granted },
        target: 'read_graph',
        outcome: 'ok',
        httpStatus: null,
      },
    );
    const refusals = events.filter((e) => e.decision === 'denied');
    const nobody = { kind: 'oauth', sub: null, clientId: null, scopes: [] };
    expect(refusals.map((e) => [e.httpStatus, e.reason, e.caller])).toEqual([
      [401, 'no_token', nobody],
      [401, 'invalid_token', nobody],
      [400, 'invalid_request', nobody],
      [403, 'insufficient_scope', expect.objectContaining({ clientId: 'partial' })],
      [403, 'insufficient_scope', expect.objectContaining({ clientId: 'reader' })],
    ]);
    expect(refusals.at(-1)).toMatchObject({
      method: 'tools/call',
      target: 'create_entities',
      outcome: 'refused',
    });
    // A token that proves whom it speaks for has a subject: the sub, else the client_id.
    const allowedCaller = events[0]!.caller as Extract<AuditEvent['caller'], { kind: 'oauth' }>;
    expect(allowedCaller.sub ?? allowedCaller.clientId).toBeTruthy();

    const text = await readFile(file, 'utf8');
    for (const token of [writer, reader, partial, forged, 'd3JpdGVyOnNlY3JldA=='])
      expect(text).not.toContain(token.split('.')[1] ?? token);
    expect(text).not.toContain(session);
  });
});

/** A POST body of exactly `bytes` bytes: a call of the fixture's `hang` tool, padded. */
function hangCall(id: number, bytes: number): string {
  const body = (pad: string) => JSON.stringify(toolCall(id, 'hang', { pad }));
  return body('p'.repeat(bytes - body('').length));
}

/** Posts without waiting for the answer, which a hanging tool never gives. */
function postUnanswered(url: string, body: string, session: string): void {
  post(url, body, { 'mcp-session-id': session }).catch(() => undefined);
}

async function holding(bridge: RunningBridge, bytes: number): Promise<void> {
  await waitFor(`${bytes} bytes held`, () => bridge.bridge.budget.held >= bytes);
}

describe('audit events of byte budget refusals', () => {
  it('record 429 for a session, 503 for the bridge, in both protocol eras', async () => {
    const file = await auditFile();
    // Budgets of 4 KiB a session and 16 KiB the bridge (server.ts: 4 and 16 messages).
    const bridge = await startTestBridge({
      command: SERVERS.misbehaving(),
      maxMessageBytes: 1024,
      requestTimeoutMs: 60_000,
      audit: audit(file),
    });
    const sessions = [];
    for (let i = 0; i < 5; i++) sessions.push(await rawSession(bridge.url));
    // Four sessions each hold four calls of 1000 bytes: 16000 of the bridge's 16384.
    for (const [n, session] of sessions.slice(0, 4).entries()) {
      for (let i = 0; i < 4; i++) postUnanswered(bridge.url, hangCall(10 * n + i, 1000), session);
      await holding(bridge, 4000 * (n + 1));
    }
    const overSession = await post(bridge.url, hangCall(90, 1000), {
      'mcp-session-id': sessions[0]!,
      'mcp-protocol-version': '2025-11-25',
    });
    expect(overSession.status).toBe(429);
    const overBridge = await post(bridge.url, hangCall(91, 1000), {
      'mcp-session-id': sessions[4]!,
      'mcp-protocol-version': '2025-11-25',
    });
    expect(overBridge.status).toBe(503);
    // A 2026-07-28 listen whose body fits (16000 + 300) but which, held for as long as it is
    // open beside that body, does not (16000 + 2 × 300): refused where it is admitted.
    const overListen = await post(bridge.url, listenBody(300), {
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'subscriptions/listen',
    });
    expect(overListen.status).toBe(503);

    const events = await waitForEvents(file, 3);
    expect(events.map((e) => [e.httpStatus, e.reason, e.protocolVersion, e.decision])).toEqual([
      [429, 'session_bytes', '2025-11-25', 'denied'],
      [503, 'bridge_bytes', '2025-11-25', 'denied'],
      [503, 'bridge_bytes', MODERN_VERSION, 'denied'],
    ]);
    expect(events[2]).toMatchObject({ method: 'subscriptions/listen', outcome: 'refused' });
  });
});

/** A 2026-07-28 subscriptions/listen of exactly `bytes` bytes. */
function listenBody(bytes: number): string {
  const body = (pad: string) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: {
        notifications: { toolsListChanged: true },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
          'io.modelcontextprotocol/clientCapabilities': {},
          pad,
        },
      },
    });
  return body('p'.repeat(bytes - body('').length));
}
