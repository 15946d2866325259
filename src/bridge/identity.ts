/**
 * Who is on either side of a request, as the rooms of the bridge pass it between them, and how
 * a request ended: what the policy judges, auth proves, the upstream routes and the metrics
 * count, kept apart from all of them so that none imports another for it.
 */

import type { Span } from '@opentelemetry/api';
import { META } from '../mcp/metadata.ts';
import { STATELESS_VERSION } from '../mcp/versions.ts';

/** Who sent a request, as its OAuth access token proves (auth/oauth.ts): what it was granted. */
export interface Caller {
  scopes: ReadonlySet<string>;
  /** Whom the token speaks for: `sub`, else `client_id`; a session is bound to it. */
  subject?: string;
  /** The token's `client_id` claim (RFC 9068, RFC 7662), for the audit trail. */
  clientId?: string;
}

/**
 * What the policy found for the target of a request it screened (policy/gate.ts), for the
 * audit trail: the digest of its definition as the server lists it now, and the digest it was
 * approved with. A field stays absent when there is nothing to say (no policy, not approved).
 */
export interface Verdict {
  current?: string;
  approved?: string;
}

/**
 * Where a client request came from, as the HTTP front saw it, for the audit trail. It rides on
 * the request under a symbol key: spreads of the message keep it, JSON.stringify leaves it out,
 * so it passes through the session and the upstream without a parameter of its own and never
 * reaches the wire.
 */
export const ARRIVAL = Symbol('arrival');

export interface Arrival {
  /** The client's address (the TCP peer). */
  source: string | undefined;
  protocolVersion: string | undefined;
  /** The Mcp-Session-Id the request named; undefined for 2026-07-28 requests. */
  sessionId: string | undefined;
}

/** A message that may carry its Arrival. */
export type Arrived = { [ARRIVAL]?: Arrival };

/**
 * The bridge's trace span of a client request (audit/spans.ts), started when the front reads
 * the request and ended when the request ends. It rides on the request as ARRIVAL does; only
 * when tracing is on.
 */
export const SPAN = Symbol('span');

/** A message that may carry its span. */
export type Spanned = { [SPAN]?: Span };

/** How a request to the server ended, as the request metrics label it. */
export type Outcome = 'ok' | 'error' | 'timeout' | 'cancelled' | 'child_exit' | 'refused';

/** The client's identity when the bridge itself talks to a child (probe, 2026-07-28 clients). */
export const BRIDGE_CLIENT_INFO = { name: 'mcp-operator-bridge', version: '0.1.0' };

/**
 * The `_meta` of the bridge's own requests to a child that speaks 2026-07-28 (basic,
 * "Per-request protocol fields": version and capabilities are required on every request).
 */
export const BRIDGE_REQUEST_META = {
  [META.protocolVersion]: STATELESS_VERSION,
  [META.clientCapabilities]: {},
  [META.clientInfo]: BRIDGE_CLIENT_INFO,
};
