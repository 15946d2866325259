/**
 * The controller's Prometheus metrics, on a registry of their own (no module-level state: two
 * managers in one process, as in tests, do not collide). Names follow the Prometheus naming
 * guide: `mcp_operator_` prefix, `_total` counters, base units (seconds).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Lane } from '../kube/queue.ts';

/** Read at scrape time from the running manager. */
export interface GaugeSources {
  /** Keys waiting for a worker, by queue lane. */
  queueDepth: () => Record<Lane, number>;
  /** Objects in the caches, by kind. */
  managedObjects: () => Record<string, number>;
  isLeader: () => boolean;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'result'>;
  readonly reconcileErrors: Counter;
  readonly reconcileDuration: Histogram;
  readonly kubeRequests: Counter<'verb' | 'code' | 'resource'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'mcp_operator_' });
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
  }
}
