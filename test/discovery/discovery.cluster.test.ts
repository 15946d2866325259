/**
 * Discovery in the operator against the real control plane, with `url` MCPServers pointing at
 * real MCP servers on 127.0.0.1 (nothing to deploy, so the operator's path from the scheduler
 * through the client to status is all real): status and the snapshot ConfigMap hold what the
 * server lists, a token comes from a Secret, hostile servers end as clear status errors while
 * the others carry on, a baseline can live in a ConfigMap, and a round that finds nothing new
 * writes nothing.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dump } from 'js-yaml';
import type { Condition } from '../../src/api/core-v1.ts';
import type { MCPServer, MCPServerSpec } from '../../src/api/v1alpha1/mcpserver.ts';
import type { Manager } from '../../src/controller/manager.ts';
import { approvedTools } from '../../src/tools/approve.ts';
import { toolDigest } from '../../src/tools/digest.ts';
import { takeSnapshot } from '../../src/tools/snapshot.ts';
import { SNAPSHOT_KEY } from '../../src/discovery/snapshot-configmap.ts';
import { installCrd } from '../api/install-crd.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { DISCOVERY_CLIENT_CAPABILITIES } from '../../src/discovery/client.ts';
import { cluster, startOperator, writeCount } from '../controller/operator.ts';
import { lastAttempt, requestDiscovery, waitForCondition } from './operator.ts';
import {
  type Running,
  type ToolFixture,
  fixtureTool,
  hostile,
  sdkListTools,
  startEverything,
  startHttp,
  startModern,
} from './servers.ts';

const kc = kubeConfig();
const ns = useNamespace('disc', kc);
const k = cluster(kc, () => ns.name);
let operator: Manager;
const running: Running[] = [];

async function serve<T extends Running>(server: Promise<T>): Promise<T> {
  const started = await server;
  running.push(started);
  return started;
}

beforeAll(async () => {
  await installCrd(kc);
  operator = await startOperator(ns.name);
});

afterAll(async () => {
  await operator?.stop();
  await Promise.all(running.map((server) => server.close()));
});

const byName = <T extends { name: string }>(list: T[]): T[] =>
  [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const conditionOf = (server: MCPServer, type: string): Condition | undefined =>
  server.status?.conditions?.find((c) => c.type === type);

describe('a url server', () => {
  it('is discovered: status and its snapshot ConfigMap hold exactly what it lists', async () => {
    const everything = await serve(startEverything());
    await k.create('everything', { url: everything.url });
    const server = await waitForCondition(k, 'everything', 'Discovered', 'True', 'Succeeded');
    const listed = byName(
      await sdkListTools(everything.url, undefined, DISCOVERY_CLIENT_CAPABILITIES),
    );

    const configMap = await k.core.readNamespacedConfigMap({
      name: 'everything-snapshot',
      namespace: ns.name,
    });
    const stored = JSON.parse(configMap.data?.[SNAPSHOT_KEY] ?? '') as {
      tools: { name: string; digest: string; definition: unknown }[];
    };
    expect(stored.tools.map((t) => t.definition)).toEqual(listed);
    expect(stored.tools.map((t) => t.digest)).toEqual(listed.map((t) => toolDigest(t)));
    expect(configMap.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'MCPServer',
      name: 'everything',
      controller: true,
    });

    expect(server.status?.discovery).toMatchObject({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'mcp-servers/everything' },
      toolCount: listed.length,
      snapshotDigest: takeSnapshot({
        protocolVersion: '2025-11-25',
        serverInfo: undefined,
        capabilities: {},
        instructions: undefined,
        tools: listed,
      }).digest,
      snapshotConfigMap: 'everything-snapshot',
      tools: listed.map((t) => ({ name: t.name, digest: toolDigest(t).slice(0, 19) })),
    });
    expect(conditionOf(server, 'Ready')).toMatchObject({ status: 'True', reason: 'External' });
    expect(conditionOf(server, 'Drifted')).toMatchObject({
      status: 'Unknown',
      reason: 'NoBaseline',
    });
    const bytes = Buffer.byteLength(JSON.stringify(server.status));
    console.log(`status of ${listed.length} tools: ${bytes} bytes`);
  });

  it('behind a bearer token from a Secret: missing, refused, then accepted', async () => {
    const token = 'tok-3f9a1c7e5b2d';
    const guarded = await serve(startModern(() => [fixtureTool('secret-tool')], { token }));
    await k.create('guarded', {
      url: guarded.url,
      auth: { secretRef: { name: 'guarded-token' } },
    });
    const missing = await waitForCondition(
      k,
      'guarded',
      'Discovered',
      'False',
      'AuthSecretMissing',
    );
    expect(conditionOf(missing, 'Discovered')?.message).toBe(
      `Cannot read the bearer token for discovery: Secret ${ns.name}/guarded-token (spec.auth.secretRef) does not exist.`,
    );
    const secret = (value: string) => ({
      metadata: { name: 'guarded-token', namespace: ns.name },
      stringData: { token: value },
    });
    await k.core.createNamespacedSecret({ namespace: ns.name, body: secret('not-the-token') });
    // A changed Secret runs discovery at once: no wait for the retry.
    const refused = await waitForCondition(k, 'guarded', 'Discovered', 'False', 'Unauthorized');
    expect(conditionOf(refused, 'Discovered')?.message).toMatch(
      /^401 Unauthorized from http:\/\/127\.0\.0\.1:\d+\/mcp: the server refused the bearer token; check spec\.auth\.secretRef\.$/,
    );
    await k.core.replaceNamespacedSecret({
      name: 'guarded-token',
      namespace: ns.name,
      body: secret(`${token}\n`),
    });
    const accepted = await waitForCondition(k, 'guarded', 'Discovered', 'True');
    expect(accepted.status?.discovery?.tools?.map((t) => t.name)).toEqual(['secret-tool']);

    // The token is nowhere the operator writes: status, events, metrics.
    const events = await k.core.listNamespacedEvent({ namespace: ns.name });
    const metrics = await (await fetch(`${operator.url}/metrics`)).text();
    for (const text of [JSON.stringify(accepted), JSON.stringify(events.items), metrics]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain('not-the-token');
    }
  });
});

describe('hostile and broken servers', () => {
  it('each ends as a clear status error, and other servers carry on', async () => {
    const cases: {
      name: string;
      server: Promise<Running>;
      reason: string;
      message: RegExp;
    }[] = [
      {
        name: 'unauthorized',
        server: startModern(() => [fixtureTool('x')], { token: 'something' }),
        reason: 'Unauthorized',
        message: /^401 Unauthorized from http:\/\/127\.0\.0\.1:\d+\/mcp: the server refused/,
      },
      {
        name: 'failing',
        server: hostile.failing(),
        reason: 'Failed',
        message:
          /^HTTP 500 from http:\/\/127\.0\.0\.1:\d+\/mcp for server\/discover \(text\/plain body of 16 bytes, not shown\): check that the URL is the MCP endpoint of a Streamable HTTP server, and that server's own logs\.$/,
      },
      {
        // Before the operator bounded it, this message made the API server refuse the status
        // write as a whole: Discovered stayed Pending and Ready was never written.
        name: 'huge-error',
        server: hostile.hugeRpcError(),
        reason: 'InvalidAnswer',
        message:
          /^http:\/\/127\.0\.0\.1:\d+\/mcp answered initialize with JSON-RPC error -32603: boom\\e\[2Jx{40}.{0,160}… \(\d+ more characters\)\.$/,
      },
      {
        name: 'invalid-json',
        server: hostile.invalidJson(),
        reason: 'InvalidAnswer',
        message: /^Malformed answer from .* invalid JSON/,
      },
      {
        name: 'hanging',
        server: hostile.hanging(),
        reason: 'TimedOut',
        message: /did not answer server\/discover within the discovery budget of 2000 ms/,
      },
      {
        name: 'endless-sse',
        server: hostile.endlessKeepAlives(),
        reason: 'TimedOut',
        message: /within the discovery budget of 2000 ms/,
      },
      {
        name: 'cursor-loop',
        server: hostile.cursorLoop(),
        reason: 'Failed',
        message: /^Tools\/list pagination from .* does not end: the cursor "again" came back/,
      },
      {
        name: 'ten-thousand',
        server: hostile.tenThousandTools(),
        reason: 'Failed',
        message: /lists more than 1000 tools; discovery stopped/,
      },
      {
        name: 'fifty-mb',
        server: hostile.hugeList(),
        reason: 'Failed',
        message: /sent more than 8388608 bytes; discovery stopped reading/,
      },
    ];
    for (const c of cases) {
      const server = await serve(c.server);
      await k.create(c.name, { url: server.url, discovery: { timeout: '2s' } });
    }
    // A server added while those run is discovered as quickly as ever.
    const started = performance.now();
    const bystander = await serve(startModern(() => [fixtureTool('fine')]));
    await k.create('bystander', { url: bystander.url });
    await waitForCondition(k, 'bystander', 'Discovered', 'True');
    expect(performance.now() - started).toBeLessThan(10_000);

    for (const c of cases) {
      const server = await waitForCondition(k, c.name, 'Discovered', 'False', c.reason);
      expect(conditionOf(server, 'Discovered')?.message, c.name).toMatch(c.message);
      expect(server.status?.discovery?.lastError).toBe(conditionOf(server, 'Discovered')?.message);
      // Ready says whether the server answers: these answer, just not with a usable tools list.
      expect(conditionOf(server, 'Ready'), c.name).toMatchObject({
        status: c.reason === 'InvalidAnswer' ? 'True' : 'False',
        reason: 'External',
      });
    }
    expect((await k.get('everything')).status?.discovery?.lastError).toBeUndefined();
    expect((await fetch(`${operator.url}/healthz`)).status).toBe(200);
    const events = await k.core.listNamespacedEvent({
      namespace: ns.name,
      fieldSelector: 'involvedObject.name=fifty-mb,reason=DiscoveryFailed',
    });
    expect(events.items).toHaveLength(1);
    const told = await k.core.listNamespacedEvent({
      namespace: ns.name,
      fieldSelector: 'involvedObject.name=huge-error,reason=DiscoveryFailed',
    });
    expect(told.items[0]?.message).toMatch(/JSON-RPC error -32603: boom\\e\[2Jx/);
    expect(told.items[0]?.message?.length).toBeLessThanOrEqual(1024);
  });

  it('a server with poisoned tool names: findings in status, shown as text, none stored as a name', async () => {
    const server = await serve(hostile.poisonedNames());
    await k.create('poisoned', { url: server.url });
    const found = await waitForCondition(k, 'poisoned', 'Drifted', 'True', 'ToolsChanged');
    expect(found.status?.discovery?.toolCount).toBe(12);
    expect(found.status?.discovery?.tools?.map((t) => t.name)).toEqual(['fine']);
    expect(found.status?.drift?.invalidNames).toHaveLength(11);
    expect(found.status?.drift?.invalidNames).toContain('evil\\e[2J');
    expect(conditionOf(found, 'Drifted')?.message).toContain(
      "Names that break MCP's tool-name rules, which cannot be approved: '0nnnn",
    );
    expect(JSON.stringify(found.status)).not.toMatch(/\\u001b/);
    expect(conditionOf(found, 'Ready')).toMatchObject({ status: 'True', reason: 'External' });
  });
});

describe('the discovery egress policy', () => {
  const other = useNamespace('disc-egress', kc);
  const ko = cluster(kc, () => other.name);
  let guarded: Manager;

  beforeAll(async () => {
    guarded = await startOperator(other.name, [
      '--discovery-denied-cidrs=127.0.0.0/8',
      '--discovery-allowed-cidrs=127.0.0.2/32',
    ]);
  });
  afterAll(() => guarded?.stop());

  it('refuses a URL by the address it resolves to, sends nothing, and allows the exception', async () => {
    let requests = 0;
    const denied = await serve(
      startHttp((_req, res) => {
        requests++;
        res.writeHead(500).end();
      }),
    );
    const { port } = new URL(denied.url);
    await ko.create('metadata-like', { url: `http://localhost:${port}/mcp` });
    const refused = await waitForCondition(
      ko,
      'metadata-like',
      'Discovered',
      'False',
      'EgressDenied',
    );
    expect(conditionOf(refused, 'Discovered')?.message).toBe(
      `Discovery does not connect to http://localhost:${port}/mcp: localhost (127.0.0.1) is in 127.0.0.0/8 (denied by --discovery-denied-cidrs), which the operator's egress policy denies; if the server is meant to be reached there, the operator's administrator can allow the range (--discovery-allowed-cidrs, chart value discovery.egress.allowedCIDRs).`,
    );
    expect(requests).toBe(0);

    const allowed = await serve(startModern(() => [fixtureTool('fine')], { host: '127.0.0.2' }));
    await ko.create('allowed', { url: allowed.url });
    const found = await waitForCondition(ko, 'allowed', 'Discovered', 'True');
    expect(found.status?.discovery?.tools?.map((t) => t.name)).toEqual(['fine']);
  });
});

describe('a round that finds nothing new', () => {
  it('writes nothing: no status, no ConfigMap, no event', async () => {
    const names = ['everything', 'guarded', 'bystander', 'failing', 'hanging'];
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const writes = await writeCount(operator.url);
    const asked = Date.now() / 1000;
    for (const name of names) await requestDiscovery(k, name, 'round-1');
    for (const name of names) {
      await waitFor(`a discovery run of ${name}`, async () => {
        const at = await lastAttempt(operator.url, `${ns.name}/${name}`);
        return at !== undefined && at >= asked;
      });
    }
    // Let the reconcile passes the runs asked for go through.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = await writeCount(operator.url);
    console.log(`API writes for a no-change round of ${names.length} servers: ${after - writes}`);
    expect(after).toBe(writes);
  });
});

describe('a baseline in a ConfigMap', () => {
  it('is read, followed when it changes, and reported when invalid or missing', async () => {
    const tools: ToolFixture[] = [fixtureTool('alpha'), fixtureTool('beta')];
    const pinned = await serve(startModern(() => tools));
    const listed = takeSnapshot({
      protocolVersion: '2025-11-25',
      serverInfo: undefined,
      capabilities: {},
      instructions: undefined,
      tools: await sdkListTools(pinned.url),
    }).tools;
    const baseline = (text: string) => ({
      metadata: { name: 'pinned-baseline', namespace: ns.name },
      data: { 'tools.yaml': text },
    });
    const spec: MCPServerSpec = {
      url: pinned.url,
      tools: { approved: { configMapRef: { name: 'pinned-baseline' } } },
    };
    await k.core.createNamespacedConfigMap({
      namespace: ns.name,
      body: baseline(dump(approvedTools(listed, 'definitions'))),
    });
    await k.create('pinned', spec);
    await waitForCondition(k, 'pinned', 'Drifted', 'False', 'ToolsMatch');

    const replace = (text: string) =>
      k.core.replaceNamespacedConfigMap({
        name: 'pinned-baseline',
        namespace: ns.name,
        body: baseline(text),
      });
    await replace(dump(approvedTools(listed.slice(0, 1), 'digests')));
    const drifted = await waitForCondition(k, 'pinned', 'Drifted', 'True', 'ToolsChanged');
    expect(drifted.status?.drift).toMatchObject({ added: ['beta'] });

    await replace('- {name: alpha}');
    const invalid = await waitForCondition(k, 'pinned', 'Drifted', 'Unknown', 'BaselineInvalid');
    expect(conditionOf(invalid, 'Drifted')?.message).toBe(
      `The approved tools in ConfigMap ${ns.name}/pinned-baseline key tools.yaml are invalid: /0 (alpha): set exactly one of digest and definition. Drift cannot be checked until the baseline is fixed.`,
    );

    await k.core.deleteNamespacedConfigMap({ name: 'pinned-baseline', namespace: ns.name });
    await waitFor('the missing ConfigMap to be reported', async () => {
      const message = conditionOf(await k.get('pinned'), 'Drifted')?.message ?? '';
      return message.startsWith(
        `ConfigMap ${ns.name}/pinned-baseline (spec.tools.approved.configMapRef) does not exist.`,
      );
    });
  });
});

describe('an enforced stdio server with its baseline in a ConfigMap', () => {
  it('gets that baseline in its bridge policy, and none while the baseline is invalid', async () => {
    const approved = [fixtureTool('alpha'), fixtureTool('beta')];
    const baseline = (text: string) => ({
      metadata: { name: 'enforced-baseline', namespace: ns.name },
      data: { 'tools.yaml': text },
    });
    await k.core.createNamespacedConfigMap({
      namespace: ns.name,
      body: baseline(dump(approved.map(({ name, ...definition }) => ({ name, definition })))),
    });
    await k.create('enforced', {
      image: 'example.com/mcp/tools:1',
      transport: 'stdio',
      command: ['mcp-tools'],
      discovery: { enabled: false },
      tools: {
        driftPolicy: 'Enforce',
        approved: { configMapRef: { name: 'enforced-baseline' } },
      },
    });
    const policy = async () => {
      const configMap = await k.core.readNamespacedConfigMap({
        name: 'enforced-policy',
        namespace: ns.name,
      });
      return JSON.parse(configMap.data?.['policy.json'] ?? '') as unknown;
    };
    const expected = { approved: approved.map((t) => ({ name: t.name, digest: toolDigest(t) })) };
    await waitFor(
      'the policy to carry the baseline',
      async () =>
        JSON.stringify(await policy().catch(() => undefined)) === JSON.stringify(expected),
    );

    await k.core.replaceNamespacedConfigMap({
      name: 'enforced-baseline',
      namespace: ns.name,
      body: baseline('not: a list'),
    });
    await waitFor(
      'the policy to approve nothing',
      async () => JSON.stringify(await policy()) === JSON.stringify({ approved: [] }),
    );
    await waitForCondition(k, 'enforced', 'Drifted', 'Unknown', 'BaselineInvalid');
  });
});
