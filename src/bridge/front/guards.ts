/**
 * Checks every request to the MCP endpoint passes before it reaches a session: Origin, bearer
 * token, media types, body size. Each returns a reason to refuse, or nothing.
 */

import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { Account, Bound } from '../budget.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * DNS rebinding protection (2025-11-25 basic/transports, "Security Warning": servers MUST
 * validate Origin and answer 403 to an invalid one). Without an allow list only loopback
 * origins pass; requests without an Origin (not from a browser) always do.
 */
export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  const normalized = origin.toLowerCase().replace(/\/+$/, '');
  if (allowed.length > 0) return allowed.includes(normalized);
  try {
    return LOOPBACK_HOSTS.has(new URL(normalized).hostname);
  } catch {
    return false;
  }
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether a listen address is reachable from this host only (a host name but localhost is not). */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

export function parseOrigins(list: string | undefined): string[] {
  if (!list) return [];
  return list
    .split(',')
    .map((origin) => origin.trim().toLowerCase().replace(/\/+$/, ''))
    .filter((origin) => origin !== '');
}

/** The media ranges of an Accept header, lower case, without parameters. */
function mediaRanges(accept: string): readonly string[] {
  return accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
}

/**
 * The last Accept header parsed, and its ranges: a client sends the same one with every
 * request, so it is split once rather than per request.
 */
let lastAccept = '';
let lastRanges = mediaRanges(lastAccept);

/** True when the Accept header lists every one of the media types (or a wildcard for them). */
export function accepts(req: IncomingMessage, ...types: string[]): boolean {
  const accept = req.headers.accept ?? '';
  if (accept !== lastAccept) {
    lastRanges = mediaRanges(accept);
    lastAccept = accept;
  }
  const listed = lastRanges;
  return types.every(
    (type) =>
      listed.includes(type) || listed.includes('*/*') || listed.includes(`${type.split('/')[0]}/*`),
  );
}

export function isJsonContent(req: IncomingMessage): boolean {
  const contentType = req.headers['content-type'] ?? '';
  // What clients send; anything else (parameters, other case) is parsed.
  if (contentType === 'application/json') return true;
  return contentType.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

export class BodyTooLarge extends Error {}

/** The body would pass a bound of the budget (budget.ts). */
export class OverBudget extends Error {
  readonly bound: Bound;

  constructor(bound: Bound) {
    super(`over the ${bound} budget`);
    this.bound = bound;
  }
}

/**
 * The request body, refusing more than `limit` bytes (by Content-Length or as it streams).
 * `account` holds the bytes read; the caller gives them back once it is done with the body.
 * Once the budget refuses a chunk, the rest is read and dropped rather than left unread: the
 * connection then stays usable and the client gets the answer. A body over `limit` stops the
 * reading and ends the connection. Plain listeners rather than an async iterator: this runs
 * for every POST, and the iterator costs a promise per chunk.
 */
export function readBody(req: IncomingMessage, limit: number, account: Account): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(new BodyTooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    let refused: Bound | undefined;
    const settle = (error: Error | undefined): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (error === undefined && refused === undefined)
        return resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, held));
      account.give(held);
      reject(error ?? new OverBudget(refused!));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        settle(new BodyTooLarge());
        req.destroy();
        return;
      }
      refused ??= account.admit(chunk.length);
      if (refused !== undefined) return;
      held += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = (): void => settle(undefined);
    const onError = (error: Error): void => settle(error);
    const onClose = (): void => settle(new Error('the client closed the request before its end'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** Header value, the first one if repeated. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
