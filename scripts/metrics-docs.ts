/**
 * The metrics reference, read from the registries the operator and the bridge build (never from
 * a list kept by hand): docs/metrics.md, written by `npm run docs` and checked by
 * `npm run docs:check`. The alert and dashboard tests check their PromQL against the same
 * catalog, so rules, dashboard, docs and code name the same series.
 */

import type { Registry } from 'prom-client';
import { createMetrics } from '../src/bridge/metrics.ts';
import { ControllerMetrics } from '../src/controller/metrics.ts';
import { ResultStore } from '../src/discovery/results.ts';
import { DiscoveryScheduler } from '../src/discovery/scheduler.ts';

export const METRICS_DOC = 'docs/metrics.md';

export type Exporter = 'operator' | 'bridge';

export interface MetricInfo {
  exporter: Exporter;
  name: string;
  type: string;
  help: string;
  labels: string[];
  /** Node.js process metrics from prom-client's collectDefaultMetrics, not named by us. */
  processDefault: boolean;
}

/**
 * What bounds each label's values. A label without an entry fails the generation: whoever adds
 * one says here why it cannot grow without limit (a tool name, a client's method or a URL could).
 */
export const LABEL_BOUNDS: Record<string, string> = {
  server: 'one value per MCPServer (`namespace/name`)',
  severity: '`breaking`, `widening`, `compatible`, `description-only`',
  level: 'the levels of a finding on model-facing text: `critical`, `warning`, `info`',
  alarm:
    '`true` or `false`: whether the level raises the alarm on that server (spec.tools.textFindings.alarmLevel)',
  result: 'a handful of fixed results',
  code: "the operator's error codes (`MCPOP_…`, [errors.md](errors.md)) and `UNEXPECTED`",
  verb: 'HTTP verbs, and `WATCH`',
  resource: 'the resources the operator reads and writes, with a subresource: `mcpservers/status`',
  kind: 'the kinds the operator caches',
  lane: "the work queue's lanes: `fast`, `normal`",
  method: 'the methods MCP defines; any other is `other`',
  outcome: '`ok`, `error`, `timeout`, `cancelled`, `child_exit`, `refused`',
  reason:
    'the policy reasons (docs/bridge.md); the OAuth refusal reasons (docs/auth.md); `queue_full`, `export_failed` (telemetry)',
  signal: 'the OTLP signals the bridge exports: `traces`, `logs`',
  bound: 'the bridge bounds: `sessions`, `session_bytes`, `bridge_bytes`',
  entry: 'the entry points of the bridge: `http_request`, `child_message`, `watched_file`',
  type: 'Node.js resource types (prom-client)',
  space: 'V8 heap spaces (prom-client)',
  version: 'the one Node.js version of the process (prom-client)',
  major: 'as `version`',
  minor: 'as `version`',
  patch: 'as `version`',
};

/** The operator's registry as its manager fills it: controller, discovery scheduler and results. */
function operatorRegistry(): Registry {
  const controller = new ControllerMetrics();
  controller.watch({
    queueDepth: () => ({ fast: 0, normal: 0 }),
    managedObjects: () => ({}),
    isLeader: () => false,
    codeChanged: () => [],
  });
  new ResultStore(controller.registry);
  new DiscoveryScheduler({
    registry: controller.registry,
    discover: () => Promise.reject(new Error('never run: nothing is scheduled')),
  });
  return controller.registry;
}

const PROCESS_DEFAULTS = /^mcp_(operator|bridge)_(process|nodejs)_/;

async function describeRegistry(exporter: Exporter, registry: Registry): Promise<MetricInfo[]> {
  const described: MetricInfo[] = [];
  for (const { name } of registry.getMetricsAsArray()) {
    const metric = registry.getSingleMetric(name);
    if (metric === undefined) continue;
    const { type, help } = await metric.get();
    // prom-client keeps the declared label names on the instance but leaves them out of its types.
    const labels = [...((metric as unknown as { labelNames?: string[] }).labelNames ?? [])];
    const processDefault = PROCESS_DEFAULTS.test(name);
    described.push({ exporter, name, type: String(type), help, labels, processDefault });
  }
  return described;
}

/** Every metric the operator and the bridge export, in registration order. */
export async function metricCatalog(): Promise<MetricInfo[]> {
  return [
    ...(await describeRegistry('operator', operatorRegistry())),
    ...(await describeRegistry('bridge', createMetrics().registry)),
  ];
}

/**
 * The names a query can use for a metric: a histogram is queried through its `_bucket`, `_sum`
 * and `_count` series, never by its own name.
 */
export function seriesNames(metric: MetricInfo): string[] {
  return metric.type === 'histogram'
    ? ['_bucket', '_sum', '_count'].map((suffix) => metric.name + suffix)
    : [metric.name];
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

function table(metrics: MetricInfo[]): string {
  const rows = metrics.map((m) => {
    const labels = m.labels.map((l) => `\`${l}\``).join(', ') || '—';
    return `| \`${m.name}\` | ${m.type} | ${labels} | ${cell(m.help)} |`;
  });
  return ['| Metric | Type | Labels | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

export function metricsDoc(catalog: MetricInfo[]): string {
  const used = new Set(catalog.flatMap((m) => m.labels));
  const unbounded = [...used].filter((label) => LABEL_BOUNDS[label] === undefined);
  if (unbounded.length > 0) {
    throw new Error(
      `metric labels without a stated bound in LABEL_BOUNDS: ${unbounded.join(', ')}`,
    );
  }
  const section = (exporter: Exporter, processDefault: boolean) =>
    table(catalog.filter((m) => m.exporter === exporter && m.processDefault === processDefault));
  const bounds = [...used]
    .sort()
    .map((label) => `| \`${label}\` | ${cell(LABEL_BOUNDS[label] ?? '')} |`);
  return `<!-- Generated by \`npm run docs\` from the operator's and the bridge's metric registries (scripts/metrics-docs.ts). DO NOT EDIT. -->

# Metrics reference

The operator serves \`/metrics\` on its metrics port (\`metrics.port\`, the \`<fullname>-metrics\`
Service, \`mcp-operator-metrics\` for the release \`mcp-operator\`; \`metrics.serviceMonitor.enabled\` has the Prometheus operator scrape it). Every bridge
serves \`/metrics\` beside its MCP endpoint. Names follow the Prometheus naming guide: counters end
in \`_total\`, durations and times are in seconds (\`_seconds\`, \`_timestamp_seconds\`), and every
label has a bounded set of values (below): no tool name, URL or client-chosen text is a label.
The chart's alerts and dashboard (\`metrics.prometheusRule\`, \`metrics.dashboard\`) use these series.

## Operator

${section('operator', false)}

## Bridge

${section('bridge', false)}

## Labels and their bounds

| Label | Values |
| --- | --- |
${bounds.join('\n')}

## Process metrics

Both processes also export prom-client's Node.js process metrics under their own prefix, with
prom-client's names, except its \`nodejs_active_{handles,requests,resources}_total\`: gauges
with a counter's suffix, left out (each is the sum of the gauge without \`_total\`).

### Operator

${section('operator', true)}

### Bridge

${section('bridge', true)}
`;
}
