/**
 * The console's JSON API and live stream over the in-memory KubeClient (test/support): what the
 * routes answer and what reaches the stream when the watched objects change. The same server
 * against the real API server, in a real browser, is test/console/console.cluster.test.ts.
 */
import { type IncomingMessage, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Access } from '../../src/console/access.ts';
import { cookieName, newSecrets } from '../../src/console/guard.ts';
import { consoleServer, type ConsoleServer } from '../../src/console/server.ts';
import { ConsoleWatch } from '../../src/console/watch.ts';
import type { FleetRow, ServerReview, StreamMessage } from '../../src/console/web/api-types.ts';
import { snapshotConfigMap } from '../../src/discovery/snapshot-configmap.ts';
import { takeSnapshot } from '../../src/tools/snapshot.ts';
import { FakeClient } from '../support/fake-client.ts';
import { testLogger } from '../support/log.ts';
import { waitFor } from '../support/wait.ts';

const MCPS = '/apis/mcp-operator.dev/v1alpha1/namespaces/team/mcpservers';
const CMS = '/api/v1/namespaces/team/configmaps';
const EVENTS = '/api/v1/namespaces/team/events';
const fake = new FakeClient(MCPS, CMS, EVENTS);
const secrets = newSecrets();
let watch: ConsoleWatch;
let server: ConsoleServer;
let port: number;

const snapshot = takeSnapshot({
  protocolVersion: '2025-11-25',
  serverInfo: { name: 'demo', version: '1' },
  capabilities: {},
  instructions: undefined,
  tools: [{ name: 'echo', description: 'Echoes.\u202e', inputSchema: { type: 'object' } }],
});

function mcpServer(name: string, status: object = {}) {
  return {
    apiVersion: 'mcp-operator.dev/v1alpha1',
    kind: 'MCPServer',
    metadata: { name, namespace: 'team' },
    spec: { url: `http://${name}.example/mcp` },
    status,
  };
}

/** A GET with the console's cookie, Host and nothing else. */
function get(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        headers: { cookie: `${cookieName(port)}=${secrets.token}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const data = snapshotConfigMap(snapshot);
  if (!data.fits) throw new Error('the fixture snapshot does not fit');
  fake.create(CMS, {
    metadata: {
      name: 'demo-snapshot',
      namespace: 'team',
      labels: { 'mcp-operator.dev/snapshot': 'true' },
      ownerReferences: [
        { apiVersion: 'mcp-operator.dev/v1alpha1', kind: 'MCPServer', name: 'demo', uid: 'u' },
      ],
    },
    data: data.data,
  } as never);
  fake.create(
    MCPS,
    mcpServer('demo', {
      discovery: {
        toolCount: 1,
        snapshotDigest: snapshot.digest,
        snapshotConfigMap: 'demo-snapshot',
      },
    }),
  );
  fake.create(MCPS, mcpServer('fresh'));
  watch = new ConsoleWatch({
    client: fake,
    namespaces: ['team'],
    events: true,
    snapshots: true,
    log: testLogger(),
  });
  await watch.start();
  server = consoleServer({
    client: fake,
    watch,
    access: new Access(fake),
    secrets,
    session: { user: 'tester', context: 'test', namespaces: ['team'], limits: [] },
    log: testLogger(),
  });
  port = await server.listen(0);
});

afterAll(async () => {
  await server?.close();
  await watch?.stop();
});

describe('the console API', () => {
  it('lists every MCPServer of its namespaces as a fleet row', async () => {
    const { status, body } = await get('/api/fleet');
    expect(status).toBe(200);
    const rows = (JSON.parse(body) as { rows: FleetRow[] }).rows;
    expect(rows.map((r) => r.key).sort()).toEqual(['team/demo', 'team/fresh']);
    expect(rows.find((r) => r.name === 'demo')).toMatchObject({ tools: 1, transport: 'url' });
  });

  it('answers a server page with the snapshot text as sent, and why a fresh server has none', async () => {
    const demo = JSON.parse((await get('/api/servers/team/demo')).body) as ServerReview;
    expect(demo.items[0]?.fields.find((f) => f.field === 'description')?.current).toBe(
      'Echoes.\u202e',
    );
    // The fake answers no access review: approving is not offered.
    expect(demo.access.canApprove).toBe(false);
    const fresh = JSON.parse((await get('/api/servers/team/fresh')).body) as ServerReview;
    expect(fresh.snapshotProblem).toContain('No discovery has succeeded yet');
    expect((await get('/api/servers/team/nothing')).status).toBe(404);
  });

  it('serves the page and its modules, and nothing outside them', async () => {
    expect((await get('/')).body).toContain('<script type="module" src="/assets/app.js">');
    const app = await get('/assets/app.js');
    expect(app.status).toBe(200);
    expect(app.body).toContain('from "./dom.js"');
    for (const path of ['/assets/..%2Fserver.ts', '/assets/api-types.ts', '/assets/nothing.js']) {
      expect((await get(path)).status, path).toBe(404);
    }
  });

  it('streams a changed row, a deleted one, and a touch for a new Event', async () => {
    const messages: StreamMessage[] = [];
    const stream = await new Promise<IncomingMessage>((resolve, reject) => {
      request(
        {
          host: '127.0.0.1',
          port,
          path: '/api/stream',
          headers: { cookie: `${cookieName(port)}=${secrets.token}` },
        },
        resolve,
      )
        .on('error', reject)
        .end();
    });
    let buffer = '';
    let hello = false;
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.startsWith('event: hello')) hello = true;
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (!block.startsWith('event:') && data !== undefined) {
          messages.push(JSON.parse(data) as StreamMessage);
        }
      }
    });
    await waitFor('the stream to open', () => hello);
    fake.update(MCPS, {
      ...mcpServer('fresh', { conditions: [] }),
      metadata: { ...fake.objects.get(MCPS)!.get('fresh')!.metadata },
    });
    fake.remove(MCPS, 'demo');
    fake.create(EVENTS, {
      metadata: { name: 'e1', namespace: 'team' },
      involvedObject: { kind: 'MCPServer', name: 'fresh', namespace: 'team' },
      reason: 'DriftDetected',
      message: 'changed',
      type: 'Warning',
    } as never);
    await waitFor('three messages', () => messages.length >= 3);
    stream.destroy();
    expect(messages.map((m) => m.type)).toEqual(['upsert', 'delete', 'touch']);
    expect(messages[2]).toEqual({ type: 'touch', key: 'team/fresh' });
  });
});
