import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ControllerMetrics } from '../../src/controller/metrics.ts';
import { parseAddress, startServer } from '../../src/controller/server.ts';
import { testLogger } from '../support/log.ts';
import { rawExchange, statusOf } from '../support/raw-http.ts';

/** A server whose caches are synced, with no metrics of interest. */
const startSynced = (address = '127.0.0.1:0') =>
  startServer({
    address,
    registry: new ControllerMetrics().registry,
    ready: () => true,
    log: testLogger(),
  });

describe('operator HTTP server', () => {
  it('serves liveness, readiness once synced, and the metrics', async () => {
    const metrics = new ControllerMetrics();
    let codeChanged = ['team-a/search', 'team-b/notes'];
    metrics.watch({
      queueDepth: () => ({ fast: 2, normal: 7 }),
      managedObjects: () => ({ Deployment: 3 }),
      isLeader: () => true,
      codeChanged: () => codeChanged,
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
      expect(text).toContain('mcp_operator_workqueue_depth{lane="fast"} 2');
      expect(text).toContain('mcp_operator_workqueue_depth{lane="normal"} 7');
      expect(text).toContain('mcp_operator_managed_objects{kind="Deployment"} 3');
      expect(text).toContain('mcp_operator_leader 1');
      expect(text).toContain('mcp_operator_server_code_changed{server="team-a/search"} 1');
      expect(text).toContain('mcp_operator_server_code_changed{server="team-b/notes"} 1');
      // Approved again (the spec changed): the series leaves at the next scrape.
      codeChanged = ['team-b/notes'];
      const later = await (await fetch(`${server.url}/metrics`)).text();
      expect(later).not.toContain('mcp_operator_server_code_changed{server="team-a/search"}');
      expect(later).toContain('mcp_operator_server_code_changed{server="team-b/notes"} 1');
      expect(text).toContain('mcp_operator_process_resident_memory_bytes');
      const head = await fetch(`${server.url}/metrics`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe(metrics.registry.contentType);
    } finally {
      await server.close();
    }
  });

  it('answers 404 for other paths and 405 with Allow for other methods', async () => {
    const server = await startSynced();
    try {
      expect((await fetch(`${server.url}/`)).status).toBe(404);
      expect((await fetch(`${server.url}/readyz?verbose`)).status).toBe(200);
      const post = await fetch(`${server.url}/metrics`, { method: 'POST', body: 'x' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    } finally {
      await server.close();
    }
  });

  it('closes while a scraper holds a keep-alive connection open', async () => {
    const server = await startSynced();
    const agent = new Agent({ keepAlive: true });
    try {
      const { status } = await new Promise<{ status: number | undefined }>((resolve, reject) => {
        get(`${server.url}/metrics`, { agent }, (response) => {
          response.resume();
          response.on('end', () => resolve({ status: response.statusCode }));
        }).on('error', reject);
      });
      expect(status).toBe(200);
      await server.close();
    } finally {
      agent.destroy();
    }
  });

  it('refuses to start on an address in use, naming it', async () => {
    const first = await startSynced();
    try {
      const port = new URL(first.url).port;
      await expect(startSynced(`127.0.0.1:${port}`)).rejects.toThrow(
        `EADDRINUSE: address already in use 127.0.0.1:${port}`,
      );
    } finally {
      await first.close();
    }
  });

  it('parses listen addresses and refuses malformed ones', () => {
    expect(parseAddress(':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseAddress('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(() => parseAddress('8080')).toThrow(/--metrics-address/);
    expect(() => parseAddress('host:99999')).toThrow(/host:port/);
  });

  it('answers 400 to a malformed request target and serves the next request', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/operator-server.ts', import.meta.url));
    const child = spawn(process.execPath, [fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
    let exit: string | undefined;
    const exited = once(child, 'exit').then(([code, signal]) => {
      exit = `${String(code)} ${String(signal)}`;
    });
    try {
      const [line] = (await once(child.stdout.setEncoding('utf8'), 'data')) as [string];
      const url = new URL(line.trim());
      for (const target of ['http://[/', '//[::1/metrics']) {
        const raw = await rawExchange(
          Number(url.port),
          `GET ${target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
        );
        expect(statusOf(raw), `GET ${target}`).toBe(400);
      }
      expect((await fetch(`${url.origin}/healthz`)).status).toBe(200);
      expect(exit).toBeUndefined();
    } finally {
      if (exit === undefined) child.kill('SIGTERM');
      await exited;
    }
  });
});
