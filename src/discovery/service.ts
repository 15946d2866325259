/**
 * Discovery inside the controller process: the scheduler, the runner and the results, wired
 * to the controller through the few calls a reconcile pass makes. Only the leader reconciles,
 * so only the leader discovers; `stop()` ends every run when leadership is lost.
 *
 * Per pass the reconciler asks for the baseline (render needs it for the bridge's policy),
 * for the discovery part of status, and tells what it observed, which keeps the schedule in
 * line with the server:
 * - a `url` server is discovered as long as discovery is enabled;
 * - a deployed server while it is Ready, at once when it becomes Ready;
 * - every server at once when its spec changes (a new generation), when the Secret with its
 *   token changes, or when a user sets or changes the annotation `mcp-operator.dev/discover`;
 * - a deleted server is removed, its run cancelled.
 */

import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Agent } from 'undici';
import { DISCOVER_ANNOTATION } from '../api/names.ts';
import type { KubeClient } from '../kube/client.ts';
import { CONFIG_MAP, keyOf, objectPath } from '../kube/resources.ts';
import { SNAPSHOT_KEY, readSnapshot } from './snapshot-configmap.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { OperatorError } from '../errors.ts';
import type { Baseline } from '../tools/baseline.ts';
import { BaselineResolver } from './baseline.ts';
import { type EgressPolicy, EgressGuard, guardedDispatcher } from './egress.ts';
import { type SnapshotWriter, DiscoveryRunner } from './runner.ts';
import { ResultStore } from './results.ts';
import { DiscoveryScheduler } from './scheduler.ts';
import type { CHANGE_WATCH_DEFAULTS } from './change-watch.ts';
import { ChangeWatch } from './change-watch.ts';
import type { ResolvedPackage } from '../mcp/change-feed.ts';
import { type DiscoveryStatusPart, discoveryStatus } from './discovery-status.ts';
import { driftBasis, driftFrom, driftInputs } from './drift-basis.ts';
import {
  discoveryEnabled,
  intervalMs,
  needsDiscoveryToken,
  timeoutMs,
} from '../api/v1alpha1/spec.ts';

export interface DiscoveryServiceOptions {
  client: KubeClient;
  /** The MCPServer cache. */
  server: (key: string) => StoredMCPServer | undefined;
  /** The cached MCPServers of a namespace, for shadowing across servers (peer-tools.ts). */
  peers?: (namespace: string) => readonly StoredMCPServer[];
  /** Writes the snapshot ConfigMaps. */
  snapshots: SnapshotWriter;
  /** The resourceVersion of any ConfigMap, from the metadata-only cache. */
  configMapVersion: (namespace: string, name: string) => string | undefined;
  /** The resourceVersion of any Secret, from the metadata-only cache (no value is cached). */
  secretVersion: (namespace: string, name: string) => string | undefined;
  enqueue: (key: string) => void;
  log: Logger;
  registry?: Registry;
  concurrency?: number;
  /** Where discovery may connect (docs/tenancy.md); every run's connections are checked. */
  egress: EgressPolicy;
  /** Where a server's MCP endpoint is (a deployed server's: its Service). */
  endpoint: (server: StoredMCPServer) => string;
  /** Settings of the bridges' change feed watch (change-watch.ts); tests shorten them. */
  changeWatch?: Partial<typeof CHANGE_WATCH_DEFAULTS>;
}

export class DiscoveryService {
  readonly #results: ResultStore;
  readonly #baselines: BaselineResolver;
  readonly #scheduler: DiscoveryScheduler;
  /** Per server, what its runs depend on beyond the schedule (see #inputs). */
  readonly #inputs = new Map<string, string>();
  readonly #secretVersion: DiscoveryServiceOptions['secretVersion'];
  readonly #dispatcher: Agent;
  readonly #client: KubeClient;
  readonly #log: Logger;
  readonly #runner: DiscoveryRunner;
  readonly #changes: ChangeWatch;
  readonly #endpoint: (server: StoredMCPServer) => string;
  readonly #serverNow: (key: string) => StoredMCPServer | undefined;

