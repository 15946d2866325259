/**
 * Replicas of a stdio server (docs/adr/0007-scaling-out-stdio-servers.md). Each bridge holds
 * its own sessions and their children; the Service in front spreads requests over the pods
 * without affinity. So a session id starts with the tag of the replica that holds it, and a
 * bridge that gets a request for another replica's session forwards the HTTP request, as is
 * and streamed both ways, to that replica: clients need no affinity and no change. The
 * `requestState` of a 2026-07-28 call parked for input (era-2026.ts) is named the same way, and
 * its retry is forwarded to the replica that holds the call.
 *
 * The tag is a digest of the replica's address, and a bridge forwards only to an address in
 * its current peer set (the addresses its `--peers` names resolve to, a headless Service of the
 * server's own pods), found by tag: a session id a client made up can name no other target.
 * A tag no peer has is answered here, with 404 like any unknown session (2025-11-25
 * basic/transports §Session Management 3: the client then starts a new session).
 */

import { createHash, randomUUID } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import {
  Agent,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { header } from './guards.ts';
import { WIRE } from '../../mcp/jsonrpc.ts';
import { HEADER } from '../../mcp/metadata.ts';
import { replyError } from '../replies.ts';

/** Marks a forwarded request: the replica it reaches answers it itself, whatever its tag says. */
const FORWARDED_HEADER = 'mcp-operator-forwarded-by';

/** Characters of the tag: 72 bits of SHA-256, base64url, which is visible ASCII as ids must be. */
const TAG_LENGTH = 12;

/** A new connection to a peer that takes longer than this means the peer is gone. */
const CONNECT_TIMEOUT_MS = 5_000;

/** An unknown tag resolves the peers again, at most this often (a flood of made-up ids). */
const REFRESH_INTERVAL_MS = 1_000;

/** Errors that say the peer is not there any more, so neither are its sessions. */
const GONE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

/** Hop-by-hop headers (RFC 9110 §7.6.1) and Host: they describe one connection, not the message. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** The tag of the replica at `address` (`host:port`). */
export function replicaTag(address: string): string {
  return createHash('sha256').update(address).digest('base64url').slice(0, TAG_LENGTH);
}

/** `host:port` (also `[v6]:port`, or a bare v6 address with the port after its last colon). */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const match = /^\[?(.+?)\]?:(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[2]);
  if (match === null || port < 1 || port > 65535) return undefined;
  return { host: match[1]!, port };
}

interface Peer {
  host: string;
  port: number;
}

export type PeerLookup = (host: string) => Promise<readonly string[]>;

const systemLookup: PeerLookup = async (host) =>
  (await dnsLookup(host, { all: true })).map((entry) => entry.address);

export interface ReplicaOptions {
  /** Where the peers reach this bridge, `host:port`. */
  self: string;
  /** `host:port` entries; names are resolved to all their addresses. */
  peers: readonly string[];
  logger: Logger;
  lookup?: PeerLookup;
}

export class ReplicaRouter {
  readonly #selfTag: string;
  readonly #entries: Peer[];
  readonly #logger: Logger;
  readonly #lookup: PeerLookup;
  readonly #agent = new Agent({ keepAlive: true });
  #peers = new Map<string, Peer>();
  #refreshedAt = -Infinity;
  #refreshing: Promise<void> | undefined;

