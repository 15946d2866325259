import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { MCPServerStatus } from '../../src/api/v1alpha1/mcpserver.ts';
import type { Discovery } from '../../src/tools/snapshot.ts';
import { snapshotDigest, toolDigest } from '../../src/tools/digest.ts';
import type { Tool } from '../../src/mcp/schemas.ts';
import { compactStatus, takeSnapshot } from '../../src/tools/snapshot.ts';
import {
  CONFIGMAP_LIMIT_BYTES,
  SNAPSHOT_KEY,
  snapshotConfigMap,
} from '../../src/discovery/snapshot-configmap.ts';

function tool(name: string, description = `The ${name} tool`): Tool {
  return {
    name,
    description,
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to look for' } },
      required: ['query'],
    },
    outputSchema: { type: 'object', properties: { hits: { type: 'integer' } } },
    annotations: { readOnlyHint: true },
  };
}

function discovery(tools: Tool[]): Discovery {
  return {
    protocolVersion: '2025-11-25',
    serverInfo: { name: 'srv', version: '1.0.0', title: 'Server' },
    capabilities: { tools: { listChanged: true }, prompts: {}, logging: {} },
    instructions: 'Use search first.',
    tools,
  };
}

describe('takeSnapshot', () => {
  it('orders tools by name and digests the set independently of the listing order', () => {
    const a = takeSnapshot(discovery([tool('zeta'), tool('Alpha'), tool('beta')]));
    const b = takeSnapshot(discovery([tool('beta'), tool('zeta'), tool('Alpha')]));
    expect(a.tools.map((t) => t.name)).toEqual(['Alpha', 'beta', 'zeta']);
    expect(a.digest).toBe(b.digest);
    expect(a.digest).toBe(snapshotDigest(a.tools));
    expect(a.tools[0]?.digest).toBe(toolDigest(tool('Alpha')));
  });

  it('keeps each definition exactly as listed, _meta included', () => {
    const listed = { ...tool('x'), _meta: { 'example.com/v': 1 } };
    expect(takeSnapshot(discovery([listed])).tools[0]?.definition).toBe(listed);
  });
});

describe('compactStatus', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => tool(`tool_number_${i}`));
  const compact = compactStatus(takeSnapshot(discovery(hundred)));

  it('is valid status.discovery as the CRD defines it', () => {
    const status = { discovery: compact };
    expect([...Value.Errors(MCPServerStatus, status)].map((e) => e.path)).toEqual([]);
  });

  it('carries names, counts, capabilities, abbreviated tool digests and the full snapshot digest', () => {
    expect(compact).toMatchObject({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'srv', version: '1.0.0' },
      capabilities: ['logging', 'prompts', 'tools'],
      toolCount: 100,
    });
    expect(compact.snapshotDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const snapshot = takeSnapshot(discovery(hundred));
    expect(compact.tools?.[0]).toEqual({
      name: snapshot.tools[0]!.name,
      digest: snapshot.tools[0]!.digest.slice(0, 'sha256:'.length + 12),
    });
  });

  it('stays within 8 KiB for 100 tools, whatever the size of their schemas', () => {
    // ~64 bytes per tool with 20-character names: names and short digests only.
    expect(Buffer.byteLength(JSON.stringify(compact))).toBeLessThan(8 * 1024);
  });
});

describe('snapshotConfigMap', () => {
  it('holds every definition with its digests, one tool per line', () => {
    const snapshot = takeSnapshot(discovery([tool('b'), tool('a')]));
    const result = snapshotConfigMap(snapshot);
    if (!result.fits) throw new Error('expected it to fit');
    const text = result.data[SNAPSHOT_KEY] ?? '';
    const parsed = JSON.parse(text) as { snapshotDigest: string; tools: unknown[] };
    expect(parsed.snapshotDigest).toBe(snapshot.digest);
    expect(parsed.tools).toEqual(JSON.parse(JSON.stringify(snapshot.tools)));
    expect(text.split('\n').filter((line) => line.startsWith('{"name":'))).toHaveLength(2);
  });

  it('reports a tool set over 1 MiB with its largest tools instead of cutting it', () => {
    const tools = Array.from({ length: 300 }, (_, i) => tool(`t${i}`, 'd'.repeat(3000)));
    tools.push(tool('huge', 'h'.repeat(200_000)));
    const result = snapshotConfigMap(takeSnapshot(discovery(tools)));
    expect(result.fits).toBe(false);
    if (result.fits) return;
    expect(result.bytes).toBeGreaterThan(CONFIGMAP_LIMIT_BYTES);
    expect(result.limit).toBe(CONFIGMAP_LIMIT_BYTES);
    expect(result.largest[0]?.name).toBe('huge');
  });

  it('counts bytes, not characters, right at the limit', () => {
    const snapshot = takeSnapshot(discovery([tool('a', 'é'.repeat(1000))]));
    const exact = snapshotConfigMap(snapshot);
    if (!exact.fits) throw new Error('expected it to fit');
    expect(exact.bytes).toBe(
      Buffer.byteLength(SNAPSHOT_KEY) + Buffer.byteLength(exact.data[SNAPSHOT_KEY] ?? ''),
    );
    expect(snapshotConfigMap(snapshot, exact.bytes).fits).toBe(true);
    expect(snapshotConfigMap(snapshot, exact.bytes - 1).fits).toBe(false);
  });
});
