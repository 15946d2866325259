import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DiscoveredReason } from '../../src/api/v1alpha1/conditions.ts';
import { ResultStore, type Success } from '../../src/discovery/results.ts';
import { compactStatus, takeSnapshot } from '../../src/tools/snapshot.ts';

const failure = { reason: DiscoveredReason.Failed, message: 'The server did not answer.' };
const success = (seconds: number): Success => ({
  at: new Date(seconds * 1000),
  url: 'http://a.ns:8080/mcp',
  found: compactStatus(
    takeSnapshot({
      protocolVersion: '2025-11-25',
      serverInfo: undefined,
      capabilities: { tools: {} },
      instructions: undefined,
      tools: [],
    }),
  ),
  stored: { fits: true, configMap: 'a-tools' },
  drift: undefined,
});

async function failingSince(registry: Registry): Promise<string[]> {
  return (await registry.metrics())
    .split('\n')
    .filter((line) => line.startsWith('mcp_operator_discovery_failing_since_timestamp_seconds{'));
}

describe('ResultStore metrics', () => {
  it('marks when a run of failures began, through later failures, until a success', async () => {
    const registry = new Registry();
    const store = new ResultStore(registry);
    store.failed('ns/a', 1, new Date(100_000), failure);
    store.failed('ns/a', 1, new Date(200_000), failure);
    expect(await failingSince(registry)).toEqual([
      'mcp_operator_discovery_failing_since_timestamp_seconds{server="ns/a"} 100',
    ]);
    store.succeeded('ns/a', 1, success(300));
    expect(await failingSince(registry)).toEqual([]);
    store.failed('ns/a', 1, new Date(400_000), failure);
    expect(await failingSince(registry)).toEqual([
      'mcp_operator_discovery_failing_since_timestamp_seconds{server="ns/a"} 400',
    ]);
    store.forget('ns/a');
    expect(await failingSince(registry)).toEqual([]);
  });
});

describe('ResultStore memory', () => {
  const listed = (descriptions: string[]) =>
    compactStatus(
      takeSnapshot({
        protocolVersion: '2025-11-25',
        serverInfo: undefined,
        capabilities: { tools: {} },
        instructions: undefined,
        tools: descriptions.map((description, i) => ({
          name: `tool_${i}`,
          description,
          inputSchema: { type: 'object' },
        })),
      }),
    );

  it('keeps the tool list status already carries instead of a second copy, and only an equal one', () => {
    const store = new ResultStore();
    store.succeeded('ns/a', 1, { ...success(1), found: listed(['Looks up.', 'Writes.']) });
    // As the MCPServer cache has it: parsed from the API server's JSON, equal but not the same.
    const written = structuredClone(listed(['Looks up.', 'Writes.']).tools);
    const stale = structuredClone(listed(['Looks up.', 'Deletes.']).tools);

    store.shareTools('ns/a', stale);
    expect(store.get('ns/a')?.success?.found.tools).not.toBe(stale);
    expect(store.get('ns/a')?.success?.found.tools).not.toEqual(stale);

    store.shareTools('ns/a', written);
    expect(store.get('ns/a')?.success?.found.tools).toBe(written);
    expect(store.get('ns/a')?.success?.found.toolCount).toBe(2);
  });
});
