/**
 * The work queue between watches and reconcile, with client-go's workqueue guarantees:
 *
 * - a key is queued at most once, however many events name it (deduplication);
 * - a key is never processed by two workers at once; a key added while it is being processed
 *   runs once more afterwards, so no change is lost (level-triggered: the handler re-reads);
 * - at most `concurrency` keys are processed at a time;
 * - a failing key is retried after a per-key exponential delay, reset by its next success;
 * - `shutdown()` stops handing out keys and waits for the ones in flight.
 *
 * Two lanes, `fast` and `normal`, each in arrival order. The lane rule:
 *
 * - A free worker takes the oldest key of the fast lane, except that a normal key never waits
 *   behind more than FAST_KEYS_PER_NORMAL fast keys handed out since the last normal one: the
 *   normal lane gets at least one key in FAST_KEYS_PER_NORMAL + 1, however many fast keys come.
 * - A key is in one lane at a time. Added to the fast lane while it waits in the normal one, it
 *   moves to the end of the fast lane; added to the normal lane while it waits in the fast one,
 *   it stays there. A key added while it is being processed runs once more in the faster of
 *   the lanes it was added to.
 * - Delayed adds (`addAfter`, retries, requeues) join the normal lane: a retry is no news.
 */
import { backoffDelay, type Backoff } from './backoff.ts';

export type Lane = 'fast' | 'normal';

/**
 * A fast key's pass observes a change that already happened (a rollout's progress), and is
 * cheap: it writes at most a status. A burst as long as the events one new object brings
 * (about ten: its rendered objects created, then the Deployment's and the Pod's status moving
 * on) lets the fast lane keep up with what the normal lane starts.
 */
export const FAST_KEYS_PER_NORMAL = 10;

export interface HandlerResult {
  /** Process the key again after this many milliseconds (e.g. to poll a slow rollout). */
  requeueAfterMs?: number;
}

export interface QueueOptions {
  concurrency: number;
  handler: (key: string) => Promise<HandlerResult | void>;
  /** Told of every failure before the key is retried after `retryInMs`. */
  onError: (key: string, err: unknown, retryInMs: number) => void;
  retryBackoff?: Backoff;
}

const DEFAULT_RETRY: Backoff = { baseMs: 200, maxMs: 300_000 };

const faster = (a: Lane | undefined, b: Lane): Lane => (a === 'fast' ? a : b);

export class WorkQueue {
  readonly #o: QueueOptions;
  /** Keys waiting for a worker, by lane, in arrival order; none of them is being processed. */
  readonly #waiting: Record<Lane, Set<string>> = { fast: new Set(), normal: new Set() };
  readonly #processing = new Set<string>();
  /** Keys added while being processed, and their lane once their run ends. */
  readonly #rerun = new Map<string, Lane>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #inFlight = new Set<Promise<void>>();
  /** Fast keys handed out since the last normal one. */
  #fastInARow = 0;
  #state: 'idle' | 'running' | 'stopped' = 'idle';

  constructor(options: QueueOptions) {
    this.#o = options;
  }

  /**
   * Keys waiting for a worker, by lane (not counting delayed retries); a key to be rerun counts
   * in the lane it will join.
   */
  get depth(): Record<Lane, number> {
    const depth = { fast: this.#waiting.fast.size, normal: this.#waiting.normal.size };
    for (const lane of this.#rerun.values()) depth[lane] += 1;
    return depth;
  }

  add(key: string, lane: Lane = 'normal'): void {
    if (this.#state === 'stopped') return;
    if (this.#processing.has(key)) this.#rerun.set(key, faster(this.#rerun.get(key), lane));
    else this.#enter(key, lane);
    this.#pump();
  }

  /** Adds `key` to the normal lane after `ms`; an earlier pending add of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.#state === 'stopped') return;
    const at = Date.now() + ms;
    const pending = this.#timers.get(key);
    if (pending !== undefined && pending.at <= at) return;
    if (pending !== undefined) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, ms);
    this.#timers.set(key, { at, timer });
  }

  start(): void {
    this.#state = 'running';
    this.#pump();
  }

  /** Stops handing out keys, drops delayed ones, and resolves when in-flight keys are done. */
  async shutdown(): Promise<void> {
    this.#state = 'stopped';
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    await Promise.all(this.#inFlight);
  }

  #enter(key: string, lane: Lane): void {
    const { fast, normal } = this.#waiting;
    if (lane === 'fast') {
      normal.delete(key);
      fast.add(key);
    } else if (!fast.has(key)) {
      normal.add(key);
    }
  }

  /** The next key by the lane rule, taken out of its lane. */
  #take(): string {
    const { fast, normal } = this.#waiting;
    const normalTurn =
      normal.size > 0 && (fast.size === 0 || this.#fastInARow >= FAST_KEYS_PER_NORMAL);
    this.#fastInARow = normalTurn ? 0 : this.#fastInARow + 1;
    const lane = normalTurn ? normal : fast;
    const key = lane.values().next().value!;
    lane.delete(key);
    return key;
  }

  #pump(): void {
    while (
      this.#state === 'running' &&
      this.#processing.size < this.#o.concurrency &&
      this.#waiting.fast.size + this.#waiting.normal.size > 0
    ) {
      const key = this.#take();
      this.#processing.add(key);
      const run = this.#process(key);
      this.#inFlight.add(run);
      void run.finally(() => this.#inFlight.delete(run));
    }
  }

  async #process(key: string): Promise<void> {
    try {
      const result = await this.#o.handler(key);
      this.#failures.delete(key);
      if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
    } catch (err) {
      const attempt = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, attempt);
      const retryInMs = backoffDelay(attempt, this.#o.retryBackoff ?? DEFAULT_RETRY);
      this.#o.onError(key, err, retryInMs);
      this.addAfter(key, retryInMs);
    } finally {
      this.#processing.delete(key);
      const lane = this.#rerun.get(key);
      if (lane !== undefined) {
        this.#rerun.delete(key);
        this.#enter(key, lane);
      }
      this.#pump();
    }
  }
}
