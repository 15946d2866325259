/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's algorithm
 * (k8s.io/client-go/tools/leaderelection):
 *
 * - A candidate takes the Lease when it is free (no holder) or when its record has not changed
 *   for `leaseDuration`, measured on the candidate's own clock from when it first saw that
 *   record — clocks of different machines are never compared.
 * - Every write is a PUT carrying the resourceVersion that was read, so of two candidates
 *   racing for an expired Lease exactly one wins; the other gets 409 Conflict.
 * - The leader renews every `retryPeriod`; when it has not renewed for `renewDeadline`
 *   (shorter than `leaseDuration`) it steps down before anyone else may take over.
 * - On shutdown the leader releases the Lease (empty holder, 1 s duration) so a standby takes
 *   over at once instead of waiting for expiry.
 *
 * Beyond client-go, a candidate also watches the Lease between its polls: it sees each renewal
 * when it happens rather than at its next poll, and tries again as soon as the record expires
 * or is released. A holder that dies is then replaced `leaseDuration` after its last renewal,
 * instead of up to two retry periods later (one to see that renewal, one to notice the expiry).
 * The polls remain, so a watch that fails or is refused only costs that speed.
 */
import type { Logger } from 'pino';
import { jittered, sleep } from './backoff.ts';
import { isConflict, isNotFound, type KubeClient } from './client.ts';
import { LEASE, apiVersionOf, collectionPath, objectPath, type ObjectMeta } from './resources.ts';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: string;
  kind: 'Lease';
  metadata: ObjectMeta;
  spec?: LeaseSpec;
}

/** Which Lease, who we are, and the timings: what the controller's configuration decides. */
export interface LeaseSettings {
  namespace: string;
  name: string;
  /** Unique per process: pod name plus a random suffix. */
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export interface LeaderElectionOptions extends LeaseSettings {
  client: KubeClient;
  log: Logger;
}

/** metav1.MicroTime is RFC 3339 with exactly six fractional digits. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

export type ElectionEnd = 'lost' | 'stopped';

/** One acquire-or-renew try, as logged: its start (epoch ms) and how long its requests took. */
export interface AttemptTrace {
  at: number;
  outcome: 'acquired' | 'renewed' | 'held' | 'conflict' | 'failed';
  /** The holder the GET saw ('' when released). */
  holder?: string;
  /** Whether the GET saw a record other than the last one: the lease duration starts anew. */
  newRecord?: boolean;
  getMs?: number;
  writeMs?: number;
}

export interface LeadingCallbacks {
  start: () => void;
  /** Resolves once the leader's work has stopped. */
  stop: () => Promise<void>;
}

export class LeaderElector {
  readonly #o: LeaderElectionOptions;
  #leader = false;
  /** The last Lease we read or wrote, and when (our clock) its record last changed. */
  #lease: Lease | undefined;
  #observedRecord = '';
  #observedAt = 0;
  /** When the observed record expires (our clock); 0 while none is held by another. */
  #heldUntil = 0;
  /** Wakes a waiting candidate when the watch sees the Lease released or gone. */
  #wake: (() => void) | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#o = options;
  }

  get isLeader(): boolean {
    return this.#leader;
  }

  get leaseName(): string {
    return `${this.#o.namespace}/${this.#o.name}`;
  }

