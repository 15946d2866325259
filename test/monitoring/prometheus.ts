/**
 * The real Prometheus (built from its Go module by test/cluster/build.ts) as a local process: its
 * own temporary directory, a free loopback port, stopped with the harness's processes. It scrapes
 * static targets labelled as the chart's ServiceMonitor and PodMonitor label theirs, and evaluates
 * the chart's rules, so what it computes is what a cluster's Prometheus would.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { ensureBinaries } from '../cluster/build.ts';
import { freePorts } from '../support/ports.ts';
import { waitFor } from '../support/wait.ts';
import {
  type ManagedProcess,
  forgetDirectory,
  removeOnExit,
  startProcess,
  stopProcess,
} from '../cluster/processes.ts';
import type { RuleFile } from './promtool.ts';

/** One scraped process (its `/metrics`): `host:port` and the labels a Kubernetes scrape gives it. */
export interface ScrapeTarget {
  address: string;
  labels: Record<string, string>;
}

export interface PrometheusOptions {
  /**
   * Scrape jobs by job name. The chart's ServiceMonitor scrapes the operator as job
   * `<release>-mcp-operator-metrics` with the target's `namespace` and `pod`; its PodMonitor
   * scrapes bridges with `namespace`, `pod` and `mcpserver`.
   */
  jobs: Record<string, ScrapeTarget[]>;
  rules?: RuleFile;
  /** Scrape and rule evaluation interval; short, so that tests wait seconds, not minutes. */
  interval?: string;
}

export interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  value: string;
}

interface ApiResponse<T> {
  status: string;
  data: T;
  error?: string;
}

export class Prometheus {
  readonly url: string;
  readonly #process: ManagedProcess;
  readonly #dir: string;

  private constructor(url: string, process: ManagedProcess, dir: string) {
    this.url = url;
    this.#process = process;
    this.#dir = dir;
  }

  /** Starts Prometheus and resolves once it is ready (its config and rules loaded). */
  static async start(o: PrometheusOptions): Promise<Prometheus> {
    const { prometheus } = await ensureBinaries(['prometheus']);
    const dir = await mkdtemp(join(tmpdir(), 'mcp-operator-prometheus-'));
    removeOnExit(dir);
    const interval = o.interval ?? '1s';
    const config = {
      global: { scrape_interval: interval, evaluation_interval: interval },
      ...(o.rules === undefined ? {} : { rule_files: ['rules.yaml'] }),
      scrape_configs: Object.entries(o.jobs).map(([job, targets]) => ({
        job_name: job,
        scrape_timeout: interval,
        // One static config per target, for its own labels.
        static_configs: targets.map((t) => ({ targets: [t.address], labels: t.labels })),
      })),
    };
    await writeFile(join(dir, 'prometheus.yml'), dump(config));
    if (o.rules !== undefined) await writeFile(join(dir, 'rules.yaml'), dump(o.rules));
    const { web } = await freePorts(['web']);
    const process_ = startProcess({
      name: 'prometheus',
      command: prometheus,
      args: [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${web}`,
        // The default 5m lookback would keep a removed series in queries for five minutes.
        '--query.lookback-delta=30s',
      ],
      logFile: join(dir, 'prometheus.log'),
      env: { PATH: process.env.PATH },
    });
    const server = new Prometheus(`http://127.0.0.1:${web}`, process_, dir);
    try {
      await waitFor(
        'Prometheus ready',
        async () => ((await fetch(`${server.url}/-/ready`)).ok ? true : undefined),
        { timeoutMs: 60_000 },
      );
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  async #api<T>(path: string): Promise<T> {
    const response = await fetch(`${this.url}/api/v1/${path}`);
    const body = (await response.json()) as ApiResponse<T>;
    if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error}`);
    return body.data;
  }

  /** An instant query's result vector. */
  async query(
    expr: string,
  ): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
    const data = await this.#api<{
      result: { metric: Record<string, string>; value: [number, string] }[];
    }>(`query?query=${encodeURIComponent(expr)}`);
    return data.result;
  }

  /** Pending and firing alerts. */
  async alerts(): Promise<Alert[]> {
    return (await this.#api<{ alerts: Alert[] }>('alerts')).alerts;
  }

  /** Scrape targets with their health, for a failure message. */
  async targets(): Promise<{ scrapeUrl: string; health: string; lastError: string }[]> {
    return (
      await this.#api<{
        activeTargets: { scrapeUrl: string; health: string; lastError: string }[];
      }>('targets')
    ).activeTargets;
  }

  async stop(): Promise<void> {
    await stopProcess(this.#process, 10_000);
    await rm(this.#dir, { recursive: true, force: true });
    forgetDirectory(this.#dir);
  }
}
