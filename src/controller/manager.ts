/**
 * The manager wires the controller together and runs it: client, caches, work queue,
 * reconciler, discovery, leader election, the HTTP server and the periodic resync. As in
 * controller-runtime, caches run on every replica (so a standby's /readyz means "can take over
 * at once") and only the leader's queue reconciles — and only the leader discovers.
 *
 * Lifecycle: `Manager.start` returns once the HTTP server listens; `done` settles when the
 * manager ends, with 'stopped' after `stop()` or 'lost' when leadership was lost (the caller
 * exits non-zero, as client-go's leader election does, and a restart campaigns afresh).
 */
import type { Logger } from 'pino';
import { settlesWithin, whenAborted } from '../kube/backoff.ts';
import { Caches } from './caches.ts';
import type { ControllerConfig } from './config.ts';
import { EventRecorder } from './event-recorder.ts';
import { connect, type ClientOptions, type KubeClient } from '../kube/client.ts';
import type { ClientConfig } from '../kube/config.ts';
import { keyOf, objectKey, splitKey } from '../kube/resources.ts';
import { LeaderElector, type ElectionEnd } from '../kube/leader.ts';
import { ControllerMetrics } from './metrics.ts';
import { PendingWrites } from './pending.ts';
import { WorkQueue, type HandlerResult } from '../kube/queue.ts';
import { Reconciler } from './reconcile.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import { egressPolicy } from '../discovery/egress.ts';
import { DiscoveryService, type DiscoveryServiceOptions } from '../discovery/service.ts';
import { endpointOf } from './render/render.ts';
import { startServer, type RunningServer } from './server.ts';
import { snapshotWriter } from './snapshot-writer.ts';

export interface ManagerOptions {
  config: ControllerConfig;
  clientConfig: ClientConfig;
  log: Logger;
  /**
   * Tests only: where discovery reaches a deployed server instead of its Service. A test
   * cluster's pods are fakes; the test runs their containers as local processes.
   */
  discoveryEndpoint?: (server: StoredMCPServer) => string;
  /** Tests only: shorter long-polls of the bridges' change feed. */
  changeWatch?: DiscoveryServiceOptions['changeWatch'];
}

/** Counts each API request in the metrics, by verb, status code and resource. */
const countResponseIn =
  (metrics: ControllerMetrics): NonNullable<ClientOptions['onResponse']> =>
  (verb, code, resource) =>
    metrics.kubeRequests.inc({ verb, code: String(code), resource });

/** How long a write may take to come back through the watch before it is sent again. */
const PENDING_WRITE_TTL_MS = 10_000;

export class Manager {
  readonly #o: ManagerOptions;
  readonly #client: KubeClient;
  readonly #countResponse: NonNullable<ClientOptions['onResponse']>;
  readonly #metrics: ControllerMetrics;
  readonly #caches: Caches;
  readonly #queue: WorkQueue;
  readonly #discovery: DiscoveryService;
  readonly #abort = new AbortController();
  #server: RunningServer | undefined;
  #done: Promise<ElectionEnd> = Promise.resolve('stopped');
  #leading = false;
  #leadingStarted: Promise<void> = Promise.resolve();
  #resync: NodeJS.Timeout | undefined;

