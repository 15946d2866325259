/**
 * Rules, dashboard and docs against the code: every series a rule or a panel queries is one the
 * operator or a bridge exports (read from their registries, scripts/metrics-docs.ts), each panel
 * query parses with promtool and returns data when those series exist, every runbook link has its
 * section, and the exported names and labels follow the Prometheus conventions.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type MetricInfo,
  metricCatalog,
  metricsDoc,
  seriesNames,
} from '../../scripts/metrics-docs.ts';
import { DRIFT_SEVERITIES } from '../../src/tool-record.ts';
import { Helm } from '../charts/helm.ts';
import { type Monitoring, Promtool, type RuleFile, renderMonitoring } from './promtool.ts';

const REPO = join(import.meta.dirname, '..', '..');

let helm: Helm;
let promtool: Promtool;
let monitoring: Monitoring;
const catalog = await metricCatalog();
const ours = catalog.filter((m) => !m.processDefault);
beforeAll(async () => {
  helm = await Helm.create();
  promtool = await Promtool.create();
  monitoring = await renderMonitoring(helm, { runbookURL: 'https://docs.example/t.md' });
}, 1_800_000);
afterAll(async () => {
  await helm?.close();
  await promtool?.close();
});

const PROMQL_KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: identifiers left once strings, label matchers,
 * ranges and grouping clauses are gone, other than functions (followed by a parenthesis) and
 * keywords.
 */
function selectedMetrics(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/(?<![\w:])[a-zA-Z_:][\w:]*(?![\w:]|\s*\()/g)]
    .map((m) => m[0])
    .filter((name) => !PROMQL_KEYWORDS.has(name.toLowerCase()));
  return [...new Set(names)];
}

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string; refId: string }[];
}

/** Grafana's interval variables, as Grafana would substitute them for a query. */
function substituted(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m');
}

function panelQueries(dashboard: string): { panel: string; expr: string }[] {
  const { panels } = JSON.parse(dashboard) as { panels: Panel[] };
  return panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ panel: `${p.title} ${t.refId}`, expr: substituted(t.expr) })),
  );
}

const ruleExprs = (rules: RuleFile) => rules.groups.flatMap((g) => g.rules.map((r) => r.expr));

/** One input series for promtool per exported series: every label set to a plausible value. */
function exampleSeries(metric: MetricInfo): { series: string; values: string }[] {
  const labels = metric.labels.map((l) => `${l}="${l === 'server' ? 'team-a/search' : 'x'}"`);
  const target = ['job="j"', 'namespace="team-a"', 'pod="p"', 'mcpserver="search"'];
  const selector = (extra: string[] = []) => `{${[...labels, ...target, ...extra].join(',')}}`;
  if (metric.type === 'histogram') {
    return [
      { series: `${metric.name}_bucket${selector(['le="0.1"'])}`, values: '0+1x30' },
      { series: `${metric.name}_bucket${selector(['le="+Inf"'])}`, values: '0+2x30' },
      { series: `${metric.name}_sum${selector()}`, values: '0+0.1x30' },
      { series: `${metric.name}_count${selector()}`, values: '0+2x30' },
    ];
  }
  return [{ series: `${metric.name}${selector()}`, values: '1+1x30' }];
}

describe('rules and dashboard use the series the code exports', () => {
  const exported = new Set([...catalog.flatMap(seriesNames), 'up']);

  it('every metric a rule selects is exported (or is Prometheus’s own up)', () => {
    const used = ruleExprs(monitoring.rules).flatMap(selectedMetrics);
    expect(used.length).toBeGreaterThan(5);
    expect(used.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('every metric a dashboard panel selects is exported', () => {
    const used = panelQueries(monitoring.dashboard).flatMap((q) => selectedMetrics(q.expr));
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('reads the metric names out of PromQL, not its functions, labels or keywords', () => {
    expect(
      selectedMetrics(
        'sum by (le) (rate(a_bucket{job="x",le=~"1|2"}[5m])) > on (server) group_left b or vector(0) unless c offset 5m',
      ),
    ).toEqual(['a_bucket', 'b', 'c']);
  });

  it('every dashboard query parses with promtool (checked as recording rules)', async () => {
    const queries = panelQueries(monitoring.dashboard);
    const rules = queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: q.expr }));
    const { code, output } = await promtool.run(['check', 'rules', 'dashboard.yaml'], {
      'dashboard.yaml': { groups: [{ name: 'dashboard', rules }] },
    });
    expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(code).toBe(0);
  });

  it('every dashboard query returns data when the exported series exist', async () => {
    const queries = panelQueries(monitoring.dashboard);
    // An alert per query that fires when the query returns anything.
    const rules = queries.map((q, i) => ({
      alert: `Query${i}`,
      expr: `count(${q.expr}) > 0`,
      labels: { panel: q.panel },
    }));
    const { code, output } = await promtool.run(['test', 'rules', 'tests.yaml'], {
      'queries.yaml': { groups: [{ name: 'dashboard', rules }] },
      'tests.yaml': {
        rule_files: ['queries.yaml'],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: ours.flatMap(exampleSeries),
            alert_rule_test: queries.map((q, i) => ({
              eval_time: '20m',
              alertname: `Query${i}`,
              exp_alerts: [{ exp_labels: { panel: q.panel } }],
            })),
          },
        ],
      },
    });
    expect(output).toContain('SUCCESS');
    expect(code).toBe(0);
  });

  it('the dashboard has the panels its users look for', () => {
    const titles = (JSON.parse(monitoring.dashboard) as { panels: Panel[] }).panels.map(
      (p) => p.title,
    );
    expect(titles).toEqual(
      expect.arrayContaining([
        'Servers by drift state',
        'Discovery latency',
        'Discovery failures',
        'Bridge sessions',
        'Bridge requests',
        'Bridge latency',
        'Work queue depth',
        'Reconcile rate',
      ]),
    );
  });
});

