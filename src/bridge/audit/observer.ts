/**
 * What the HTTP front and the upstream tell about each client request: that it arrived, that
 * the front refused it, that it ended. The audit trail (trail.ts) and the request spans
 * (spans.ts) both listen; the front sees one observer either way.
 */

import type { IncomingMessage } from 'node:http';
import type { JsonRpcMessage } from '../../mcp/jsonrpc.ts';
import type { EndedRequest } from '../upstream.ts';
import type { Refusal } from './trail.ts';

export interface RequestObserver {
  /** A message the front read and passes on; the observer may mark it (ARRIVAL, SPAN). */
  arrived(req: IncomingMessage, message: JsonRpcMessage): void;
  /** A request the front refused (Origin, token, budgets, sessions). */
  refused(req: IncomingMessage, refusal: Refusal): void;
  /** The upstream's onRequestEnd. */
  readonly requestEnded: (ended: EndedRequest) => void;
}

/** One observer for those present; undefined when none is: nothing to call on the hot path. */
export function observeAll(
  ...observers: (RequestObserver | undefined)[]
): RequestObserver | undefined {
  const present = observers.filter((observer) => observer !== undefined);
  if (present.length <= 1) return present[0];
  return {
    arrived(req, message) {
      for (const observer of present) observer.arrived(req, message);
    },
    refused(req, refusal) {
      for (const observer of present) observer.refused(req, refusal);
    },
    requestEnded(ended) {
      for (const observer of present) observer.requestEnded(ended);
    },
  };
}
