/**
 * Text a hostile MCP server controls, from the real discover() through the snapshot to the
 * status the operator would write: every piece is bounded and shows its control characters
 * as visible escapes, the status stays valid against the CRD's own status schema (a write the
 * API server refuses would lose Ready with it), and a name that breaks MCP's tool-name rules is
 * a finding rather than a stored name.
 */

import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { MCPServerStatus as StatusSchema } from '../../src/api/v1alpha1/mcpserver.ts';
import { discover } from '../../src/discovery/client.ts';
import { failureOf } from '../../src/discovery/runner.ts';
import { compactStatus, takeSnapshot } from '../../src/tools/snapshot.ts';
import {
  discoveryStatus,
  type DiscoveryStatusInput,
} from '../../src/discovery/discovery-status.ts';
import { MESSAGE_MAX } from '../../src/tools/text.ts';
import { fixtureTool, hostile, startHttp, startScripted, track } from './servers.ts';

const validStatus = new Ajv({ strict: false, validateFormats: false }).compile(StatusSchema);

/** C0, DEL, C1, bidi overrides and isolates: what must never reach a terminal raw. */
const RAW_CONTROL = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

const T0 = new Date('2026-11-30T10:00:00Z');

function statusInput(result: DiscoveryStatusInput['result']): DiscoveryStatusInput {
  return {
    server: {
      metadata: { name: 'srv', namespace: 'ns', generation: 1 },
      spec: { url: 'http://srv/mcp' },
    },
    previous: undefined,
    result,
    baseline: { kind: 'tools', tools: [] },
    now: T0,
  };
}

/** Discovery of `url` as the runner records it, turned into the status a pass would write. */
async function statusAfterDiscovery(url: string) {
  try {
    const snapshot = takeSnapshot(await discover({ url, timeoutMs: 10_000 }));
    const stored = { fits: true as const, configMap: 'srv-snapshot' };
    return discoveryStatus(
      statusInput({
        generation: 1,
        attemptAt: T0,
        success: {
          at: T0,
          url,
          found: compactStatus(snapshot),
          stored,
          drift: undefined,
          listed: { tools: snapshot.tools, catalog: snapshot.catalog },
        },
        failure: undefined,
      }),
    );
  } catch (error) {
    return discoveryStatus(
      statusInput({ generation: 1, attemptAt: T0, success: undefined, failure: failureOf(error) }),
    );
  }
}

function expectWritable(part: Awaited<ReturnType<typeof statusAfterDiscovery>>) {
  const status = { conditions: part.conditions, discovery: part.discovery, drift: part.drift };
  const valid = validStatus(status);
  expect(validStatus.errors ?? [], 'the CRD status schema refuses the status').toEqual([]);
  expect(valid).toBe(true);
  for (const condition of part.conditions) {
    expect(condition.message.length).toBeLessThanOrEqual(MESSAGE_MAX);
    expect(condition.message).not.toMatch(RAW_CONTROL);
  }
  expect(JSON.stringify(status)).not.toMatch(/\\u00(0|1)[0-9a-f]|\\u007f/);
}

/** A legacy server whose initialize result or error a test writes. */
function legacy(initialize: (id: number) => object) {
  return startScripted({
    page: () => ({ tools: [] }),
    override(message, res) {
      if (message.method !== 'initialize') return false;
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...initialize(message.id!) }));
      return true;
    },
  });
}

describe('server-controlled text on its way to status', () => {
  it('a JSON-RPC error message of 40,000 characters becomes a short Discovered message', async () => {
    const server = await track(hostile.hugeRpcError());
    const part = await statusAfterDiscovery(server.url);
    expect(part.conditions[0]).toMatchObject({ status: 'False', reason: 'InvalidAnswer' });
    expect(part.conditions[0].message).toMatch(/JSON-RPC error -32603: boom\\e\[2Jxxx/);
    expect(part.discovery?.lastError).toBe(part.conditions[0].message);
    expectWritable(part);
  });

  it('ten tools with 4,000-character names are findings, not names in status', async () => {
    const server = await track(hostile.poisonedNames());
    const part = await statusAfterDiscovery(server.url);
    expect(part.conditions[1]).toMatchObject({ status: 'True', reason: 'ToolsChanged' });
    expect(part.discovery?.toolCount).toBe(12);
    expect(part.discovery?.tools?.map((t) => t.name)).toEqual(['fine']);
    expect(part.drift?.added).toEqual(['fine']);
    expect(part.drift?.invalidNames).toHaveLength(11);
    for (const name of part.drift?.invalidNames ?? []) expect(name.length).toBeLessThan(100);
    expect(part.conditions[1].message).toContain("break MCP's tool-name rules");
    expectWritable(part);
  });

  it('serverInfo and tool names keep no ANSI escapes or newlines', async () => {
    const server = await track(
      startScripted({
        page: () => ({ tools: [fixtureTool('evil\u001b[2J'), fixtureTool('two\nlines')] }),
      }),
    );
    const named = await track(
      legacy(() => ({
        result: {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {}, 'cap\u001b]0;title\u0007': {} },
          serverInfo: { name: 'evil\u001b[2J\r\nname', version: '1\u202e0' },
        },
      })),
    );
    const tools = await statusAfterDiscovery(server.url);
    expect(tools.drift?.invalidNames).toEqual(['evil\\e[2J', 'two\\nlines']);
    expect(tools.discovery?.tools).toEqual([]);
    expectWritable(tools);

    const info = await statusAfterDiscovery(named.url);
    expect(info.discovery?.serverInfo).toEqual({
      name: 'evil\\e[2J\\r\\nname',
      version: '1\\u202E0',
    });
    expect(info.discovery?.capabilities).toEqual(['cap\\e]0;title\\a', 'tools']);
    expectWritable(info);
  });

  it('a non-JSON error body never reaches status: its status, type and size do', async () => {
    const secret = 'db_password=hunter2; api_key=AKIA0000';
    const server = await track(
      startHttp((_req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(secret);
      }),
    );
    const part = await statusAfterDiscovery(server.url);
    const message = part.conditions[0].message;
    expect(message).toMatch(
      /^HTTP 500 from http:\/\/127\.0\.0\.1:\d+\/mcp for server\/discover \(text\/plain body of 37 bytes, not shown\)/,
    );
    expect(message).toContain('check that');
    expect(message).not.toContain('hunter2');
    expectWritable(part);
  });

  it('neither does the message of a JSON-RPC error that comes with an error status', async () => {
    const server = await track(
      startHttp((_req, res) => {
        const error = { code: -32000, message: 'internal: db_password=hunter2' };
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error }));
      }),
    );
    const part = await statusAfterDiscovery(server.url);
    expect(part.conditions[0].message).toMatch(
      /^HTTP 400 from .* for initialize \(application\/json body of \d+ bytes with JSON-RPC error -32000, not shown\)/,
    );
    expect(part.conditions[0].message).not.toContain('hunter2');
  });

  it('nor a piece of a body that is not the JSON it claims to be', async () => {
    const server = await track(
      startHttp((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('db_password=hunter2');
      }),
    );
    const part = await statusAfterDiscovery(server.url);
    expect(part.conditions[0].message).toMatch(/^Malformed answer from .*: invalid JSON/);
    expect(part.conditions[0].message).not.toContain('hunter2');
  });
});
