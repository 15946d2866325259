/**
 * Bounds on what the bridge holds for MCP servers that do not keep up. Without them, messages
 * for a child that reads slower than clients send pile up in the bridge until it runs out of
 * memory, and that ends every session of the pod. Counted, per session and for the whole
 * bridge, are the bytes of client messages the bridge still holds. Each message is counted
 * once, by one holder at a time:
 *
 * - its POST body from the first byte read until it is handed on (endpoint.ts); then
 * - a request: by the upstream until it is answered, cancelled or timed out (upstream.ts). Its
 *   line on the way to the child is covered by that and not counted again;
 * - a notification or response: by the transport while its line waits for the child to read
 *   it: the stream buffers it from `write()` until its callback (transport.ts). That is what
 *   `write()` returning false and 'drain' report; the bound caps the buffer instead of pausing
 *   one child.
 *
 * A holder takes the bytes before the one before it gives them back, in the same synchronous
 * step, so no admission decision ever sees a message twice or not at all. Lines the bridge
 * itself writes to a child (cancellations, refusals of its requests) count on the upstream's
 * own account while they wait.
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
