/**
 * Writes whose watch event has not reached the cache yet. Reconcile reads the cache, and a pass
 * that runs right after the previous one's write can still see the object from before it; it
 * would send the same write again. A write recorded here is not repeated until the cache shows
 * it (the caller says when: our hash annotation is there) or a short time has passed (the event
 * may never come, after a relist): the pass asks to be requeued for then instead.
 *
 * resourceVersions cannot tell "caught up": they are opaque, and other writers (the Deployment
 * controller, discovery) move them on right after ours.
 */

interface Pending {
  digest: string;
  until: number;
}

export class PendingWrites {
  readonly #ttlMs: number;
  readonly #pending = new Map<string, Pending>();
  #sweptAt = 0;

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  record(key: string, digest: string): void {
    const now = Date.now();
    // Entries of objects that went away are never looked up again: drop expired ones now and then.
    if (now - this.#sweptAt > this.#ttlMs) {
      this.#sweptAt = now;
      for (const [k, p] of this.#pending) if (p.until <= now) this.#pending.delete(k);
    }
    this.#pending.set(key, { digest, until: now + this.#ttlMs });
  }

  /**
   * Milliseconds to wait when `digest` was just written to `key` and the cache has not caught
   * up; undefined when the write should go ahead.
   */
  waitMs(key: string, digest: string, caughtUp: boolean): number | undefined {
    const p = this.#pending.get(key);
    if (p === undefined) return undefined;
    const left = p.until - Date.now();
    if (p.digest !== digest || caughtUp || left <= 0) {
      this.#pending.delete(key);
      return undefined;
    }
    return left;
  }
}