  /** Connects, starts the HTTP server, and runs the controller in the background. */
  static async start(o: ManagerOptions): Promise<Manager> {
    const metrics = new ControllerMetrics();
    const client = connect(o.clientConfig, { onResponse: countResponseIn(metrics) });
    const manager = new Manager(o, client, metrics);
    try {
      manager.#server = await startServer({
        address: o.config.metricsAddress,
        registry: metrics.registry,
        ready: () => manager.#caches.synced,
        log: o.log,
      });
    } catch (err) {
      client.close();
      throw err;
    }
    manager.#done = manager.#run();
    return manager;
  }

  private constructor(o: ManagerOptions, client: KubeClient, metrics: ControllerMetrics) {
    this.#o = o;
    this.#client = client;
    this.#metrics = metrics;
    this.#countResponse = countResponseIn(metrics);
    this.#caches = new Caches({
      client,
      namespaces: o.config.namespaces,
      log: o.log,
      enqueue: (key, lane) => {
        if (this.#leading) this.#queue.add(key, lane);
      },
    });
    const { servers, references } = this.#caches;
    this.#discovery = new DiscoveryService({
      client,
      server: (key) => servers.store.get(key),
      peers: (namespace) => servers.store.list(namespace),
      snapshots: snapshotWriter(client, (namespace, name) =>
        references.ConfigMap.store.get(objectKey(namespace, name)),
      ),
      configMapVersion: (namespace, name) =>
        references.ConfigMap.store.get(objectKey(namespace, name))?.metadata.resourceVersion,
      secretVersion: (namespace, name) =>
        references.Secret.store.get(objectKey(namespace, name))?.metadata.resourceVersion,
      // Only the leader discovers; a run that ends after leadership was lost changes nothing.
      enqueue: (key) => {
        if (this.#leading) this.#queue.add(key);
      },
      log: o.log,
      registry: metrics.registry,
      endpoint: o.discoveryEndpoint ?? endpointOf,
      egress: egressPolicy(o.config.discoveryEgress),
      ...(o.changeWatch === undefined ? {} : { changeWatch: o.changeWatch }),
    });
    const reconciler = new Reconciler({
      client,
      caches: this.#caches,
      recorder: new EventRecorder({
        client,
        component: 'mcp-operator',
        instance: o.config.leaderElection.identity,
        log: o.log,
      }),
      renderOptions: {
        image: o.config.bridgeImage,
        ...(o.config.imagePullPolicy ? { imagePullPolicy: o.config.imagePullPolicy } : {}),
      },
      pending: new PendingWrites(PENDING_WRITE_TTL_MS),
      discovery: this.#discovery,
      log: o.log,
    });
    this.#queue = new WorkQueue({
      concurrency: o.config.concurrency,
      handler: (key) => this.#reconcile(reconciler, key),
      onError: (key, err, retryInMs) =>
        o.log.error({ ...splitKey(key), err, retryInMs }, 'reconcile failed; will retry'),
    });
    metrics.watch({
      queueDepth: () => this.#queue.depth,
      managedObjects: () => this.#caches.counts(),
      isLeader: () => this.#leading,
      codeChanged: () =>
        this.#caches.servers.store
          .list()
          .filter((server) => server.status?.provenance?.codeChanged !== undefined)
          .map(keyOf),
    });
  }

  /** `http://host:port` of /healthz, /readyz and /metrics. */
  get url(): string {
    return this.#server?.url ?? '';
  }

  /** Settles when the manager has ended: 'stopped' after stop(), 'lost' with leadership. */
  get done(): Promise<ElectionEnd> {
    return this.#done;
  }

  /** Stops reconciling (in-flight passes finish), releases the Lease, closes everything. */
  async stop(): Promise<ElectionEnd> {
    this.#abort.abort();
    return this.#done;
  }

  async #run(): Promise<ElectionEnd> {
    const { config, log } = this.#o;
    const signal = this.#abort.signal;
    this.#caches.start();
    const leading = { start: () => this.#lead(), stop: () => this.#unlead() };
    let end: ElectionEnd;
    if (config.leaderElection.enabled) {
      // Connections of its own: on the reconcile pool a renewal waited for a socket behind
      // dozens of writes, each taking seconds on a loaded API server, and at 1,000 new servers
      // the leader missed its renew deadline 20 s after it began (bench:leader-handover).
      const leaseClient = connect(this.#o.clientConfig, { onResponse: this.#countResponse });
      try {
        end = await new LeaderElector({ ...config.leaderElection, client: leaseClient, log }).run(
          signal,
          leading,
        );
      } finally {
        leaseClient.close();
      }
      // Lost: writes still in flight are aborted rather than awaited (see LeaderElector.run).
      if (end === 'lost') this.#client.close();
    } else {
      leading.start();
      await whenAborted(signal);
      await leading.stop();
      end = 'stopped';
    }
    await this.#caches.stop();
    await this.#server?.close();
    this.#client.close();
    return end;
  }

  /** Becomes the active controller: once the caches are synced, reconcile everything. */
  #lead(): void {
    this.#leadingStarted = (async () => {
      const signal = this.#abort.signal;
      await Promise.race([this.#caches.waitForSync(), whenAborted(signal)]);
      if (signal.aborted) return;
      this.#leading = true;
      this.#enqueueAll();
      this.#queue.start();
      // Level-triggered safety net: a missed event costs at most one resync period.
      this.#resync = setInterval(() => this.#enqueueAll(), this.#o.config.resyncPeriodMs);
    })();
  }

  async #unlead(): Promise<void> {
    await this.#leadingStarted;
    this.#leading = false;
    clearInterval(this.#resync);
    const drained = Promise.all([this.#queue.shutdown(), this.#discovery.stop()]);
    const timeoutMs = this.#o.config.shutdownTimeoutMs;
    if (await settlesWithin(drained, timeoutMs)) return;
    // A pass stuck on a slow API server must not hold the Lease until SIGKILL: cut off, it
    // is redone by the next leader (every pass re-reads and applies the whole state).
    this.#o.log.warn({ timeoutMs }, 'passes still running at the shutdown timeout: cut off');
    this.#client.close();
    await drained;
  }

  #enqueueAll(): void {
    for (const server of this.#caches.servers.store.list()) {
      this.#queue.add(`${server.metadata.namespace}/${server.metadata.name}`);
    }
  }

  async #reconcile(reconciler: Reconciler, key: string): Promise<HandlerResult | void> {
    const { reconciles, reconcileErrors, reconcileDuration } = this.#metrics;
    const stopTimer = reconcileDuration.startTimer();
    try {
      const result = await reconciler.reconcile(key);
      reconciles.inc({ result: result?.requeueAfterMs === undefined ? 'success' : 'requeue' });
      return result;
    } catch (err) {
      reconciles.inc({ result: 'error' });
      reconcileErrors.inc();
      throw err;
    } finally {
      stopTimer();
    }
  }
}
