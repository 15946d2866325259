/**
 * What discovery last found, per MCPServer key, in memory. Discovery runs write here and
 * enqueue the key; the reconcile pass reads it and writes status (one status writer). After an
 * operator restart the store is empty until the first run, and status keeps what it had.
 *
 * Exact times go to Prometheus gauges rather than status, so that a run that finds nothing new
 * costs no API write (docs/adr/0024).
 */

import { isDeepStrictEqual } from 'node:util';
import { Gauge, type Registry } from 'prom-client';
import type { DiscoveredReason } from '../api/v1alpha1/conditions.ts';
import type { Drift } from '../tools/drift.ts';
import type { Catalog } from '../tools/catalog-items.ts';
import type { CompactDiscovery, SnapshotTool } from '../tools/snapshot.ts';

/** Where the full snapshot went: the ConfigMap, or why it did not fit. */
export type StoredSnapshot = { fits: true; configMap: string } | { fits: false; message: string };

/**
 * A successful run, kept small: memory must not grow with the size of servers' tool sets.
 * The full snapshot is in its ConfigMap; it is read again only to compare with another
 * baseline (DiscoveryService), or kept here when it did not fit one.
 */
export interface Success {
  at: Date;
  /** The endpoint discovered, as shown to users (no credentials: the token is a header). */
  url: string;
  /** status.discovery's part from the snapshot: tool names and abbreviated digests. */
  found: CompactDiscovery;
  stored: StoredSnapshot;
  /** The drift found, and the baseline and allowlist it was computed against (`driftBasis`). */
  drift: { basis: string; drift: Drift } | undefined;
  /** Everything listed, only when the snapshot is not in a ConfigMap to read it from. */
  listed?: { tools: readonly SnapshotTool[]; catalog: Catalog };
}

export interface Failure {
  reason: DiscoveredReason;
  /** Safe to show: names the server and what to check, never a secret. */
  message: string;
}

export interface ServerResult {
  /** metadata.generation of the MCPServer when the last run started. */
  generation: number;
  attemptAt: Date;
  /** The last successful run, kept through later failures: drift is still computed from it. */
  success: Success | undefined;
  /** Set when the last run failed. */
  failure: Failure | undefined;
}

export class ResultStore {
  readonly #results = new Map<string, ServerResult>();
  readonly #lastAttempt: Gauge<'server'> | undefined;
  readonly #lastSuccess: Gauge<'server'> | undefined;
  readonly #failingSince: Gauge<'server'> | undefined;

  constructor(registry?: Registry) {
    if (registry === undefined) return;
    this.#lastAttempt = new Gauge({
      name: 'mcp_operator_discovery_last_attempt_timestamp_seconds',
      help: 'Unix time of the last discovery run of each server.',
      labelNames: ['server'],
      registers: [registry],
    });
    this.#lastSuccess = new Gauge({
      name: 'mcp_operator_discovery_last_success_timestamp_seconds',
      help: 'Unix time of the last successful discovery run of each server.',
      labelNames: ['server'],
      registers: [registry],
    });
    // A server that never succeeded has no last success; this gives it, too, a start to count from.
    this.#failingSince = new Gauge({
      name: 'mcp_operator_discovery_failing_since_timestamp_seconds',
      help: 'Unix time of the first of the failed discovery runs since the last success of each server; absent while its last run succeeded.',
      labelNames: ['server'],
      registers: [registry],
    });
  }

  get(key: string): ServerResult | undefined {
    return this.#results.get(key);
  }

  succeeded(key: string, generation: number, success: Success): void {
    this.#results.set(key, { generation, attemptAt: success.at, success, failure: undefined });
    this.#lastAttempt?.set({ server: key }, success.at.getTime() / 1000);
    this.#lastSuccess?.set({ server: key }, success.at.getTime() / 1000);
    this.#failingSince?.remove({ server: key });
  }

  failed(key: string, generation: number, at: Date, failure: Failure): void {
    const previous = this.#results.get(key);
    this.#results.set(key, { generation, attemptAt: at, success: previous?.success, failure });
    this.#lastAttempt?.set({ server: key }, at.getTime() / 1000);
    if (previous?.failure === undefined)
      this.#failingSince?.set({ server: key }, at.getTime() / 1000);
  }

  /**
   * Once status carries the tools the last run found (`written`, as the MCPServer cache has
   * it), the result keeps that list instead of its own equal copy: one list per server in
   * memory rather than two. Neither is ever modified, so sharing it changes nothing else.
   */
  shareTools(key: string, written: CompactDiscovery['tools']): void {
    const success = this.#results.get(key)?.success;
    const tools = success?.found.tools;
    if (success === undefined || written === undefined || tools === written) return;
    if (isDeepStrictEqual(tools, written)) success.found = { ...success.found, tools: written };
  }

  /** Drift against another baseline, computed from the full snapshot read again. */
  redrifted(key: string, drift: NonNullable<Success['drift']>): void {
    const success = this.#results.get(key)?.success;
    if (success !== undefined) success.drift = drift;
  }

  forget(key: string): void {
    // Every pass over a server with discovery off asks: its gauges were never set.
    if (!this.#results.delete(key)) return;
    this.#lastAttempt?.remove({ server: key });
    this.#lastSuccess?.remove({ server: key });
    this.#failingSince?.remove({ server: key });
  }

  clear(): void {
    for (const key of [...this.#results.keys()]) this.forget(key);
  }
}
