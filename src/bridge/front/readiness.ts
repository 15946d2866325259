/**
 * Whether the bridge takes sessions and is ready for them: `/readyz`, and the probe that finds
 * out whether the MCP server answers at all.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { replyText } from '../replies.ts';
import type { Route } from './http-server.ts';
import type { SessionTable } from './session-table.ts';

/** The policy file as far as readiness cares: what is in force, and why nothing is. */
interface LoadedPolicy {
  readonly value: unknown;
  readonly error: string | undefined;
}

export class Readiness {
  readonly #policy: LoadedPolicy | undefined;
  readonly #stopProbing = new AbortController();
  #accepting = true;
  #ready = false;

  constructor(policy: LoadedPolicy | undefined) {
    this.#policy = policy;
  }

  /** False once shutting down: no new sessions. */
  get accepting(): boolean {
    return this.#accepting;
  }

  /** Probes until a child answers, then counts as ready; resolves when probing has ended. */
  async probe(bridge: SessionTable, logger: Logger): Promise<void> {
    this.#ready = await probeUntilReady(bridge, logger, this.#stopProbing.signal);
  }

  /** Shutting down: stop taking sessions and stop probing. */
  stopAccepting(): void {
    this.#accepting = false;
    this.#stopProbing.abort();
  }

  /** `/readyz`: 200 when ready, else 503 with what is missing. */
  readonly route: Route = (_req, res) => {
    const problem = this.#problem();
    replyText(
      res,
      problem === undefined ? 200 : 503,
      problem === undefined ? 'ready\n' : `not ready: ${problem}\n`,
    );
  };

  #problem(): string | undefined {
    if (!this.#accepting) return 'shutting down';
    if (!this.#ready) return 'no MCP server has answered yet';
    // A policy update that does not parse leaves the last good one in force: still ready.
    const policy = this.#policy;
    return policy && policy.value === undefined ? `no policy loaded (${policy.error})` : undefined;
  }
}

/** Probes until a child answers; backs off between attempts; gives up when shutting down. */
async function probeUntilReady(
  bridge: SessionTable,
  logger: Logger,
  stop: AbortSignal,
): Promise<boolean> {
  for (let delay = 500; !stop.aborted; delay = Math.min(delay * 2, 30_000)) {
    try {
      await bridge.probe();
      logger.info('readiness probe passed: the MCP server answers initialize and ping');
      return true;
    } catch (error) {
      if (stop.aborted) break;
      logger.error({ err: error, retryInMs: delay }, 'readiness probe failed');
    }
    await sleep(delay, undefined, { signal: stop }).catch(() => undefined);
  }
  return false;
}
