/**
 * The one guard around every entry point of the bridge: each HTTP request, each message from a
 * child or an HTTP upstream, each reload of a watched file. A client or a server can send
 * anything, and a throw that escapes its entry point ends the process, with every session and
 * child in it. Inside the guard a throw (or a rejection of what the work returns) costs only
 * that unit of work: `fail` answers it with an error (HTTP 500, or a JSON-RPC error for the
 * request the message belonged to), and the throw is logged once, here, and counted.
 */

import type { Logger } from 'pino';

/** Where work enters the bridge: the label of the failures counter (metrics.ts). */
export type EntryPoint = 'http_request' | 'child_message' | 'watched_file';

export interface EntryGuard {
  /**
   * Runs `work`; a throw or a rejection calls `fail` with the error instead of escaping.
   * `context` goes into the one log line (never a message's content: it may hold secrets).
   */
  run(
    entry: EntryPoint,
    context: Record<string, unknown>,
    work: () => unknown,
    fail: (error: unknown) => void,
  ): void;
}

export function entryGuard(logger: Logger, counted: (entry: EntryPoint) => void): EntryGuard {
  const failed = (
    entry: EntryPoint,
    context: Record<string, unknown>,
    error: unknown,
    fail: (error: unknown) => void,
  ): void => {
    counted(entry);
    logger.error({ err: error, entry, ...context }, `${entry} failed; only it is affected`);
    try {
      fail(error);
    } catch (again) {
      // What answers a failure must not be the next thing to escape.
      logger.error({ err: again, entry, ...context }, `${entry}: answering the failure failed`);
    }
  };
  return {
    run(entry, context, work, fail) {
      let result: unknown;
      try {
        result = work();
      } catch (error) {
        failed(entry, context, error, fail);
        return;
      }
      if (result instanceof Promise)
        result.catch((error: unknown) => failed(entry, context, error, fail));
    },
  };
}
