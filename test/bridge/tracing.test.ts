/**
 * Traces and OTLP audit log records of a real bridge in front of a real server, read back from
 * a real Jaeger v2 (test/support/jaeger.ts): the bridge's span joins the client's trace (from
 * the `traceparent` header or from `params._meta`), carries the MCP semantic-convention
 * attributes and the gate's decision, and passes its own context on in the `_meta` the server
 * gets; a malformed traceparent starts a new trace; audit events arrive as log records; no
 * token reaches the backend.
 */

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BridgeOptions } from '../../src/bridge/server.ts';
import { toolDigest } from '../../src/tools/digest.ts';
import { Jaeger, type StoredSpan } from '../support/jaeger.ts';
import { waitFor } from '../support/wait.ts';
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

let jaeger: Jaeger;
beforeAll(async () => {
  jaeger = await Jaeger.start();
}, 1_800_000);
afterAll(async () => {
  await jaeger?.stop();
}, 60_000);

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A W3C traceparent of a new trace, sampled. */
function traceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = hex(16);
  const spanId = hex(8);
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

async function tracedBridge(more: Partial<BridgeOptions> = {}) {
  return startTestBridge({
    command: SERVERS.misbehaving(),
    telemetry: {
      endpoint: jaeger.otlpUrl,
      samplingRatio: 1,
      server: { namespace: 'team-a', name: 'fixture' },
    },
    ...more,
  });
}

/** Calls `name` in `session`; the text of its result, or the error. */
async function call(
  url: string,
  session: string,
  id: number,
  name: string,
  options: { headers?: Record<string, string>; meta?: Record<string, unknown> } = {},
): Promise<Record<string, unknown>> {
  const response = await post(url, toolCall(id, name, {}, options.meta), {
    'mcp-session-id': session,
    'mcp-protocol-version': '2025-11-25',
    ...options.headers,
  });
  const [answer] = await messagesOf(response);
  return answer!;
}

const bridgeSpan = (spans: StoredSpan[]) => spans.find((span) => span.service === 'fixture')!;

