/**
 * The chart's alert rules, run by the real promtool: `check rules` accepts them, and `test rules`
 * shows each alert firing and resolving on series shaped like the operator's and the bridges'
 * (names and labels checked against their registries in metric-names.test.ts). Times are
 * minutes from the start of each test; the defaults under test are those in values.yaml.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Helm } from '../charts/helm.ts';
import { Promtool, type RuleFile, renderMonitoring } from './promtool.ts';

let helm: Helm;
let promtool: Promtool;
beforeAll(async () => {
  helm = await Helm.create();
  promtool = await Promtool.create();
}, 1_800_000);
afterAll(async () => {
  await helm?.close();
  await promtool?.close();
});

/** How the chart's ServiceMonitor labels the operator's series (release `ops` in mcp-system). */
const OPERATOR = 'job="ops-mcp-operator-metrics",namespace="mcp-system",pod="ops-mcp-operator-0"';
/** How the chart's PodMonitor labels a bridge's series. */
const BRIDGE = 'namespace="team-a",mcpserver="search",pod="search-6d9f-x2"';
const BRIDGE_LABELS = { namespace: 'team-a', mcpserver: 'search', pod: 'search-6d9f-x2' };

interface Series {
  series: string;
  values: string;
}

interface AlertCheck {
  eval_time: string;
  alertname: string;
  exp_alerts: { exp_labels: Record<string, string>; exp_annotations?: Record<string, string> }[];
}

/** Annotations are checked in a test of their own; here only firing, resolving and labels. */
function withoutAnnotations(rules: RuleFile): RuleFile {
  return {
    groups: rules.groups.map((group) => ({
      ...group,
      rules: group.rules.map((rule) => ({ ...rule, annotations: {} })),
    })),
  };
}

async function testRules(rules: RuleFile, input: Series[], checks: AlertCheck[]) {
  return promtool.run(['test', 'rules', 'tests.yaml'], {
    'rules.yaml': rules,
    'tests.yaml': {
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [{ interval: '1m', input_series: input, alert_rule_test: checks }],
    },
  });
}

const none = (alertname: string, at: number): AlertCheck => ({
  eval_time: `${at}m`,
  alertname,
  exp_alerts: [],
});
const firing = (
  alertname: string,
  at: number,
  ...labels: Record<string, string>[]
): AlertCheck => ({
  eval_time: `${at}m`,
  alertname,
  exp_alerts: labels.map((exp_labels) => ({ exp_labels })),
});

async function expectPasses(result: Promise<{ code: number; output: string }>) {
  const { code, output } = await result;
  expect(output).toContain('SUCCESS');
  expect(code).toBe(0);
}

