/**
 * Warm pool: children started ahead of need, so that a new PerSession session does not pay the
 * server's cold start (`npx`/`uvx` resolving packages, an interpreter loading). A pooled child
 * has received nothing yet; `initialize` is still the client's to send.
 */

import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Launcher, Transport } from '../transport.ts';

/** Restart delays after failures, so a server that cannot start does not spin. */
const BACKOFF_MS = { first: 500, max: 30_000 };
/** A pooled child that dies sooner than this after starting counts as a failure. */
const HEALTHY_AFTER_MS = 5_000;

export class WarmPool implements Launcher {
  readonly #launcher: Launcher;
  readonly #size: number;
  readonly #logger: Logger;
  readonly #ready: Transport[] = [];
  #starting = 0;
  #backoffMs = 0;
  #closed = false;

  constructor(launcher: Launcher, size: number, logger: Logger) {
    this.#launcher = launcher;
    this.#size = size;
    this.#logger = logger;
    this.#refill();
  }

  /** Children waiting in the pool. */
  get size(): number {
    return this.#ready.length;
  }

  async launch(): Promise<Transport> {
    const transport = this.#ready.shift();
    this.#refill();
    return transport ?? this.#launcher.launch();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const ready = this.#ready.splice(0);
    await Promise.all(ready.map((transport) => transport.close()));
    await this.#launcher.close();
  }

  #refill(): void {
    while (!this.#closed && this.#ready.length + this.#starting < this.#size) {
      this.#starting++;
      void this.#startOne().finally(() => this.#starting--);
    }
  }

  async #startOne(): Promise<void> {
    if (this.#backoffMs > 0) await sleep(this.#backoffMs);
    const startedAt = Date.now();
    let transport: Transport;
    try {
      transport = await this.#launcher.launch();
    } catch (error) {
      this.#failed(error);
      return;
    }
    if (this.#closed) {
      await transport.close();
      return;
    }
    transport.attach({
      onMessage: () =>
        this.#logger.warn(
          { child: transport.label },
          'pooled MCP server sent a message before initialize; dropped',
        ),
      onBadLine: () => undefined,
      onClose: (reason) => {
        const index = this.#ready.indexOf(transport);
        if (index === -1) return;
        this.#ready.splice(index, 1);
        if (Date.now() - startedAt < HEALTHY_AFTER_MS) this.#failed(reason);
        this.#refill();
      },
    });
    this.#ready.push(transport);
    this.#backoffMs = 0;
  }

  #failed(error: unknown): void {
    this.#backoffMs = Math.min(Math.max(this.#backoffMs * 2, BACKOFF_MS.first), BACKOFF_MS.max);
    this.#logger.error(
      { err: error, retryInMs: this.#backoffMs },
      'warm pool could not start an MCP server',
    );
    // #startOne's finally decrements #starting after this returns; refill on the next turn.
    setImmediate(() => this.#refill());
  }
}
