/**
 * The work queue between watches and reconcile, with client-go's workqueue guarantees:
 *
 * - a key is queued at most once, however many events name it (deduplication);
 * - a key is never processed by two workers at once; a key added while it is being processed
 *   runs once more afterwards, so no change is lost (level-triggered: the handler re-reads);
 * - at most `concurrency` keys are processed at a time;
 * - a failing key is retried after a per-key exponential delay, reset by its next success;
 * - `shutdown()` stops handing out keys and waits for the ones in flight.
 */
import { backoffDelay, type Backoff } from './backoff.ts';

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

export class WorkQueue {
  readonly #o: QueueOptions;
  /** Keys waiting for a worker, in arrival order; none of them is being processed. */
  readonly #ready = new Set<string>();
  readonly #processing = new Set<string>();
  /** Keys added while being processed: they go back to `#ready` when their run ends. */
  readonly #rerun = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #inFlight = new Set<Promise<void>>();
  #state: 'idle' | 'running' | 'stopped' = 'idle';

  constructor(options: QueueOptions) {
    this.#o = options;
  }

  /** Keys waiting for a worker (not counting delayed retries). */
  get depth(): number {
    return this.#ready.size + this.#rerun.size;
  }

  add(key: string): void {
    if (this.#state === 'stopped') return;
    if (this.#processing.has(key)) this.#rerun.add(key);
    else this.#ready.add(key);
    this.#pump();
  }

  /** Adds `key` after `ms`; an earlier pending add of the same key wins. */
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

  #pump(): void {
    while (
      this.#state === 'running' &&
      this.#processing.size < this.#o.concurrency &&
      this.#ready.size > 0
    ) {
      const key = this.#ready.values().next().value!;
      this.#ready.delete(key);
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
      if (this.#rerun.delete(key)) this.#ready.add(key);
      this.#pump();
    }
  }
}