describe('the chart’s alert rules', () => {
  it('pass promtool check rules', async () => {
    const { rules } = await renderMonitoring(helm, { runbookURL: 'https://docs.example/t.md' });
    const { code, output } = await promtool.run(['check', 'rules', 'rules.yaml'], {
      'rules.yaml': rules,
    });
    expect(output).toMatch(/SUCCESS: 13 rules found/);
    expect(code).toBe(0);
  });

  it('MCPServerToolsDrifted fires after 15 minutes of drift, graded by it, and resolves', async () => {
    const { rules } = await renderMonitoring(helm);
    const search = { namespace: 'team-a', mcpserver: 'search', server: 'team-a/search' };
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          // Drifts (breaking) from minute 0 to 40, then discovery sees it approved.
          {
            series: `mcp_operator_server_drift{${OPERATOR},server="team-a/search",severity="breaking"}`,
            values: '1x40 stale',
          },
          // A description-only drift that is approved after 10 minutes never pages.
          {
            series: `mcp_operator_server_drift{${OPERATOR},server="team-b/notes",severity="description-only"}`,
            values: '1x10 stale',
          },
        ],
        [
          none('MCPServerToolsDrifted', 14),
          firing('MCPServerToolsDrifted', 20, {
            ...search,
            severity: 'critical',
            drift: 'breaking',
          }),
          firing('MCPServerToolsDrifted', 40, {
            ...search,
            severity: 'critical',
            drift: 'breaking',
          }),
          none('MCPServerToolsDrifted', 42),
        ],
      ),
    );
  });

  it('MCPServerToolsDrifted takes its delay and severities from the values', async () => {
    const { rules } = await renderMonitoring(helm, {
      toolsDrifted: { for: '5m', severity: { descriptionOnly: 'critical', widening: 'info' } },
    });
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          {
            series: `mcp_operator_server_drift{${OPERATOR},server="team-b/notes",severity="description-only"}`,
            values: '1x10 stale',
          },
          {
            series: `mcp_operator_server_drift{${OPERATOR},server="team-c/files",severity="widening"}`,
            values: '1x10 stale',
          },
        ],
        [
          none('MCPServerToolsDrifted', 4),
          firing(
            'MCPServerToolsDrifted',
            6,
            {
              namespace: 'team-b',
              mcpserver: 'notes',
              server: 'team-b/notes',
              severity: 'critical',
              drift: 'description-only',
            },
            {
              namespace: 'team-c',
              mcpserver: 'files',
              server: 'team-c/files',
              severity: 'info',
              drift: 'widening',
            },
          ),
        ],
      ),
    );
  });

  it('MCPServerTextFindings fires at once on findings at or above the server alarm level, graded by level', async () => {
    const { rules } = await renderMonitoring(helm);
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          // A critical finding from minute 0 to 10, then the server is fixed.
          {
            series: `mcp_operator_server_text_findings{${OPERATOR},server="team-a/search",level="critical",alarm="true"}`,
            values: '2x10 stale',
          },
          // Below the server's alarm level (info by default, or warning on a server set to
          // critical): shown, never alerted on.
          {
            series: `mcp_operator_server_text_findings{${OPERATOR},server="team-b/notes",level="info",alarm="false"}`,
            values: '3x20',
          },
          {
            series: `mcp_operator_server_text_findings{${OPERATOR},server="team-b/long",level="warning",alarm="false"}`,
            values: '1x20',
          },
          // A server whose alarm level is info: its info findings alert, at info severity.
          {
            series: `mcp_operator_server_text_findings{${OPERATOR},server="team-c/wiki",level="info",alarm="true"}`,
            values: '_x11 1x10',
          },
        ],
        [
          firing('MCPServerTextFindings', 1, {
            namespace: 'team-a',
            mcpserver: 'search',
            server: 'team-a/search',
            severity: 'critical',
            level: 'critical',
          }),
          firing('MCPServerTextFindings', 12, {
            namespace: 'team-c',
            mcpserver: 'wiki',
            server: 'team-c/wiki',
            severity: 'info',
            level: 'info',
          }),
        ],
      ),
    );
  });

  it('MCPServerDiscoveryFailing fires after three intervals without a success, and resolves', async () => {
    const { rules } = await renderMonitoring(helm);
    // promtool's clock starts at Unix time 0: a run of failures that began at minute 10 has
    // failing_since 600. The interval is 5 minutes, so three of them end at minute 25.
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          {
            series: `mcp_operator_discovery_interval_seconds{${OPERATOR},server="team-a/search"}`,
            values: '300x60',
          },
          {
            series: `mcp_operator_discovery_failing_since_timestamp_seconds{${OPERATOR},server="team-a/search"}`,
            values: '_x10 600x30 stale',
          },
          // A healthy server: its interval, and no failing-since.
          {
            series: `mcp_operator_discovery_interval_seconds{${OPERATOR},server="team-b/notes"}`,
            values: '60x60',
          },
        ],
        [
          none('MCPServerDiscoveryFailing', 24),
          firing('MCPServerDiscoveryFailing', 26, {
            namespace: 'team-a',
            mcpserver: 'search',
            server: 'team-a/search',
            severity: 'warning',
          }),
          none('MCPServerDiscoveryFailing', 42),
        ],
      ),
    );
  });

  it('MCPServerCodeChanged fires while a server runs other code under the same spec, and resolves', async () => {
    const { rules } = await renderMonitoring(helm);
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          // Its tag moved at minute 5; approved again (the spec changed) at minute 30.
          {
            series: `mcp_operator_server_code_changed{${OPERATOR},server="team-a/search"}`,
            values: '_x5 1x25 stale',
          },
          // The same server as a standby replica reports it from its cache: still one alert.
          {
            series: `mcp_operator_server_code_changed{job="ops-mcp-operator-metrics",namespace="mcp-system",pod="ops-mcp-operator-1",server="team-a/search"}`,
            values: '_x5 1x25 stale',
          },
          // An operator of another release says nothing about this one's servers.
          {
            series: `mcp_operator_server_code_changed{job="other-mcp-operator-metrics",namespace="mcp-system",pod="x",server="team-b/notes"}`,
            values: '1x40',
          },
        ],
        [
          none('MCPServerCodeChanged', 4),
          firing('MCPServerCodeChanged', 5, {
            namespace: 'team-a',
            mcpserver: 'search',
            server: 'team-a/search',
            severity: 'warning',
          }),
          firing('MCPServerCodeChanged', 29, {
            namespace: 'team-a',
            mcpserver: 'search',
            server: 'team-a/search',
            severity: 'warning',
          }),
          none('MCPServerCodeChanged', 31),
        ],
      ),
    );
  });

  it('MCPServerCodeChanged takes its delay and severity from the values', async () => {
    const { rules } = await renderMonitoring(helm, {
      codeChanged: { for: '10m', severity: 'critical' },
    });
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          {
            series: `mcp_operator_server_code_changed{${OPERATOR},server="team-a/search"}`,
            values: '1x30',
          },
        ],
        [
          none('MCPServerCodeChanged', 9),
          firing('MCPServerCodeChanged', 11, {
            namespace: 'team-a',
            mcpserver: 'search',
            server: 'team-a/search',
            severity: 'critical',
          }),
        ],
      ),
    );
  });

  it('MCPBridgeSaturated fires on sessions near the maximum, and on refusals, and resolves', async () => {
    const { rules } = await renderMonitoring(helm);
    const other = 'namespace="team-b",mcpserver="notes",pod="notes-7c4b-k9"';
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          // 60 of 64 sessions (94 %) for 30 minutes, then 10.
          { series: `mcp_bridge_sessions{${BRIDGE}}`, values: '60x30 10x30' },
          { series: `mcp_bridge_sessions_max{${BRIDGE}}`, values: '64x60' },
          // Half full, but refusing requests from minute 10 to 30.
          { series: `mcp_bridge_sessions{${other}}`, values: '32x60' },
          { series: `mcp_bridge_sessions_max{${other}}`, values: '64x60' },
          {
            series: `mcp_bridge_refusals_total{${other},bound="sessions"}`,
            values: '0x10 1+1x20 21x30',
          },
        ],
        [
          none('MCPBridgeSaturated', 9),
          firing('MCPBridgeSaturated', 12, { ...BRIDGE_LABELS, severity: 'warning' }),
          firing(
            'MCPBridgeSaturated',
            25,
            { ...BRIDGE_LABELS, severity: 'warning' },
            { namespace: 'team-b', mcpserver: 'notes', pod: 'notes-7c4b-k9', severity: 'warning' },
          ),
          none('MCPBridgeSaturated', 50),
        ],
      ),
    );
  });

  it('MCPBridgeAuditEventsDropped fires while events are dropped, and resolves', async () => {
    const { rules } = await renderMonitoring(helm);
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          // Five events dropped a minute from minute 10 to 20, then none.
          {
            series: `mcp_bridge_audit_events_dropped_total{${BRIDGE}}`,
            values: '0x10 5+5x10 55x40',
          },
        ],
        [
          none('MCPBridgeAuditEventsDropped', 9),
          firing('MCPBridgeAuditEventsDropped', 15, { ...BRIDGE_LABELS, severity: 'warning' }),
          none('MCPBridgeAuditEventsDropped', 40),
        ],
      ),
    );
  });

  it('MCPOperatorReconcileErrors fires on sustained failures, and resolves', async () => {
    const { rules } = await renderMonitoring(helm);
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          // Two failed passes a minute for 30 minutes (30 in 15 minutes), then none.
          { series: `mcp_operator_reconcile_errors_total{${OPERATOR}}`, values: '0+2x30 60x40' },
        ],
        [
          none('MCPOperatorReconcileErrors', 15),
          firing('MCPOperatorReconcileErrors', 28, {
            job: 'ops-mcp-operator-metrics',
            namespace: 'mcp-system',
            severity: 'warning',
          }),
          none('MCPOperatorReconcileErrors', 65),
        ],
      ),
    );
  });

  it('MCPOperatorAbsent fires when no operator is up for 10 minutes, and resolves', async () => {
    const { rules } = await renderMonitoring(helm);
    const absent = { namespace: 'mcp-system', severity: 'critical' };
    await expectPasses(
      testRules(
        withoutAnnotations(rules),
        [
          // Up for 10 minutes, gone (pod deleted) until 30, back, then scraped but down (up 0).
          { series: `up{${OPERATOR}}`, values: '1x10 stale _x19 1x10 0x20' },
        ],
        [
          none('MCPOperatorAbsent', 10),
          none('MCPOperatorAbsent', 20),
          firing('MCPOperatorAbsent', 22, absent),
          none('MCPOperatorAbsent', 35),
          firing('MCPOperatorAbsent', 52, absent),
        ],
      ),
    );
  });

  it('annotate with the server, the delay and the runbook section', async () => {
    const { rules } = await renderMonitoring(helm, { runbookURL: 'https://docs.example/t.md' });
    await expectPasses(
      testRules(
        rules,
        [
          {
            series: `mcp_operator_server_drift{${OPERATOR},server="team-a/search",severity="description-only"}`,
            values: '1x20',
          },
        ],
        [
          {
            eval_time: '16m',
            alertname: 'MCPServerToolsDrifted',
            exp_alerts: [
              {
                exp_labels: {
                  namespace: 'team-a',
                  mcpserver: 'search',
                  server: 'team-a/search',
                  severity: 'warning',
                  drift: 'description-only',
                },
                exp_annotations: {
                  summary:
                    'MCPServer team-a/search lists tools that differ from its approved baseline (description-only).',
                  description:
                    'team-a/search has drifted (description-only) for more than 15m; its status.drift and `mcp-operator diff` show what changed.',
                  runbook_url: 'https://docs.example/t.md#mcpservertoolsdrifted',
                },
              },
            ],
          },
        ],
      ),
    );
  });
});
