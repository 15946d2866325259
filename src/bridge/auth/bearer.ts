/**
 * Optional bearer-token authentication of MCP clients (2025-11-25 basic/transports: servers
 * SHOULD authenticate all connections). The token comes from a file (a mounted Secret, re-read
 * when it rotates) or from the environment. When a token is configured but cannot be read, every
 * request is refused: failing open would serve unauthenticated clients.
 *
 * Also the discovery token: the operator's proof, in DISCOVERY_TOKEN_HEADER, that a tools/list
 * asking for the unfiltered list (UNFILTERED_LIST_META) comes from discovery. It comes from a
 * file only; while that cannot be read, no request gets the unfiltered list.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { WatchedFile } from '../watched-file.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * `Authorization: Bearer <token>` against the expected token. Both sides are hashed first so
 * the constant-time comparison runs on equal lengths and leaks neither content nor length.
 */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  const presented = match?.[1] ?? '';
  return timingSafeEqual(digest(presented), digest(expected)) && match !== null;
}

/**
 * A secret presented in a header of its own (the discovery token) against the expected one,
 * compared like bearerMatches: over SHA-256 digests, in constant time.
 */
export function secretMatches(presented: string | undefined, expected: string): boolean {
  const value = presented?.trim() ?? '';
  return timingSafeEqual(digest(value), digest(expected)) && value !== '';
}

export type AuthVerdict = 'ok' | 'denied' | 'unavailable';

export interface Auth {
  check(authorization: string | undefined): AuthVerdict;
  stop(): void;
}

function parseToken(text: string): string {
  const token = text.trim();
  if (token === '') throw new Error('the token file is empty');
  if (/\s/.test(token)) throw new Error('the token contains whitespace');
  return token;
}

/**
 * A token file, re-read when it changes (a mounted Secret is updated in place). Deleting or
 * emptying it revokes the token: nothing is accepted until a token can be read again.
 */
async function watchTokenFile(
  path: string,
  logger: Logger,
  what: string,
): Promise<WatchedFile<string>> {
  const watched = new WatchedFile({ path, parse: parseToken, logger, what, failsClosed: true });
  await watched.start();
  return watched;
}

export async function createAuth(options: {
  file: string | undefined;
  envToken: string | undefined;
  logger: Logger;
}): Promise<Auth | undefined> {
  if (options.file) {
    const watched = await watchTokenFile(options.file, options.logger, 'bearer token');
    return {
      check: (authorization) => {
        const token = watched.value;
        if (token === undefined) return 'unavailable';
        return bearerMatches(authorization, token) ? 'ok' : 'denied';
      },
      stop: () => watched.stop(),
    };
  }
  if (options.envToken !== undefined && options.envToken !== '') {
    const token = parseToken(options.envToken);
    return {
      check: (authorization) => (bearerMatches(authorization, token) ? 'ok' : 'denied'),
      stop: () => undefined,
    };
  }
  return undefined;
}

export interface DiscoveryToken {
  /** Whether the value of DISCOVERY_TOKEN_HEADER is the discovery token. */
  matches(presented: string | undefined): boolean;
  stop(): void;
}

export async function createDiscoveryToken(options: {
  file: string | undefined;
  logger: Logger;
}): Promise<DiscoveryToken | undefined> {
  if (!options.file) return undefined;
  const watched = await watchTokenFile(options.file, options.logger, 'discovery token');
  return {
    matches: (presented) => {
      const token = watched.value;
      return token !== undefined && secretMatches(presented, token);
    },
    stop: () => watched.stop(),
  };
}