  constructor(options: ReplicaOptions) {
    const self = parseHostPort(options.self);
    if (self === undefined) throw new TypeError(`not host:port: ${options.self}`);
    this.#selfTag = replicaTag(`${self.host}:${self.port}`);
    this.#entries = options.peers.map((entry) => {
      const peer = parseHostPort(entry);
      if (peer === undefined) throw new TypeError(`not host:port: ${entry}`);
      return peer;
    });
    this.#logger = options.logger;
    this.#lookup = options.lookup ?? systemLookup;
  }

  /** An id for a session or a parked call of this replica: its tag, a dot, a random UUID. */
  newId(): string {
    return `${this.#selfTag}.${randomUUID()}`;
  }

  /**
   * Forwards the request when its session id names another replica of the peer set, and
   * returns true; false when this replica answers it (its own session, no session, an unknown
   * tag, or a request a peer already forwarded).
   */
  async route(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const peer = await this.#owner(req, header(req, HEADER.sessionId));
    if (peer === undefined) return false;
    this.#forward(req, res, peer);
    return true;
  }

  /**
   * Forwards a 2026-07-28 retry whose `requestState` (unknown here) names another replica of
   * the peer set, with the message as read, and returns true; false when this replica answers.
   */
  async routeParked(
    req: IncomingMessage,
    res: ServerResponse,
    state: string,
    message: unknown,
  ): Promise<boolean> {
    const peer = await this.#owner(req, state);
    if (peer === undefined) return false;
    this.#forward(req, res, peer, JSON.stringify(message));
    return true;
  }

  /** The peer whose tag `id` carries; undefined for this replica's, unknown or forwarded ones. */
  async #owner(req: IncomingMessage, id: string | undefined): Promise<Peer | undefined> {
    if (id === undefined || header(req, FORWARDED_HEADER) !== undefined) return undefined;
    const tag = id.slice(0, id.indexOf('.'));
    if (tag.length !== TAG_LENGTH || tag === this.#selfTag) return undefined;
    return this.#peer(tag);
  }

  close(): void {
    this.#agent.destroy();
  }

  async #peer(tag: string): Promise<Peer | undefined> {
    const known = this.#peers.get(tag);
    if (known !== undefined || Date.now() - this.#refreshedAt < REFRESH_INTERVAL_MS) return known;
    await this.#refresh();
    return this.#peers.get(tag);
  }

  /** Resolves every entry again; one resolution at a time, the last good set kept on failure. */
  #refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        const resolved = await Promise.all(
          this.#entries.map(async ({ host, port }) => {
            const addresses = isIP(host) === 0 ? await this.#lookup(host) : [host];
            return addresses.map((address) => ({ host: address, port }));
          }),
        );
        this.#peers = new Map(resolved.flat().map((peer) => [tagOf(peer), peer]));
      } catch (error) {
        this.#logger.warn({ err: error }, 'cannot resolve the peer replicas; keeping the last set');
      } finally {
        this.#refreshedAt = Date.now();
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  /** Sends the request to `peer`: its body as it arrives, or `body` when it was read already. */
  #forward(req: IncomingMessage, res: ServerResponse, peer: Peer, body?: string): void {
    const headers = { ...endToEnd(req.headers), [FORWARDED_HEADER]: this.#selfTag };
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const upstream = request({
      host: peer.host,
      port: peer.port,
      method: req.method,
      path: req.url,
      headers,
      agent: this.#agent,
    });
    const connecting = setTimeout(() => upstream.destroy(timedOut()), CONNECT_TIMEOUT_MS);
    upstream.once('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connecting);
      else socket.once('connect', () => clearTimeout(connecting));
    });
    upstream.once('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      // An SSE answer may send nothing for a while: the client needs its headers now.
      res.flushHeaders();
      answer.pipe(res);
    });
    upstream.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(connecting);
      this.#failed(res, peer, error);
    });
    // The client went away: so does the forwarded request, which cancels it on the peer.
    res.once('close', () => {
      clearTimeout(connecting);
      if (!res.writableFinished) upstream.destroy();
    });
    if (body === undefined) req.pipe(upstream);
    else upstream.end(body);
  }

  #failed(res: ServerResponse, peer: Peer, error: NodeJS.ErrnoException): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const gone = GONE.has(error.code ?? '');
    this.#logger.warn({ peer: `${peer.host}:${peer.port}`, err: error, gone }, 'forwarding failed');
    if (gone) {
      this.#peers.delete(tagOf(peer));
      replyError(
        res,
        404,
        WIRE.SERVER_ERROR,
        'Session not found: the replica that held it is gone; initialize a new one',
      );
      return;
    }
    replyError(
      res,
      502,
      WIRE.SERVER_ERROR,
      'Bad Gateway: the replica holding this session did not answer',
    );
  }
}

function tagOf(peer: Peer): string {
  return replicaTag(`${peer.host}:${peer.port}`);
}

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())),
  );
}

function timedOut(): NodeJS.ErrnoException {
  return Object.assign(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`), {
    code: 'ETIMEDOUT',
  });
}