  constructor(o: DiscoveryServiceOptions) {
    this.#secretVersion = o.secretVersion;
    this.#client = o.client;
    this.#log = o.log;
    this.#results = new ResultStore(o.registry);
    this.#baselines = new BaselineResolver(o.client, o.configMapVersion);
    this.#dispatcher = guardedDispatcher(new EgressGuard(o.egress));
    this.#endpoint = o.endpoint;
    this.#serverNow = o.server;
    const runner = new DiscoveryRunner({
      client: o.client,
      dispatcher: this.#dispatcher,
      server: o.server,
      ...(o.peers === undefined ? {} : { peers: o.peers }),
      snapshots: o.snapshots,
      endpoint: o.endpoint,
      results: this.#results,
      baselines: this.#baselines,
      enqueue: o.enqueue,
      log: o.log,
    });
    this.#runner = runner;
    this.#scheduler = new DiscoveryScheduler({
      discover: (key, signal) => runner.run(key, signal),
      ...(o.concurrency === undefined ? {} : { concurrency: o.concurrency }),
      ...(o.registry === undefined ? {} : { registry: o.registry }),
      onFailure: (key, error) => {
        const [namespace, name] = key.split('/');
        const code = error instanceof OperatorError ? error.code : undefined;
        const message = error instanceof Error ? error.message : String(error);
        o.log.warn({ namespace, name, code, error: message }, 'discovery failed');
      },
    });
    this.#changes = new ChangeWatch({
      dispatcher: this.#dispatcher,
      onChange: (key) => {
        o.log.info({ key }, 'the bridge saw a change; discovering now');
        this.#scheduler.trigger(key);
      },
      // Recorded in status.provenance by the next pass; a changed version asks for a discovery
      // there (CodeChanged), as the feed's counter already did.
      onPackages: o.enqueue,
      log: o.log,
      ...o.changeWatch,
    });
  }

  /** The approved baseline; reads a baseline ConfigMap only when it changed. */
  baseline(server: StoredMCPServer): Promise<Baseline> {
    return this.#baselines.resolve(keyOf(server), server);
  }

  /** status.discovery, status.drift and the Discovered and Drifted conditions, as of `now`. */
  async status(
    server: StoredMCPServer,
    baseline: Baseline,
    now: Date,
  ): Promise<DiscoveryStatusPart> {
    await this.#redrift(server, baseline);
    this.#results.shareTools(keyOf(server), server.status?.discovery?.tools);
    return discoveryStatus({
      server,
      previous: server.status,
      result: this.#results.get(keyOf(server)),
      baseline,
      now,
    });
  }

  /**
   * A run computed drift against the baseline of its time; against another one (the baseline
   * or the allowlist changed since) the full snapshot is read again from its ConfigMap. When
   * that fails (edited, deleted) the server is discovered again at once.
   */
  async #redrift(server: StoredMCPServer, baseline: Baseline): Promise<void> {
    const key = keyOf(server);
    const success = this.#results.get(key)?.success;
    if (success === undefined || !success.stored.fits || baseline.kind === 'invalid') return;
    const inputs = driftInputs(baseline, server);
    const basis = driftBasis(inputs);
    if (success.drift?.basis === basis) return;
    const { namespace } = server.metadata;
    const name = success.stored.configMap;
    try {
      const configMap = await this.#client.request<{ data?: Record<string, string> }>({
        method: 'GET',
        path: objectPath(CONFIG_MAP, namespace, name),
      });
      const snapshot = readSnapshot(
        configMap.data?.[SNAPSHOT_KEY] ?? '',
        `ConfigMap ${namespace}/${name}`,
      );
      this.#results.redrifted(key, { basis, drift: driftFrom(snapshot, inputs) });
    } catch (error) {
      this.#log.warn(
        { namespace, name: server.metadata.name, err: error },
        'snapshot unreadable; discovering again',
      );
      this.#scheduler.remove(key);
    }
  }

  /** Keeps the schedule in line with the server; `ready` is its Ready condition being True. */
  observe(server: StoredMCPServer, ready: boolean): void {
    const key = keyOf(server);
    const enabled = discoveryEnabled(server.spec);
    const eligible = enabled && (server.spec.image === undefined || ready);
    const inputs = this.#inputsOf(server);
    const before = this.#inputs.get(key);
    this.#inputs.set(key, inputs);
    if (!eligible) {
      this.#scheduler.remove(key);
      this.#changes.unwatch(key);
      // Not Ready: status keeps the last result. Disabled: there is nothing to keep.
      if (!enabled) this.#results.forget(key);
      return;
    }
    // What a run depends on changed: a run in flight (on an old URL that hangs, say) is of no
    // use any more, so it is cancelled, and the new entry runs at once. So does a new server.
    if (before !== inputs) this.#scheduler.remove(key);
    this.#scheduler.upsert(key, {
      intervalMs: intervalMs(server.spec),
      timeoutMs: timeoutMs(server.spec),
    });
    this.#watchChanges(key, server);
  }

  /** A bridged server's change feed, long-polled with its discovery token (change-watch.ts). */
  #watchChanges(key: string, server: StoredMCPServer): void {
    if (!needsDiscoveryToken(server)) return this.#changes.unwatch(key);
    this.#changes.watch(key, {
      endpoint: this.#endpoint(server),
      token: (signal) => this.#runner.discoveryToken(this.#serverNow(key) ?? server, signal),
    });
  }

  /** The spec's generation, the DISCOVER_ANNOTATION and the version of the token's Secret. */
  #inputsOf(server: StoredMCPServer): string {
    const { namespace, generation, annotations } = server.metadata;
    const secret = server.spec.auth?.secretRef.name;
    return JSON.stringify([
      generation,
      annotations?.[DISCOVER_ANNOTATION],
      secret === undefined ? undefined : this.#secretVersion(namespace, secret),
    ]);
  }

  /** The packages the server's bridges report (change-watch.ts); undefined when none told. */
  packages(key: string): ResolvedPackage[] | undefined {
    return this.#changes.packages(key);
  }

  /** Discover now: what the server runs changed (its provenance), whatever the schedule says. */
  rediscover(key: string): void {
    this.#scheduler.trigger(key);
  }

  /** The server is gone: cancel its run and drop what was kept for it. */
  forget(key: string): void {
    this.#scheduler.remove(key);
    this.#changes.unwatch(key);
    this.#results.forget(key);
    this.#baselines.forget(key);
    this.#inputs.delete(key);
  }

  /** Leadership ends: no more runs, and a later term starts from status as written. */
  async stop(): Promise<void> {
    this.#changes.stop();
    await this.#scheduler.stop();
    for (const key of [...this.#inputs.keys()]) this.forget(key);
    this.#results.clear();
  }
}
