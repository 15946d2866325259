/**
 * Prometheus metrics of the bridge, on a registry of its own (never prom-client's global one,
 * so two bridges in one test process do not collide).
 */

import { Counter, Gauge, Registry } from 'prom-client';
import { collectProcessMetrics } from '../process-metrics.ts';
import { RequestTallies } from './request-tallies.ts';
import type { Outcome } from './identity.ts';

/**
 * Methods are labels only when MCP defines them: a client can send any method name, and an
 * unbounded label set would let it grow the metrics without limit.
 */
const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'subscriptions/listen',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
]);

export const methodLabel = (method: string): string =>
  KNOWN_METHODS.has(method) ? method : 'other';

/** The bounds whose refusals are counted: a fixed set, so the label stays small. */
export type RefusalBound = 'sessions' | 'session_bytes' | 'bridge_bytes';

export interface BridgeMetrics {
  registry: Registry;
  childRestarts: Counter;
  policyDenials: Counter<'reason'>;
  /** Requests refused because a bound of the bridge was reached, by bound. */
  refusals: Counter<'bound'>;
  /** Requests refused by the OAuth resource server, by reason. */
  oauthRefusals: Counter<'reason'>;
  /** Throws the entry guard caught (entry-guard.ts), by entry point. */
  entryFailures: Counter<'entry'>;
  /** Audit events lost: the queue to stdout was full, or stdout failed (audit/sink.ts). */
  auditDropped: Counter;
  /** Spans and audit log records not exported over OTLP, by signal and reason (audit/telemetry.ts). */
  telemetryDropped: Counter<'signal' | 'reason'>;
  /** Sets the functions the live gauges read when scraped. */
  observe(sources: GaugeSources): void;
  /** Sets what the change feed gauges read (change-feed.ts). */
  observeChanges(feed: { generation: () => number; waiting: () => number }): void;
  requestDone(method: string, outcome: Outcome, seconds: number): void;
}

interface GaugeSources {
  sessions: () => number;
  /** The configured bound (--max-sessions). */
  maxSessions: () => number;
  children: () => number;
}

export function createMetrics(): BridgeMetrics {
  const registry = new Registry();
  collectProcessMetrics(registry, 'mcp_bridge_');
  let sources: GaugeSources = { sessions: () => 0, maxSessions: () => 0, children: () => 0 };
  new Gauge({
    name: 'mcp_bridge_sessions',
    help: 'Open MCP sessions.',
    registers: [registry],
    collect() {
      this.set(sources.sessions());
    },
  });
  new Gauge({
    name: 'mcp_bridge_sessions_max',
    help: 'The most MCP sessions this bridge opens (--max-sessions); new ones are refused beyond it.',
    registers: [registry],
    collect() {
      this.set(sources.maxSessions());
    },
  });
  new Gauge({
    name: 'mcp_bridge_children',
    help: 'Running MCP server processes, warm pool included.',
    registers: [registry],
    collect() {
      this.set(sources.children());
    },
  });
  let feed = { generation: () => 0, waiting: () => 0 };
  new Gauge({
    name: 'mcp_bridge_change_generation',
    help: "Changes the bridge has seen since it started (a child's tools/list_changed, a tools/list page, serverInfo or npx/uvx package version unlike the last); the operator long-polls it to discover at once.",
    registers: [registry],
    collect() {
      this.set(feed.generation());
    },
  });
  new Gauge({
    name: 'mcp_bridge_change_feed_waiting',
    help: 'Long-polls of the change feed held open: 1 while the operator watches this bridge.',
    registers: [registry],
    collect() {
      this.set(feed.waiting());
    },
  });
  const requests = new RequestTallies(
    registry,
    {
      name: 'mcp_bridge_requests_total',
      help: 'JSON-RPC requests handled, by method and outcome (ok, error, timeout, cancelled, child_exit, refused).',
    },
    {
      name: 'mcp_bridge_request_duration_seconds',
      help: 'Time from a request reaching the bridge to its answer, by method.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    },
  );
  const childRestarts = new Counter({
    name: 'mcp_bridge_child_restarts_total',
    help: 'MCP server processes that ended while a session was using them.',
    registers: [registry],
  });
  const policyDenials = new Counter({
    name: 'mcp_bridge_policy_denials_total',
    help: 'tools/call, prompts/get and resources/read requests refused by the policy, by reason.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'mcp_bridge_refusals_total',
    help: 'Requests refused because a bound of the bridge was reached, by bound (sessions: --max-sessions; session_bytes: what one session has waiting for its child, 429; bridge_bytes: what all sessions have, 503).',
    labelNames: ['bound'] as const,
    registers: [registry],
  });
  const oauthRefusals = new Counter({
    name: 'mcp_bridge_oauth_refusals_total',
    help: 'Requests refused by the OAuth 2.1 resource server, by reason (no_token: 401 without a token; invalid_request, invalid_token: 400 and 401 as RFC 6750 names them; insufficient_scope: 403, for the request or its tool; issuer_unavailable: 503, the issuer could not be reached).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const entryFailures = new Counter({
    name: 'mcp_bridge_entry_failures_total',
    help: 'Throws caught at an entry point of the bridge, which cost only the request, message or file reload concerned, by entry point (http_request, child_message, watched_file). Any is a defect to report: its log line says where.',
    labelNames: ['entry'] as const,
    registers: [registry],
  });
  const auditDropped = new Counter({
    name: 'mcp_bridge_audit_events_dropped_total',
    help: 'Audit events lost because the queue of lines to stdout was full (a log reader that keeps up less than the calls) or stdout failed. Calls go on regardless; the audit trail has gaps.',
    registers: [registry],
  });
  const telemetryDropped = new Counter({
    name: 'mcp_bridge_telemetry_dropped_total',
    help: 'Spans (signal="traces") and audit log records (signal="logs") that did not reach the OTLP endpoint: its queue was full (reason="queue_full": the backend is slower than the calls, or down) or the export failed (reason="export_failed"). Calls go on regardless.',
    labelNames: ['signal', 'reason'],
    registers: [registry],
  });
  return {
    registry,
    auditDropped,
    telemetryDropped,
    refusals,
    oauthRefusals,
    entryFailures,
    childRestarts,
    policyDenials,
    observe(next) {
      sources = next;
    },
    observeChanges(next) {
      feed = next;
    },
    requestDone(method, outcome, seconds) {
      requests.record(methodLabel(method), outcome, seconds);
    },
  };
}