describe('runbooks', () => {
  it('every alert links to a section of docs/troubleshooting.md that exists', async () => {
    const doc = await readFile(join(REPO, 'docs', 'troubleshooting.md'), 'utf8');
    const anchors = new Set(
      [...doc.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replaceAll(' ', '-'),
      ),
    );
    const alerts = monitoring.rules.groups.flatMap((g) => g.rules);
    // One drift alert per severity, one findings alert per level (critical, warning, info: a
    // server's alarm level decides which alarm), then code changed, discovery, saturation,
    // audit drops, reconcile errors and absence.
    expect(alerts.length).toBe(DRIFT_SEVERITIES.length + 3 + 6);
    for (const alert of alerts) {
      const anchor = alert.annotations?.runbook_url?.split('#')[1];
      expect(anchor, alert.alert).toBe(alert.alert?.toLowerCase());
      expect(anchors.has(anchor ?? ''), `#${anchor} in troubleshooting.md`).toBe(true);
    }
  });
});

describe('metric hygiene', () => {
  it('exports metrics of its own from both processes', () => {
    expect(ours.filter((m) => m.exporter === 'operator').length).toBeGreaterThan(10);
    expect(ours.filter((m) => m.exporter === 'bridge').length).toBeGreaterThan(5);
  });

  it.each(ours.map((m) => [m.name, m] as const))('%s follows the naming guide', (_name, m) => {
    expect(m.name).toMatch(new RegExp(`^mcp_${m.exporter}_[a-z0-9]+(_[a-z0-9]+)*$`));
    // Counters and only counters end in _total.
    expect(m.name.endsWith('_total')).toBe(m.type === 'counter');
    // Base units: seconds and bytes, never their multiples or fractions.
    expect(m.name).not.toMatch(
      /_(ms|milliseconds|minutes|hours|days|kb|mb|kilobytes|megabytes|percent)(_|$)/,
    );
    if (m.type === 'histogram') expect(m.name).toMatch(/_seconds$/);
    if (/timestamp/.test(m.name)) expect(m.name).toMatch(/_timestamp_seconds$/);
  });

  it.each(catalog.map((m) => [m.name, m] as const))(
    '%s ends in _total only if it is a counter (Node.js process metrics too)',
    (_name, m) => {
      expect(m.name.endsWith('_total')).toBe(m.type === 'counter');
    },
  );

  it('no name is exported twice', () => {
    const names = catalog.map((m) => m.name);
    expect(names.length).toBe(new Set(names).size);
  });

  it('no tool name, URL or client text is a label', () => {
    const labels = new Set(ours.flatMap((m) => m.labels));
    for (const unbounded of ['tool', 'name', 'url', 'endpoint', 'session', 'client', 'message']) {
      expect(labels.has(unbounded), unbounded).toBe(false);
    }
  });

  it('refuses to document a label whose bound nobody stated', () => {
    const tool: MetricInfo = {
      exporter: 'bridge',
      name: 'mcp_bridge_tool_calls_total',
      type: 'counter',
      help: 'Calls by tool.',
      labels: ['tool'],
      processDefault: false,
    };
    expect(() => metricsDoc([...catalog, tool])).toThrow(
      'metric labels without a stated bound in LABEL_BOUNDS: tool',
    );
  });
});
