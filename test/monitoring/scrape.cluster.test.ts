/**
 * A real scrape: the operator (`node src/cli.ts controller`, a local process against the test
 * control plane) discovers a `url` MCPServer on 127.0.0.1, the real Prometheus scrapes it as the
 * chart's ServiceMonitor would and evaluates the chart's rules. When the server's tools change,
 * MCPServerToolsDrifted fires for that server; approving the new tools resolves it. What the
 * live operator exports is also checked against the catalog docs/metrics.md is generated from.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { metricCatalog, seriesNames } from '../../scripts/metrics-docs.ts';
import { installCrd } from '../api/install-crd.ts';
import { OperatorProcess } from '../support/operator.ts';
import { Helm } from '../charts/helm.ts';
import { kubeConfig, useNamespace, waitFor } from '../cluster/testing.ts';
import { cluster } from '../controller/operator.ts';
import { requestDiscovery, waitForCondition } from '../discovery/operator.ts';
import { type ToolFixture, fixtureTool, startModern, type Running } from '../discovery/servers.ts';
import { type Alert, Prometheus } from './prometheus.ts';
import { renderMonitoring } from './promtool.ts';

const kc = kubeConfig();
const ns = useNamespace('scrape', kc);
const k = cluster(kc, () => ns.name);
/** As the chart's ServiceMonitor labels the operator of release `ops` in `mcp-system`. */
const OPERATOR_JOB = 'ops-mcp-operator-metrics';

let dir: string;
let operator: OperatorProcess;
let prometheus: Prometheus;
let server: Running;
let tools: ToolFixture[] = [fixtureTool('search')];

beforeAll(async () => {
  await installCrd(kc);
  dir = await mkdtemp(join(tmpdir(), 'mcp-operator-scrape-'));
  server = await startModern(() => tools);
  operator = await OperatorProcess.start({
    dir,
    name: 'operator',
    args: [`--namespaces=${ns.name}`, '--leader-elect=false'],
    kubeconfig: { path: inject('kubeconfig') },
    namespace: 'mcp-system',
  });
  const metrics = new URL(await operator.url());
  const helm = await Helm.create({ binary: inject('helm') });
  // Short delays, so that the test waits seconds: the rules are otherwise the chart's own.
  const { rules } = await renderMonitoring(helm, { toolsDrifted: { for: '2s' } }).finally(() =>
    helm.close(),
  );
  prometheus = await Prometheus.start({
    jobs: {
      [OPERATOR_JOB]: [
        { address: metrics.host, labels: { namespace: 'mcp-system', pod: 'ops-mcp-operator-0' } },
      ],
    },
    rules,
  });
}, 1_800_000);

afterAll(async () => {
  await prometheus?.stop();
  await operator?.stop();
  await server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const drifted = (name: string) => (alerts: Alert[]) =>
  alerts.find(
    (a) =>
      a.labels.alertname === 'MCPServerToolsDrifted' &&
      a.labels.namespace === ns.name &&
      a.labels.mcpserver === name,
  );

describe('Prometheus scraping the operator', () => {
  it('fires MCPServerToolsDrifted when a server’s tools change, and resolves it on approval', async () => {
    const approve = (list: ToolFixture[]) => ({
      approved: { tools: list.map(({ name, ...definition }) => ({ name, definition })) },
    });
    await k.create('search', { url: server.url, tools: approve(tools) });
    await waitForCondition(k, 'search', 'Drifted', 'False', undefined, 60_000);

    // What an image upgrade does to a server: the same tool, a different input schema.
    tools = [fixtureTool('search', { inputSchema: { type: 'object' } })];
    await requestDiscovery(k, 'search', 'after-upgrade');
    await waitForCondition(k, 'search', 'Drifted', 'True', undefined, 60_000);

    const alert = await waitFor(
      'MCPServerToolsDrifted firing',
      async () => {
        const found = drifted('search')(await prometheus.alerts());
        return found?.state === 'firing' ? found : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(alert.labels).toMatchObject({
      namespace: ns.name,
      mcpserver: 'search',
      server: `${ns.name}/search`,
      drift: 'breaking',
      severity: 'critical',
    });

    await k.patchSpec('search', { tools: approve(tools) });
    await requestDiscovery(k, 'search', 'after-approval');
    await waitForCondition(k, 'search', 'Drifted', 'False', undefined, 60_000);
    await waitFor(
      'MCPServerToolsDrifted resolved',
      async () => (drifted('search')(await prometheus.alerts()) === undefined ? true : undefined),
      { timeoutMs: 60_000 },
    );
  });

  it('every series the live operator exports is in the metrics catalog', async () => {
    const catalog = new Set((await metricCatalog()).flatMap(seriesNames));
    // Until a scrape after the first discovery, the per-server series are not there yet.
    const exported = await waitFor(
      'the per-server series in Prometheus',
      async () => {
        const result = await prometheus.query(`count by (__name__) ({job="${OPERATOR_JOB}"})`);
        const names = result
          .map((r) => r.metric.__name__ ?? '')
          .filter((name) => !name.startsWith('scrape_') && name !== 'up');
        return names.includes('mcp_operator_server_tools') ? names : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(exported.filter((name) => !catalog.has(name))).toEqual([]);
  });
});
