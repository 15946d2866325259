/**
 * One reconcile pass for one MCPServer key, level-triggered: read the MCPServer and everything
 * else from the caches, render the desired objects, apply the ones that differ, delete the
 * ones no longer desired, observe the Deployment and its Pods, and write status once — only if
 * it changed. A pass over an unchanged server sends no request at all.
 *
 * Errors are retried by the work queue with backoff; the status written before the error
 * (Ready=False, ApplyFailed) tells the user why.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { V1Deployment } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { FIELD_MANAGER } from '../api/names.ts';
import { ConditionStatus, ConditionType, ReadyReason } from '../api/v1alpha1/conditions.ts';
import type { MCPServerStatus } from '../api/v1alpha1/mcpserver.ts';
import { APPLIED_HASH_ANNOTATION, applyObject } from '../kube/apply.ts';
import { ApplyMemo } from './apply-memo.ts';
import {
  BY_INSTANCE,
  BY_OWNER,
  RENDERED_TYPES,
  ownerKey,
  type Caches,
  type RenderedKind,
} from './caches.ts';
import type { EventRecorder } from './event-recorder.ts';
import {
  errorText,
  isConflict,
  isNotFound,
  type ApiRequest,
  type KubeClient,
} from '../kube/client.ts';
import { keyOf, objectPath, type KubeObject } from '../kube/resources.ts';
import { MCP_SERVER } from '../api/v1alpha1/stored.ts';
import type { PendingWrites } from './pending.ts';
import {
  ROLLOUT_PENDING,
  deploymentReadiness,
  externalReadiness,
  type Readiness,
} from './readiness.ts';
import { resolveReferences } from './references.ts';
import { DiscoveryTokens } from './discovery-token.ts';
import type { StoredMCPServer } from '../api/v1alpha1/stored.ts';
import type { RenderOptions } from './render/options.ts';
import { endpointOf, isPodPrerequisite, render } from './render/render.ts';
import { SERVER_CONTAINER } from './render/containers.ts';
import { type ProvenanceOutcome, provenanceOf } from './provenance.ts';
import type { HandlerResult } from '../kube/queue.ts';
import { computeStatus, statusDiffers } from './ready-status.ts';
import {
  ProgressWrites,
  isFirstRollout,
  isProgressOnly,
  isProgressing,
} from './progress-writes.ts';
import { TransientFailures } from './transient-failures.ts';
import { findCondition } from '../api/v1alpha1/conditions.ts';
import type { Condition } from '../api/core-v1.ts';
import type { DiscoveryService } from '../discovery/service.ts';
import { discoveryEvents } from '../discovery/discovery-events.ts';
import { alarmLevelOf } from '../tools/text-findings.ts';
import {
  type DiscoveryStatusPart,
  discoveryDiffers,
  withDiscovery,
} from '../discovery/discovery-status.ts';

export interface ReconcilerOptions {
  client: KubeClient;
  caches: Caches;
  recorder: EventRecorder;
  renderOptions: RenderOptions;
  pending: PendingWrites;
  /** Baselines, the discovery part of status, and the discovery schedule. */
  discovery: DiscoveryService;
  log: Logger;
  /** A timeout or throttling is retried this long before status tells it (30 s if unset). */
  transientGraceMs?: number;
}

/** What the apply and prune steps did. */
interface Pass {
  applied: string[];
  pruned: string[];
  /** Kinds whose write is in flight to the cache (see PendingWrites), and for how long. */
  waiting: Map<string, number>;
  failure?: { object: string; message: string; err: unknown };
}

interface Observation {
  readiness: Readiness;
  /** Pod counts of a deployed server; absent for a url server. */
  replicas?: { replicas: number; readyReplicas: number };
}

const notReady = (reason: ReadyReason, message: string): Readiness => ({
  status: ConditionStatus.False,
  reason,
  message,
});

const describe = (obj: KubeObject): string => `${obj.kind}/${obj.metadata.name}`;

/**
 * The write of `status` to the MCPServer `metadata` names, and to no other: the status
 * subresource ignores every metadata field of a patch, the uid of an apply's body included, so
 * the patch tests the uid itself (RFC 6902 `test`). A pass computed for a server deleted since
 * then must fail rather than land on a successor of the same name.
 */
export function statusWrite(
  metadata: { name: string; namespace: string; uid: string },
  status: MCPServerStatus,
): ApiRequest {
  const { name, namespace, uid } = metadata;
  return {
    method: 'PATCH',
    path: objectPath(MCP_SERVER, namespace, name, 'status'),
    query: { fieldManager: FIELD_MANAGER },
    patchType: 'json',
    body: [
      { op: 'test', path: '/metadata/uid', value: uid },
      // `add` replaces a member that exists (RFC 6902 4.1): the whole status is ours.
      { op: 'add', path: '/status', value: status },
    ],
  };
}