describe('traces', () => {
  it('joins the trace of the traceparent header and passes its own span on in _meta', async () => {
    const bridge = await tracedBridge();
    const session = await rawSession(bridge.url);
    const parent = traceparent();
    const answer = await call(bridge.url, session, 5, 'meta', {
      headers: { traceparent: parent.header, tracestate: 'vendor=opaque' },
    });
    const seen = JSON.parse(textOf(answer.result)) as Record<string, string>;

    const [span] = await jaeger.trace(parent.traceId, 1);
    expect(span).toMatchObject({
      service: 'fixture',
      traceId: parent.traceId,
      parentSpanId: parent.spanId,
      name: 'tools/call meta',
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'meta',
        'jsonrpc.request.id': '5',
        'mcp.protocol.version': '2025-11-25',
        'mcp_operator.decision': 'allowed',
        'mcp_operator.outcome': 'ok',
        'client.address': '127.0.0.1',
      },
    });
    expect(['SPAN_KIND_SERVER', 2]).toContain(span!.kind);
    // The session id as the audit trail names it: opaque, never the id itself.
    expect(span!.attributes['mcp.session.id']).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(span)).not.toContain(session);
    // The server got the bridge's span as its parent, in the same trace, with the client's state.
    expect(seen.traceparent).toBe(`00-${parent.traceId}-${span!.spanId}-01`);
    expect(seen.tracestate).toBe('vendor=opaque');
  });

  it("takes the trace context of params._meta over the header's, and ignores a malformed one", async () => {
    const bridge = await tracedBridge();
    const session = await rawSession(bridge.url);
    const fromMeta = traceparent();
    const fromHeader = traceparent();
    const answer = await call(bridge.url, session, 6, 'meta', {
      headers: { traceparent: fromHeader.header },
      meta: { traceparent: fromMeta.header, progressToken: 'p-1' },
    });
    const seen = JSON.parse(textOf(answer.result)) as Record<string, string>;
    const [span] = await jaeger.trace(fromMeta.traceId, 1);
    expect(span).toMatchObject({ traceId: fromMeta.traceId, parentSpanId: fromMeta.spanId });
    expect(seen.traceparent).toBe(`00-${fromMeta.traceId}-${span!.spanId}-01`);

    // Garbage and an oversized value: a new trace starts, and the call goes through.
    for (const [id, bad] of [
      [7, 'zz-not-a-traceparent'],
      [8, `00-${hex(16)}-${hex(8)}-01${'-x'.repeat(5000)}`],
    ] as const) {
      const result = await call(bridge.url, session, id, 'meta', { meta: { traceparent: bad } });
      const passed = JSON.parse(textOf(result.result)) as Record<string, string>;
      expect(passed.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(passed.traceparent).not.toContain(bad.slice(3, 35));
      const [fresh] = await jaeger.trace(passed.traceparent!.split('-')[1]!, 1);
      expect(fresh!.parentSpanId ?? '').toBe('');
    }
  });

  it('names the decision and the approved digest under Enforce, and sends audit events as log records', async () => {
    const plain = await startTestBridge({ command: SERVERS.misbehaving() });
    const lister = await connect(plain.url);
    const { tools } = await lister.listTools();
    await lister.close();
    const echo = toolDigest(tools.find((tool) => tool.name === 'echo')!);
    const policyFile = join(await tempDir('tracing-policy'), 'policy.json');
    await writeFile(policyFile, JSON.stringify({ approved: [{ name: 'echo', digest: echo }] }));
    const token = `tok-${hex(12)}`;
    const bridge = await tracedBridge({
      policyFile,
      authToken: token,
      audit: {
        arguments: 'None',
        destination: join(await tempDir('tracing-audit'), 'audit.jsonl'),
      },
    });
    const auth = { authorization: `Bearer ${token}` };
    const session = await rawSession(bridge.url, auth);
    const allowed = traceparent();
    const denied = traceparent();
    await call(bridge.url, session, 2, 'echo', {
      headers: { ...auth, traceparent: allowed.header },
    });
    const refusal = await call(bridge.url, session, 3, 'crash', {
      headers: { ...auth, traceparent: denied.header },
    });
    expect(refusal.error).toBeDefined();

    expect(bridgeSpan(await jaeger.trace(allowed.traceId, 1)).attributes).toMatchObject({
      'mcp_operator.decision': 'allowed',
      'mcp_operator.target.digest': echo,
      'mcp_operator.target.approved_digest': echo,
      'mcp_operator.target.digest_match': true,
    });
    const deniedSpan = bridgeSpan(await jaeger.trace(denied.traceId, 1));
    expect(deniedSpan.attributes).toMatchObject({
      'mcp_operator.decision': 'denied',
      'mcp_operator.decision.reason': 'not-approved',
      'error.type': String(-32602),
      'rpc.response.status_code': String(-32602),
    });
    expect(deniedSpan.status?.code).toSatisfy((code) => code === 2 || code === 'STATUS_CODE_ERROR');
    expect(deniedSpan.attributes['mcp_operator.target.approved_digest']).toBeUndefined();

    // The audit events, as the collector received them (its debug exporter's log).
    let logs = '';
    await waitFor('the audit log records in the collector', async () => {
      logs = await jaeger.receivedLogs();
      return logs.includes('not-approved');
    });
    expect(logs).toContain('mcp_operator.audit');
    expect(logs).toContain('mcpAudit: Str(v1)');
    expect(logs).toContain(echo);
    // No credential reached the backend: not in a span, not in a log record.
    const stored = JSON.stringify([
      await jaeger.trace(allowed.traceId, 1),
      await jaeger.trace(denied.traceId, 1),
    ]);
    expect(stored).not.toContain(token);
    expect(logs).not.toContain(token);
  });
});
