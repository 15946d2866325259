/**
 * The real promtool (built from the Prometheus Go module by test/cluster/build.ts) and the
 * chart's monitoring objects as `helm template` renders them with monitoring on.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { ensureBinaries } from '../cluster/build.ts';
import type { Helm } from '../charts/helm.ts';
import { only } from '../charts/helm.ts';

export const MONITORING_APIS = [
  'monitoring.coreos.com/v1/PrometheusRule',
  'monitoring.coreos.com/v1/PodMonitor',
  'monitoring.coreos.com/v1/ServiceMonitor',
];

/** The rule file the chart's PrometheusRule holds (its spec is the rule file format). */
export interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface Monitoring {
  rules: RuleFile;
  /** The dashboard JSON as the ConfigMap carries it. */
  dashboard: string;
}

/**
 * Renders the chart with rules and dashboard on; `ruleValues` go under `metrics.prometheusRule`.
 * The rules select the operator by its release's metrics Service and namespace (`release`
 * `ops` in `mcp-system` unless given), as the chart's ServiceMonitor labels it.
 */
export async function renderMonitoring(
  helm: Helm,
  ruleValues: Record<string, unknown> = {},
  { release = 'ops', namespace = 'mcp-system' } = {},
): Promise<Monitoring> {
  const objects = await helm.template(
    {
      metrics: {
        prometheusRule: { enabled: true, ...ruleValues },
        dashboard: { enabled: true },
      },
    },
    { release, namespace, apiVersions: MONITORING_APIS },
  );
  const rule = only(objects, 'PrometheusRule') as unknown as {
    metadata: { name: string };
    spec: RuleFile;
  };
  const dashboard = only(objects, 'ConfigMap', `${rule.metadata.name}-dashboard`) as unknown as {
    data: Record<string, string>;
  };
  return { rules: rule.spec, dashboard: dashboard.data['mcp-operator.json'] ?? '' };
}

export interface PromtoolResult {
  code: number;
  output: string;
}

export class Promtool {
  readonly #binary: string;
  readonly #dir: string;

  private constructor(binary: string, dir: string) {
    this.#binary = binary;
    this.#dir = dir;
  }

  static async create(): Promise<Promtool> {
    const { promtool } = await ensureBinaries(['promtool']);
    return new Promtool(promtool, await mkdtemp(join(tmpdir(), 'mcp-operator-promtool-')));
  }

  async close(): Promise<void> {
    await rm(this.#dir, { recursive: true, force: true });
  }

  /** Writes `files` (YAML from objects) into the working directory, then runs promtool there. */
  async run(args: readonly string[], files: Record<string, unknown> = {}): Promise<PromtoolResult> {
    for (const [name, content] of Object.entries(files)) {
      await writeFile(join(this.#dir, name), dump(content, { lineWidth: -1 }));
    }
    const child = spawn(this.#binary, args, { cwd: this.#dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve({ code: code ?? 1, output }));
    });
  }
}