/** A rollout in progress is told in status at most this often per server (ProgressWrites). */
const PROGRESS_WRITE_INTERVAL_MS = 5_000;

export class Reconciler {
  readonly #o: ReconcilerOptions;
  readonly #discoveryTokens: DiscoveryTokens;
  readonly #progress = new ProgressWrites(PROGRESS_WRITE_INTERVAL_MS);
  readonly #transient: TransientFailures;
  readonly #memo = new ApplyMemo();

  constructor(options: ReconcilerOptions) {
    this.#o = options;
    this.#transient = new TransientFailures(options.transientGraceMs ?? 30_000);
    this.#discoveryTokens = new DiscoveryTokens(
      options.client,
      options.caches.references.Secret.store,
    );
  }

  async reconcile(key: string): Promise<HandlerResult | void> {
    const server = this.#o.caches.servers.store.get(key);
    // Gone or going: the garbage collector deletes what we own (owner references).
    if (server === undefined || server.metadata.deletionTimestamp !== undefined) {
      this.#o.discovery.forget(key);
      this.#progress.forget(key);
      this.#transient.forget(key);
      this.#memo.forget(key);
      return;
    }
    const log = this.#o.log.child({
      namespace: server.metadata.namespace,
      name: server.metadata.name,
    });
    const baseline = await this.#o.discovery.baseline(server);
    const resolved = { ...resolveReferences(server, this.#o.caches.references), baseline };
    const { uid, name, namespace } = server.metadata;
    // Everything render reads besides the options, which are the process's own.
    const inputs = { uid, name, namespace, spec: server.spec, resolved };
    const desired = this.#memo.desired(
      key,
      inputs,
      () => render(server, this.#o.renderOptions, resolved) as KubeObject[],
    );
    const pass = await this.#apply(server, desired, log);
    if (pass.failure === undefined) {
      this.#transient.forget(key);
      await this.#prune(server, desired, pass, log);
    } else if (this.#transient.holdBack(key, pass.failure.err, Date.now())) {
      throw pass.failure.err;
    }
    const found = await this.#o.discovery.status(server, baseline, new Date());
    const observed = this.#observe(server, desired, pass, found.conditions[0]);
    this.#o.discovery.observe(server, observed.readiness.status === ConditionStatus.True);
    const provenance = provenanceOf({
      image: server.spec.image,
      generation: server.metadata.generation ?? 0,
      previous: server.status,
      pods: this.#o.caches.pods.store.byIndex(BY_INSTANCE, keyOf(server)),
      container: SERVER_CONTAINER,
      serverInfo: found.discovery?.serverInfo,
      packages: this.#o.discovery.packages(key),
      now: new Date(),
    });
    const statusWait = await this.#writeStatus(server, observed, found, provenance, log);
    this.#recordEvents(server, pass, observed.readiness);
    if (pass.failure !== undefined) throw pass.failure.err;
    const waitMs = Math.max(statusWait, ...pass.waiting.values());
    return waitMs > 0 ? { requeueAfterMs: waitMs } : undefined;
  }

  async #apply(server: StoredMCPServer, desired: KubeObject[], log: Logger): Promise<Pass> {
    const pass: Pass = { applied: [], pruned: [], waiting: new Map() };
    // What the pods need (and their discovery token) first, then the Deployment and the
    // Services together: two round trips for a new server.
    const [token, failure] = await Promise.all([
      this.#discoveryTokens.ensure(server, log),
      this.#applyBatch(
        server,
        desired.filter((obj) => isPodPrerequisite(obj.kind)),
        pass,
        log,
      ),
    ]);
    if (token.created !== undefined) pass.applied.push(token.created);
    const first = token.failure ?? failure;
    if (first !== undefined) return { ...pass, failure: first };
    const rest = desired.filter((obj) => !isPodPrerequisite(obj.kind));
    const last = await this.#applyBatch(server, rest, pass, log);
    return last === undefined ? pass : { ...pass, failure: last };
  }

  /** Applies `batch` at once, noting in `pass` what it applied or waits for; the first failure. */
  async #applyBatch(
    server: StoredMCPServer,
    batch: KubeObject[],
    pass: Pass,
    log: Logger,
  ): Promise<Pass['failure']> {
    const steps = await Promise.all(batch.map((obj) => this.#applyOne(server, obj, log)));
    for (const [i, step] of steps.entries()) {
      if (step === 'applied') pass.applied.push(describe(batch[i]!));
      else if (typeof step === 'number') pass.waiting.set(batch[i]!.kind!, step);
    }
    return steps.find((step) => typeof step === 'object');
  }

  /**
   * Applies one desired object unless the cache shows it as desired; says whether it applied,
   * how long a write still in flight may take to reach the cache, or why it failed.
   */
  async #applyOne(
    server: StoredMCPServer,
    obj: KubeObject,
    log: Logger,
  ): Promise<'applied' | 'unchanged' | number | NonNullable<Pass['failure']>> {
    const kind = obj.kind as RenderedKind;
    const live = this.#o.caches.rendered[kind].store.get(keyOf(obj));
    if (live !== undefined && ownerKey(live) !== keyOf(server)) {
      const message = `${describe(obj)} already exists and is controlled by something else; delete or rename it`;
      return { object: describe(obj), message, err: new Error(message) };
    }
    const pendingKey = `${kind}/${keyOf(obj)}`;
    const hash = obj.metadata.annotations?.[APPLIED_HASH_ANNOTATION] ?? '';
    // Asked before needsApply too: a cache that caught up clears the entry.
    const caughtUp = live?.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === hash;
    const wait = this.#o.pending.waitMs(pendingKey, hash, caughtUp);
    if (!this.#memo.needsApply(keyOf(server), obj, live)) return 'unchanged';
    if (wait !== undefined) return wait;
    try {
      await applyObject(this.#o.client, RENDERED_TYPES[kind], obj, FIELD_MANAGER);
      this.#o.pending.record(pendingKey, hash);
    } catch (err) {
      const message = `Could not apply ${describe(obj)}: ${errorText(err)}`;
      return { object: describe(obj), message, err };
    }
    log.info({ object: describe(obj) }, live === undefined ? 'created' : 'updated');
    return 'applied';
  }

  /** Deletes objects we rendered for this server before but render no more (e.g. stdio → url). */
  async #prune(server: StoredMCPServer, desired: KubeObject[], pass: Pass, log: Logger) {
    const wanted = new Set(desired.map(describe));
    for (const [kind, informer] of Object.entries(this.#o.caches.rendered)) {
      for (const obj of informer.store.byIndex(BY_OWNER, server.metadata.uid)) {
        // Only what render made: other owned objects (discovery's snapshot) are not ours to prune.
        if (obj.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === undefined) continue;
        if (wanted.has(describe(obj))) continue;
        try {
          await this.#o.client.request({
            method: 'DELETE',
            path: objectPath(
              RENDERED_TYPES[kind as RenderedKind],
              obj.metadata.namespace,
              obj.metadata.name ?? '',
            ),
            // The uid precondition: never delete a same-named successor.
            body: { preconditions: { uid: obj.metadata.uid }, propagationPolicy: 'Background' },
          });
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }
        log.info({ object: describe(obj) }, 'deleted, no longer desired');
        pass.pruned.push(describe(obj));
      }
    }
    const pruned = await this.#discoveryTokens.prune(server, log);
    if (pruned !== undefined) pass.pruned.push(pruned);
  }

  #observe(
    server: StoredMCPServer,
    desired: KubeObject[],
    pass: Pass,
    discovered: Condition,
  ): Observation {
    if (pass.failure !== undefined) {
      return { readiness: notReady(ReadyReason.ApplyFailed, pass.failure.message) };
    }
    const wanted = desired.find((obj) => obj.kind === 'Deployment');
    if (wanted === undefined) {
      return { readiness: externalReadiness(server.spec.url ?? '', discovered) };
    }
    // Cached as a KubeObject; the Deployment informer holds apps/v1 Deployments only.
    const live = this.#o.caches.rendered.Deployment.store.get(keyOf(wanted)) as
      V1Deployment | undefined;
    const replicas = {
      replicas: live?.status?.replicas ?? 0,
      readyReplicas: live?.status?.readyReplicas ?? 0,
    };
    // The cached Deployment predates this pass's write: its status says nothing of the new spec.
    if (pass.applied.includes(describe(wanted)) || pass.waiting.has('Deployment')) {
      return {
        readiness: notReady(ReadyReason.Progressing, ROLLOUT_PENDING),
        replicas,
      };
    }
    const pods = this.#o.caches.pods.store.byIndex(BY_INSTANCE, keyOf(server));
    return { readiness: deploymentReadiness(live, pods), replicas };
  }

  /** Writes status if it changed; returns how long to wait for a write still in flight. */
  async #writeStatus(
    server: StoredMCPServer,
    observed: Observation,
    found: DiscoveryStatusPart,
    provenance: ProvenanceOutcome,
    log: Logger,
  ): Promise<number> {
    const computed = computeStatus({
      generation: server.metadata.generation ?? 0,
      current: server.status,
      readiness: observed.readiness,
      endpoint: endpointOf(server),
      replicas: observed.replicas,
      now: new Date(),
    });
    const next = {
      ...withDiscovery(computed, found),
      ...(provenance.status === undefined ? {} : { provenance: provenance.status }),
    };
    const sameRest =
      !discoveryDiffers(server.status, next) &&
      isDeepStrictEqual(server.status?.provenance, next.provenance);
    if (!statusDiffers(server.status, next) && sameRest) return 0;
    const key = keyOf(server);
    const hold = isFirstRollout(server.status, next)
      ? this.#progress.firstHoldMs(key, Date.now())
      : sameRest && isProgressOnly(server.status, next)
        ? this.#progress.holdMs(key, Date.now())
        : 0;
    if (hold > 0) return hold;
    const pendingKey = `status/${key}`;
    // Without transition times: a pass on a cache that still lacks our last write computes
    // the same status with a later time, and must not write it again.
    const timeless = next.conditions.map(({ lastTransitionTime: _, ...rest }) => rest);
    const digest = createHash('sha256')
      .update(JSON.stringify({ ...next, conditions: timeless }))
      .digest('hex');
    // Only reached when the cache differs from `next`: it has not caught up with it.
    const wait = this.#o.pending.waitMs(pendingKey, digest, false);
    if (wait !== undefined) return wait;
    await this.#o.client.request(statusWrite(server.metadata, next));
    this.#o.pending.record(pendingKey, digest);
    const ready = next.conditions[0]!;
    this.#progress.written(key, isProgressing(ready), Date.now());
    log.info({ ready: ready.status, reason: ready.reason }, 'status written');
    // Told once the write went out: a pass on a stale cache recomputes the same change.
    for (const event of discoveryEvents(server.status, found, alarmLevelOf(server.spec))) {
      void this.#o.recorder.record(server, event.type, event.reason, event.message);
    }
    if (provenance.news !== undefined) {
      log.warn({ change: provenance.news }, 'the same spec runs different code');
      void this.#o.recorder.record(server, 'Warning', 'CodeChanged', provenance.news);
      // Tools the new code lists are only known after a discovery run.
      this.#o.discovery.rediscover(key);
    }
    return 0;
  }

  /**
   * One Event per kind of change: what was applied, what was deleted, a failure, a Ready
   * reason that needs attention and the end of it. Routine moves between calm states (a
   * rollout that finishes, a server scaled to zero) are in status alone: an Event is a write
   * too, and one per server on every rollout adds up when thousands roll out at once.
   * Not waited for (see EventRecorder).
   */
  #recordEvents(server: StoredMCPServer, pass: Pass, readiness: Readiness): void {
    const record = (type: 'Normal' | 'Warning', reason: string, message: string) =>
      void this.#o.recorder.record(server, type, reason, message);
    if (pass.applied.length > 0) {
      record('Normal', 'Applied', `Applied ${pass.applied.join(', ')}.`);
    }
    if (pass.pruned.length > 0) {
      record(
        'Normal',
        'Deleted',
        `Deleted ${pass.pruned.join(', ')}: no longer needed by the spec.`,
      );
    }
    if (pass.failure !== undefined) {
      record('Warning', ReadyReason.ApplyFailed, pass.failure.message);
      return;
    }
    const before = findCondition(server.status, ConditionType.Ready);
    if (before?.status === readiness.status && before.reason === readiness.reason) return;
    // A rollout this pass started is news already told by the Applied event.
    if (readiness.reason === ReadyReason.Progressing && pass.applied.length > 0) return;
    const fine = isCalm(readiness);
    if (fine && (before === undefined || isCalm(before))) return;
    record(fine ? 'Normal' : 'Warning', readiness.reason, readiness.message);
  }
}

/** Ready, or not Ready for a reason that is part of normal operation. */
const isCalm = (ready: { status: string; reason: string }): boolean =>
  ready.status === ConditionStatus.True || CALM_REASONS.has(ready.reason);

/** Not-Ready reasons that are part of normal operation, recorded as Normal events. */
const CALM_REASONS = new Set<string>([
  ReadyReason.Progressing,
  ReadyReason.ScaledToZero,
  ReadyReason.External,
]);