  /**
   * Campaigns until elected, calls `leading.start`, then renews until the signal aborts
   * ('stopped') or renewal fails for `renewDeadline` ('lost'). When stopped, it awaits
   * `leading.stop` — the leader's work must be over — before it releases the Lease; when lost,
   * it calls `leading.stop` and returns at once, and the caller must cut the work off.
   */
  async run(signal: AbortSignal, leading: LeadingCallbacks): Promise<ElectionEnd> {
    const { log } = this.#o;
    if (!(await this.#campaign(signal))) return 'stopped';
    this.#leader = true;
    log.info({ lease: this.leaseName, identity: this.#o.identity }, 'became leader');
    leading.start();
    const end = await this.#renewLoop(signal);
    this.#leader = false;
    if (end === 'lost') {
      // Another replica may lead once the Lease expires: the caller ends this one's work now
      // (client-go's leaders exit), since passes still in flight would race the new leader's.
      leading.stop().catch((error: unknown) => log.error({ err: error }, 'stopping work failed'));
      return end;
    }
    await leading.stop();
    await this.#release();
    return end;
  }

  /** Tries until it leads (true) or the signal aborts (false). */
  async #campaign(signal: AbortSignal): Promise<boolean> {
    if (await this.#attempt(signal)) return true;
    // Started after the first try, whose GET is the first sight of the record.
    const watching = new AbortController();
    const watch = this.#watchLease(AbortSignal.any([signal, watching.signal]));
    try {
      while (!signal.aborted) {
        await this.#untilNextAttempt(signal);
        if (!signal.aborted && (await this.#attempt(signal))) return true;
      }
      return false;
    } finally {
      watching.abort();
      await watch;
    }
  }

  /** The next poll, or the record's expiry if sooner, or the watch seeing it released. */
  async #untilNextAttempt(signal: AbortSignal): Promise<void> {
    const poll = jittered(this.#o.retryPeriodMs, 1.2);
    const expiry = this.#heldUntil === 0 ? poll : Math.max(0, this.#heldUntil - Date.now());
    const woken = new AbortController();
    this.#wake = () => woken.abort();
    try {
      await sleep(Math.min(poll, expiry), AbortSignal.any([signal, woken.signal]));
    } finally {
      this.#wake = undefined;
    }
  }

  /** Watches the Lease until `signal` aborts, again after a retry period when the stream ends. */
  async #watchLease(signal: AbortSignal): Promise<void> {
    const { client, namespace, name, retryPeriodMs, log } = this.#o;
    while (!signal.aborted) {
      try {
        await client.watch(
          {
            path: collectionPath(LEASE, namespace),
            query: { fieldSelector: `metadata.name=${name}` },
            signal,
          },
          (event) => {
            const lease = event.object as Partial<Lease>;
            if (lease.kind !== 'Lease' || lease.metadata?.name !== name) return;
            if (event.type === 'DELETED') {
              this.#wake?.();
              return;
            }
            const at = Date.now();
            if (this.#see(lease.spec ?? {}, at)) {
              const holder = lease.spec?.holderIdentity ?? '';
              log.debug({ lease: this.leaseName, at, holder }, 'lease seen');
            }
          },
        );
      } catch (err) {
        if (!signal.aborted) log.debug({ err, lease: this.leaseName }, 'lease watch failed');
      }
      await sleep(retryPeriodMs, signal);
    }
  }

  /**
   * Notes a record read or watched at `now`: a new one starts its lease duration anew. Says
   * whether it was new.
   */
  #see(spec: LeaseSpec, now: number): boolean {
    const record = JSON.stringify(spec);
    const changed = record !== this.#observedRecord;
    if (changed) {
      this.#observedRecord = record;
      this.#observedAt = now;
    }
    const holder = spec.holderIdentity ?? '';
    const held = holder !== '' && holder !== this.#o.identity;
    this.#heldUntil = held ? this.#observedAt + (spec.leaseDurationSeconds ?? 0) * 1000 : 0;
    if (!held) this.#wake?.();
    return changed;
  }

  async #renewLoop(signal: AbortSignal): Promise<ElectionEnd> {
    const { renewDeadlineMs, retryPeriodMs, log } = this.#o;
    let renewedAt = Date.now();
    while (!signal.aborted) {
      await sleep(retryPeriodMs, signal);
      if (signal.aborted) break;
      const attempt = AbortSignal.any([signal, AbortSignal.timeout(renewDeadlineMs)]);
      if (await this.#attempt(attempt)) renewedAt = Date.now();
      else if (Date.now() - renewedAt > renewDeadlineMs) {
        log.error({ lease: this.leaseName }, 'failed to renew the lease in time; stepping down');
        return 'lost';
      }
    }
    return 'stopped';
  }

  /**
   * One try to acquire or renew; false when someone else holds it or the write raced. Each try
   * is logged at debug level with what it saw and how long its requests took: how long a
   * hand-over took, and why, is read from these lines (bench:leader-handover).
   */
  async #attempt(signal: AbortSignal): Promise<boolean> {
    const trace: AttemptTrace = { at: Date.now(), outcome: 'failed' };
    try {
      return await this.#tryAcquireOrRenew(signal, trace);
    } catch (err) {
      if (!signal.aborted) this.#o.log.warn({ err, lease: this.leaseName }, 'lease update failed');
      return false;
    } finally {
      this.#o.log.debug({ lease: this.leaseName, ...trace }, 'lease attempt');
    }
  }

  async #tryAcquireOrRenew(signal: AbortSignal, trace: AttemptTrace): Promise<boolean> {
    const { client, namespace, name, identity } = this.#o;
    const now = trace.at;
    let lease: Lease;
    try {
      lease = await client.request<Lease>({
        method: 'GET',
        path: objectPath(LEASE, namespace, name),
        signal,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      trace.getMs = Date.now() - now;
      const metadata = { name, namespace };
      const fresh: Lease = { apiVersion: apiVersionOf(LEASE), kind: 'Lease', metadata };
      const spec = this.#nextSpec(undefined, now);
      return this.#traced(trace, 'acquired', () => this.#write('POST', { ...fresh, spec }, signal));
    }
    trace.getMs = Date.now() - now;
    const spec = lease.spec ?? {};
    trace.newRecord = this.#see(spec, now);
    const holder = spec.holderIdentity ?? '';
    trace.holder = holder;
    if (this.#heldUntil !== 0 && now < this.#heldUntil) {
      trace.outcome = 'held';
      return false;
    }
    const next = { ...lease, spec: this.#nextSpec(spec, now) };
    const outcome = holder === identity ? 'renewed' : 'acquired';
    return this.#traced(trace, outcome, () => this.#write('PUT', next, signal));
  }

  /** Runs a write of `trace`'s attempt, noting its duration and outcome. */
  async #traced(
    trace: AttemptTrace,
    outcome: 'acquired' | 'renewed',
    write: () => Promise<boolean>,
  ): Promise<boolean> {
    const started = Date.now();
    const written = await write();
    trace.writeMs = Date.now() - started;
    trace.outcome = written ? outcome : 'conflict';
    return written;
  }

  #nextSpec(current: LeaseSpec | undefined, now: number): LeaseSpec {
    const { identity, leaseDurationMs } = this.#o;
    const held = current?.holderIdentity === identity;
    return {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: held ? current?.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (current?.leaseTransitions ?? 0) + (current === undefined || held ? 0 : 1),
    };
  }

  async #write(method: 'POST' | 'PUT', lease: Lease, signal: AbortSignal): Promise<boolean> {
    const { client, namespace, name } = this.#o;
    const path =
      method === 'POST' ? collectionPath(LEASE, namespace) : objectPath(LEASE, namespace, name);
    try {
      this.#lease = await client.request<Lease>({ method, path, body: lease, signal });
    } catch (err) {
      // AlreadyExists and Conflict both mean another candidate wrote first.
      if (isConflict(err)) return false;
      throw err;
    }
    this.#observedRecord = JSON.stringify(this.#lease.spec ?? {});
    this.#observedAt = Date.now();
    return true;
  }

  async #release(): Promise<void> {
    const lease = this.#lease;
    if (lease === undefined) return;
    const now = microTime(Date.now());
    const spec: LeaseSpec = {
      leaseTransitions: lease.spec?.leaseTransitions,
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
    };
    try {
      await this.#write('PUT', { ...lease, spec }, AbortSignal.timeout(this.#o.renewDeadlineMs));
      this.#o.log.info({ lease: this.leaseName }, 'released leadership');
    } catch (err) {
      this.#o.log.warn({ err, lease: this.leaseName }, 'could not release the lease');
    }
  }
}
