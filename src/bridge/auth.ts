/**
 * Optional bearer-token authentication of MCP clients (2025-11-25 basic/transports: servers
 * SHOULD authenticate all connections). The token comes from a file (a mounted Secret, re-read
 * when it rotates) or from the environment. When a token is configured but cannot be read, every
 * request is refused: failing open would serve unauthenticated clients.
 */

import type { Logger } from 'pino';
import { bearerMatches } from './guards.ts';
import { WatchedFile } from './watched-file.ts';

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

export async function createAuth(options: {
  file: string | undefined;
  envToken: string | undefined;
  logger: Logger;
}): Promise<Auth | undefined> {
  if (options.file) {
    const watched = new WatchedFile({
      path: options.file,
      parse: parseToken,
      logger: options.logger,
      what: 'bearer token',
    });
    await watched.start();
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
