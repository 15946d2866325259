import { describe, expect, it } from 'vitest';
import { ControllerMetrics } from '../../src/controller/metrics.ts';
import { parseAddress, startServer } from '../../src/controller/server.ts';
import { testLogger } from '../support/log.ts';

describe('operator HTTP server', () => {
  it('serves liveness, readiness once synced, and the metrics', async () => {
    const metrics = new ControllerMetrics();
    metrics.watch({
      queueDepth: () => 7,
      managedObjects: () => ({ Deployment: 3 }),
      isLeader: () => true,
    });
    metrics.reconciles.inc({ result: 'success' });
    let synced = false;
    const server = await startServer({
      address: '127.0.0.1:0',
      registry: metrics.registry,
      ready: () => synced,
      log: testLogger(),
    });
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
      synced = true;
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const text = await (await fetch(`${server.url}/metrics`)).text();
      expect(text).toContain('mcp_operator_reconcile_total{result="success"} 1');
      expect(text).toContain('mcp_operator_workqueue_depth 7');
      expect(text).toContain('mcp_operator_managed_objects{kind="Deployment"} 3');
      expect(text).toContain('mcp_operator_leader 1');
      expect(text).toContain('mcp_operator_process_resident_memory_bytes');
    } finally {
      await server.close();
    }
  });

  it('parses listen addresses and refuses malformed ones', () => {
    expect(parseAddress(':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseAddress('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(() => parseAddress('8080')).toThrow(/--metrics-address/);
    expect(() => parseAddress('host:99999')).toThrow(/host:port/);
  });
});
