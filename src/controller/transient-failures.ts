/**
 * Which failed passes are told in status. A loaded API server answers some writes with a
 * timeout or 429 that the work queue's next retry clears: at 2,000 servers created at once,
 * one in fifty passes met a 30 s timeout, and each then wrote Ready=False (ApplyFailed) and a
 * Warning Event — two more writes to the server that was already too busy — and flipped back
 * to Ready moments later. Such a failure is retried quietly for `graceMs`, and told only when
 * it persists. Any other failure (an invalid object, a refusal, an admission webhook's error)
 * is told at once: retrying does not fix those.
 */
import { isTransient } from '../kube/client.ts';

export class TransientFailures {
  readonly #graceMs: number;
  /** When each key's current run of transient failures began. */
  readonly #since = new Map<string, number>();

  constructor(graceMs: number) {
    this.#graceMs = graceMs;
  }

  /** True when `err` of `key`'s pass is only to be retried, not yet told in status. */
  holdBack(key: string, err: unknown, now: number): boolean {
    if (!isTransient(err)) {
      this.#since.delete(key);
      return false;
    }
    const since = this.#since.get(key) ?? now;
    this.#since.set(key, since);
    return now - since < this.#graceMs;
  }

  /** The pass applied everything: a later failure starts a new run. */
  forget(key: string): void {
    this.#since.delete(key);
  }
}
