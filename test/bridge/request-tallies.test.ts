import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/bridge/metrics.ts';
import type { Outcome } from '../../src/bridge/identity.ts';

const REQUESTS = 'mcp_bridge_requests_total';
const DURATION = 'mcp_bridge_request_duration_seconds';

/** The two request metrics as prom-client's own Counter and Histogram define them. */
function reference() {
  const registry = new Registry();
  const requests = new Counter({
    name: REQUESTS,
    help: 'JSON-RPC requests handled, by method and outcome (ok, error, timeout, cancelled, child_exit, refused).',
    labelNames: ['method', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: DURATION,
    help: 'Time from a request reaching the bridge to its answer, by method.',
    labelNames: ['method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return {
    registry,
    requestDone(method: string, outcome: Outcome, seconds: number) {
      requests.inc({ method, outcome });
      duration.observe({ method }, seconds);
    },
  };
}

/**
 * Methods and outcomes interleaved, so the order in which label sets were first seen matters;
 * durations on a bound, between bounds, under the first and over the last, with sums whose
 * floating-point rounding depends on the order of addition.
 */
const REQUESTS_SEEN: [string, Outcome, number][] = [
  ['initialize', 'ok', 0.0123],
  ['tools/call', 'ok', 0.0005],
  ['initialize', 'error', 0.001],
  ['tools/call', 'timeout', 61.5],
  ['tools/list', 'ok', 0.1],
  ['tools/call', 'ok', 0.30000000000000004],
  ['no/such/method', 'refused', 2.5],
  ['tools/call', 'child_exit', 0.07],
  ['initialize', 'ok', 0.2],
];

async function scraped(registry: Registry): Promise<string[]> {
  return [
    await registry.getSingleMetricAsString(REQUESTS),
    await registry.getSingleMetricAsString(DURATION),
  ];
}

describe('request metrics', () => {
  it('scrape as prom-client Counter and Histogram would give them: names, labels, buckets, order, sums', async () => {
    const bridge = createMetrics();
    const expected = reference();
    for (const [method, outcome, seconds] of REQUESTS_SEEN) {
      bridge.requestDone(method, outcome, seconds);
      expected.requestDone(method === 'no/such/method' ? 'other' : method, outcome, seconds);
    }
    const want = await scraped(expected.registry);
    expect(want[0]).toContain(`${REQUESTS}{method="tools/call",outcome="timeout"} 1`);
    expect(want[1]).toContain(`${DURATION}_bucket{le="+Inf",method="tools/call"} 4`);
    expect(await scraped(bridge.registry)).toEqual(want);
  });

  it('keep counting across scrapes, and list nothing before the first request', async () => {
    const bridge = createMetrics();
    const expected = reference();
    expect(await scraped(bridge.registry)).toEqual(await scraped(expected.registry));
    for (const round of [1, 2, 3]) {
      for (const [method, outcome, seconds] of REQUESTS_SEEN.slice(0, round * 3)) {
        bridge.requestDone(method, outcome, seconds);
        expected.requestDone(method === 'no/such/method' ? 'other' : method, outcome, seconds);
      }
      expect(await scraped(bridge.registry)).toEqual(await scraped(expected.registry));
    }
  });

  it('start over on resetMetrics, as prom-client metrics do', async () => {
    const bridge = createMetrics();
    const expected = reference();
    bridge.requestDone('tools/call', 'ok', 0.01);
    expected.requestDone('tools/call', 'ok', 0.01);
    bridge.registry.resetMetrics();
    expected.registry.resetMetrics();
    bridge.requestDone('ping', 'ok', 0.002);
    expected.requestDone('ping', 'ok', 0.002);
    const got = await scraped(bridge.registry);
    expect(got).toEqual(await scraped(expected.registry));
    expect(got.join('\n')).not.toContain('tools/call');
  });
});
