/**
 * The children the bridge initializes for 2026-07-28 clients in PerSession mode, one for each
 * set of input capabilities the clients declare (SessionTable.era2026Upstream): a child of the
 * handshake era hears its client's capabilities once, at initialize. A client chooses what it
 * declares, so every such child counts: at most --max-sessions of them at once. One idle for
 * longer than --idle-timeout is stopped; at the limit, the least recently used idle one makes
 * room; when none is idle, the request is refused (SessionLimitError).
 */

import type { Upstream } from '../upstream.ts';

/** An upstream started on first use, and again on the next use after its child ended. */
export class LazyUpstream {
  readonly #start: () => Promise<Upstream>;
  #current: Promise<Upstream> | undefined;

  constructor(start: () => Promise<Upstream>) {
    this.#start = start;
  }

  async get(): Promise<Upstream> {
    const current = this.#current;
    if (current) {
      // A start that failed fails everyone who waited for it; only the next caller tries again.
      const upstream = await current;
      if (!upstream.isClosed) return upstream;
      if (this.#current === current) this.#current = undefined;
      return this.get();
    }
    const started = this.#start();
    this.#current = started;
    started.catch(() => {
      if (this.#current === started) this.#current = undefined;
    });
    return started;
  }
}

/** Refused: every child the limit allows is busy. */
export class ChildLimitError extends Error {
  constructor(limit: number) {
    super(`all ${limit} children for 2026-07-28 clients are busy`);
  }
}

interface Child {
  lazy: LazyUpstream;
  /** The child once started (it may have ended since: `lazy` starts another). */
  upstream: Upstream | undefined;
  /** Requests that asked for it and have not got it yet. */
  waiting: number;
  lastUsed: number;
}

export interface TranslatingChildrenOptions {
  limit: number;
  idleMs: number;
  start: (capabilities: Record<string, unknown>) => Promise<Upstream>;
  /** Stops a child no longer wanted (its close is not a crash). */
  stop: (upstream: Upstream) => void;
  /** Something still holds the child (a listen stream): it is not idle. */
  held: (upstream: Upstream) => boolean;
}

export class TranslatingChildren {
  readonly #options: TranslatingChildrenOptions;
  /** By the JSON of the input capabilities they were told. */
  readonly #children = new Map<string, Child>();

  constructor(options: TranslatingChildrenOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#children.size;
  }

  /** The child for `capabilities`, started if need be; throws ChildLimitError at the limit. */
  async get(capabilities: Record<string, unknown>): Promise<Upstream> {
    const key = JSON.stringify(capabilities);
    let child = this.#children.get(key);
    if (!child) {
      if (this.#children.size >= this.#options.limit) this.#makeRoom();
      child = {
        lazy: new LazyUpstream(() => this.#options.start(capabilities)),
        upstream: undefined,
        waiting: 0,
        lastUsed: Date.now(),
      };
      this.#children.set(key, child);
    }
    child.waiting++;
    try {
      child.upstream = await child.lazy.get();
      return child.upstream;
    } finally {
      child.waiting--;
      child.lastUsed = Date.now();
    }
  }

  /** Stops the children idle for longer than the idle timeout. */
  sweep(now: number): void {
    for (const [key, child] of this.#children) {
      if (this.#idle(child) && now - child.lastUsed > this.#options.idleMs) this.#remove(key);
    }
  }

  #makeRoom(): void {
    let oldest: [string, Child] | undefined;
    for (const entry of this.#children) {
      if (this.#idle(entry[1]) && (!oldest || entry[1].lastUsed < oldest[1].lastUsed))
        oldest = entry;
    }
    if (!oldest) throw new ChildLimitError(this.#options.limit);
    this.#remove(oldest[0]);
  }

  #idle(child: Child): boolean {
    if (child.waiting > 0) return false;
    const upstream = child.upstream;
    return (
      upstream === undefined ||
      upstream.isClosed ||
      (upstream.inFlight === 0 && !this.#options.held(upstream))
    );
  }

  #remove(key: string): void {
    const upstream = this.#children.get(key)?.upstream;
    this.#children.delete(key);
    if (upstream && !upstream.isClosed) this.#options.stop(upstream);
  }
}
