/**
 * The controller's Prometheus metrics, on a registry of their own (no module-level state: two
 * managers in one process, as in tests, do not collide). Names follow the Prometheus naming
 * guide: `mcp_operator_` prefix, `_total` counters, base units (seconds).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from '../process-metrics.ts';
import type { Lane } from '../kube/queue.ts';

/** Read at scrape time from the running manager. */
export interface GaugeSources {
  /** Keys waiting for a worker, by queue lane. */
  queueDepth: () => Record<Lane, number>;
  /** Objects in the caches, by kind. */
  managedObjects: () => Record<string, number>;
  isLeader: () => boolean;
  /**
   * The servers (`namespace/name`) whose status says the same spec now runs different code
   * (status.provenance.codeChanged), from the cache.
   */
  codeChanged: () => Iterable<string>;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'result'>;
  readonly reconcileErrors: Counter;
  readonly reconcileDuration: Histogram;
  readonly kubeRequests: Counter<'verb' | 'code' | 'resource'>;

  constructor() {
    const registers = [this.registry];
    collectProcessMetrics(this.registry, 'mcp_operator_');
    this.reconciles = new Counter({
      name: 'mcp_operator_reconcile_total',
      help: 'Reconcile passes, by result (success, error, requeue).',
      labelNames: ['result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'mcp_operator_reconcile_errors_total',
      help: 'Reconcile passes that failed and were scheduled for a retry.',
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'mcp_operator_reconcile_duration_seconds',
      help: 'Time of one reconcile pass.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.kubeRequests = new Counter({
      name: 'mcp_operator_kube_requests_total',
      help: 'Requests to the Kubernetes API server, by verb (WATCH for watch streams), HTTP code and resource (with its subresource: mcpservers/status).',
      labelNames: ['verb', 'code', 'resource'],
      registers,
    });
  }

  watch(sources: GaugeSources): void {
    const registers = [this.registry];
    new Gauge({
      name: 'mcp_operator_workqueue_depth',
      help: 'MCPServer keys waiting for a worker, by lane: fast (a rollout progressed) or normal (a change to act on).',
      labelNames: ['lane'],
      registers,
      collect() {
        for (const [lane, depth] of Object.entries(sources.queueDepth())) this.set({ lane }, depth);
      },
    });
    new Gauge({
      name: 'mcp_operator_managed_objects',
      help: 'Objects in the controller caches, by kind.',
      labelNames: ['kind'],
      registers,
      collect() {
        for (const [kind, count] of Object.entries(sources.managedObjects())) {
          this.set({ kind }, count);
        }
      },
    });
    new Gauge({
      name: 'mcp_operator_leader',
      help: '1 while this instance holds the leader Lease (or runs without leader election).',
      registers,
      collect() {
        this.set(sources.isLeader() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'mcp_operator_server_code_changed',
      help: '1 while the same spec runs different code (status.provenance.codeChanged: a moved tag, a new release of an unpinned package, another serverInfo), until the spec changes; absent otherwise.',
      labelNames: ['server'],
      registers,
      collect() {
        // Set afresh at each scrape: a server whose code change was approved or deleted leaves.
        this.reset();
        for (const server of sources.codeChanged()) this.set({ server }, 1);
      },
    });
  }
}
