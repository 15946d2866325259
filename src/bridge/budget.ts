/**
 * Bounds on what the bridge holds for MCP servers that do not keep up. Without them, messages
 * for a child that reads slower than clients send pile up in the bridge until it runs out of
 * memory, and that ends every session of the pod. Counted, per session and for the whole
 * bridge, are the bytes of client messages the bridge still holds:
 *
 * - a POST body while it is read and handed on (endpoint.ts);
 * - a request the child has not answered, whose params stay with it (upstream.ts);
 * - a line written to the child's stdin that the child has not read yet: the stream buffers
 *   it from `write()` until its callback (transport.ts). That is what `write()` returning
 *   false and 'drain' report; the bound here caps the buffer instead of pausing one child.
 *
 * A POST that would pass a bound is refused while its body is read: 429 when its session
 * holds too much, 503 when the bridge does. What is admitted is always delivered, so a bound
 * holds to within one message.
 */

/** The bound a message would pass. */
export type Bound = 'session' | 'bridge';

export interface BudgetLimits {
  /** Bytes one session may have waiting for its child. */
  session: number;
  /** Bytes all sessions together may have waiting. */
  bridge: number;
}

/** The bridge's bytes in flight; `held` is kept by its accounts. */
export class ByteBudget {
  readonly limits: BudgetLimits;
  held = 0;

  constructor(limits: BudgetLimits) {
    this.limits = limits;
  }

  /** An account for one session, or for messages that belong to none. */
  account(): Account {
    return new Account(this);
  }
}

export class Account {
  readonly #budget: ByteBudget;
  held = 0;

  constructor(budget: ByteBudget) {
    this.#budget = budget;
  }

  /** Takes `bytes` unless that passes a bound; then names the bound and takes nothing. */
  admit(bytes: number): Bound | undefined {
    const budget = this.#budget;
    if (this.held + bytes > budget.limits.session) return 'session';
    if (budget.held + bytes > budget.limits.bridge) return 'bridge';
    this.take(bytes);
    return undefined;
  }

  /** Takes `bytes` whatever the bounds: for what was admitted and is carried on. */
  take(bytes: number): void {
    this.held += bytes;
    this.#budget.held += bytes;
  }

  give(bytes: number): void {
    this.held -= bytes;
    this.#budget.held -= bytes;
  }
}
