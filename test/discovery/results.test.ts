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
